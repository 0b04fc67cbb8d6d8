import type { PackageManifest } from './pack.js';

/** The export condition that points workspace tools at `src/`, which is never published. */
export const SOURCE_CONDITION = '@hermes/source';

const LOCAL_PROTOCOLS = ['workspace:', 'link:', 'file:', 'catalog:', 'portal:'];
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const;

function conditionPaths(node: unknown, condition: string, at: string): string[] {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node as Record<string, unknown>).flatMap(([key, value]) =>
    key === condition ? [`${at}["${key}"]`] : conditionPaths(value, condition, `${at}["${key}"]`),
  );
}

/** Subpaths of `exports` that lead to JavaScript (not JSON, not `./package.json`). */
export function javascriptEntryPoints(manifest: PackageManifest): string[] {
  const { exports } = manifest;
  if (exports === undefined) return manifest.main ? ['.'] : [];
  if (typeof exports === 'string' || Array.isArray(exports)) return ['.'];
  if (exports === null || typeof exports !== 'object') return [];
  const keys = Object.keys(exports);
  if (!keys.every((key) => key.startsWith('.'))) return ['.']; // a bare conditions object
  return keys.filter((key) => {
    if (key === './package.json' || key.includes('*')) return false;
    const targets = JSON.stringify((exports as Record<string, unknown>)[key]);
    return /\.(m|c)?js"/.test(targets);
  });
}

/** Subpaths whose export names a `types` target (what a TypeScript consumer imports). */
export function typedEntryPoints(manifest: PackageManifest): string[] {
  return javascriptEntryPoints(manifest).filter((subpath) => {
    if (subpath === '.' && manifest.types) return true;
    const exports = manifest.exports as Record<string, unknown> | undefined;
    return exports !== undefined && JSON.stringify(exports[subpath] ?? exports).includes('.d.');
  });
}

export interface ManifestContext {
  /** Names of the workspace's public packages. */
  readonly publicPackages: ReadonlySet<string>;
  /** Names of the workspace's private packages (never published). */
  readonly privatePackages: ReadonlySet<string>;
  readonly rootLicense: string;
  readonly licenseFile: string | undefined;
  readonly readme: string | undefined;
}

/** What a tarball's own files and manifest must satisfy before anything is installed. */
export function manifestProblems(manifest: PackageManifest, context: ManifestContext): string[] {
  const problems: string[] = [];
  for (const field of ['exports', 'imports'] as const) {
    for (const at of conditionPaths(manifest[field], SOURCE_CONDITION, field)) {
      problems.push(
        `manifest: ${at} is published; it points at src/, which the tarball does not contain (the root .pnpmfile.cjs strips it when pnpm packs — publish with pnpm)`,
      );
    }
  }
  for (const field of DEPENDENCY_FIELDS) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      if (LOCAL_PROTOCOLS.some((protocol) => range.startsWith(protocol))) {
        problems.push(
          `manifest: ${field}["${dependency}"] is "${range}" in the tarball; strangers cannot resolve it (publish with pnpm)`,
        );
      }
      if (context.privatePackages.has(dependency)) {
        problems.push(
          `manifest: ${field}["${dependency}"] is a private workspace package that is never published`,
        );
      } else if (dependency.startsWith('@hermes/') && !context.publicPackages.has(dependency)) {
        problems.push(
          `manifest: ${field}["${dependency}"] is not a package of this workspace, so it cannot be published with it`,
        );
      }
    }
  }
  if (manifest.devDependencies && Object.keys(manifest.devDependencies).length > 0) {
    const leaked = Object.keys(manifest.devDependencies).filter(
      (name) => context.privatePackages.has(name) || context.publicPackages.has(name),
    );
    problems.push(
      `manifest: devDependencies are published${leaked.length > 0 ? ` (${leaked.join(', ')} would read as unpublished workspace versions)` : ''}; the root .pnpmfile.cjs removes them when pnpm packs`,
    );
  }
  if (manifest.license !== 'MIT') {
    problems.push(`manifest: "license" is ${JSON.stringify(manifest.license)}, expected "MIT"`);
  }
  if (context.licenseFile === undefined) {
    problems.push(
      'LICENSE: the tarball has none — pnpm packs the root LICENSE into every package that has no LICENSE of its own (publish with pnpm)',
    );
  } else if (context.licenseFile !== context.rootLicense) {
    problems.push(
      "LICENSE: the tarball's LICENSE differs from the root LICENSE — delete the package's own copy (pnpm packs the root one)",
    );
  }
  if (context.readme === undefined) problems.push('README: the tarball has no README.md');
  return problems;
}
