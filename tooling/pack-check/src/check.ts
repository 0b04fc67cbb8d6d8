import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  installedPackages,
  installLineProblems,
  type ParsedReadme,
  parseReadme,
} from '@hermes/testkit/readme';
import ts from 'typescript';
import { acquireLock, defaultCacheDirectory, readJson } from './cache.js';
import {
  checkEntryPoints,
  type MaterialisedExample,
  mapLimited,
  materialiseExample,
  runExample,
} from './examples.js';
import { lintTarballCached } from './lint.js';
import { javascriptEntryPoints, manifestProblems, typedEntryPoints } from './manifest.js';
import { packageSlug, packPackages, pruneTarballs, type Tarball, textOf } from './pack.js';
import { npmVersion, prepareScratchProject, type ThirdPartyPin } from './scratch.js';
import { runTypecheck, type TypecheckFile } from './typecheck.js';
import {
  firstReleaseProblem,
  listWorkspacePackages,
  pendingBumps,
  type WorkspacePackage,
} from './workspace.js';

export interface CheckOptions {
  readonly root: string;
  readonly cacheDirectory?: string;
  /** false: recompute everything (cached results and the scratch install are not reused). */
  readonly useCache?: boolean;
  /** Report only these packages (all public packages are still packed and installed). */
  readonly only?: readonly string[];
  readonly log?: (line: string) => void;
}

export interface PackageReport {
  readonly name: string;
  readonly version: string;
  readonly problems: string[];
  readonly notes: string[];
  examples: number;
}

export interface CheckResult {
  readonly packages: readonly PackageReport[];
  /** Problems no single package owns (the scratch install, the type-check's own options). */
  readonly general: readonly string[];
  readonly seconds: number;
}

const require = createRequire(import.meta.url);

/** The installed version of one of the checker's own dependencies (exports may hide package.json). */
function versionOf(packageName: string): string {
  let folder = path.dirname(
    require.resolve(packageName === '@types/node' ? '@types/node/package.json' : packageName),
  );
  for (;;) {
    const manifest = readJson<{ name?: string; version?: string }>(
      path.join(folder, 'package.json'),
    );
    if (manifest?.name === packageName && manifest.version) return manifest.version;
    const parent = path.dirname(folder);
    if (parent === folder) return 'unknown';
    folder = parent;
  }
}

/** The version of `dependency` the workspace installed for `directory` (pnpm links it there). */
function workspaceResolvedVersion(
  root: string,
  directory: string,
  dependency: string,
): string | undefined {
  for (const base of [directory, root]) {
    const manifest = readJson<{ version?: string }>(
      path.join(base, 'node_modules', ...dependency.split('/'), 'package.json'),
    );
    if (manifest?.version) return manifest.version;
  }
  return undefined;
}

function declaredDependencies(directory: string): Set<string> {
  const manifest = readJson<Record<string, Record<string, string> | undefined>>(
    path.join(directory, 'package.json'),
  );
  const names = new Set<string>();
  for (const field of [
    'dependencies',
    'devDependencies',
    'peerDependencies',
    'optionalDependencies',
  ]) {
    for (const name of Object.keys(manifest?.[field] ?? {})) names.add(name);
  }
  return names;
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** Lint results nobody has read for 30 days belong to tarballs that no longer exist. */
function pruneOldResults(folder: string): void {
  if (!existsSync(folder)) return;
  const cutoff = Date.now() - 30 * 24 * 3600_000;
  for (const file of readdirSync(folder)) {
    const full = path.join(folder, file);
    if (statSync(full).mtimeMs < cutoff) rmSync(full, { force: true });
  }
}

export async function checkPackages(options: CheckOptions): Promise<CheckResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const useCache = options.useCache ?? true;
  const cacheDirectory = options.cacheDirectory ?? defaultCacheDirectory();
  const release = await acquireLock(cacheDirectory, {
    onWait: (pid) => log(`waiting for another package check (pid ${pid}) to finish`),
  });
  try {
    return await checkLocked({ ...options, cacheDirectory, useCache, log }, started);
  } finally {
    release();
  }
}

async function checkLocked(
  options: Required<Omit<CheckOptions, 'only'>> & Pick<CheckOptions, 'only'>,
  started: number,
): Promise<CheckResult> {
  const { root, cacheDirectory, useCache, log } = options;
  const general: string[] = [];
  const workspace = listWorkspacePackages(root);
  const publicPackages = workspace.filter((entry) => !entry.private);
  const byName = new Map<string, WorkspacePackage>(
    publicPackages.map((entry) => [entry.name, entry]),
  );
  const privateNames = new Set(
    workspace.filter((entry) => entry.private).map((entry) => entry.name),
  );
  const reported = new Set(options.only && options.only.length > 0 ? options.only : byName.keys());
  for (const name of reported) {
    if (!byName.has(name)) throw new Error(`${name} is not a public package of this workspace`);
  }

  let step = performance.now();
  const tarballFolder = path.join(cacheDirectory, 'tarballs');
  mkdirSync(tarballFolder, { recursive: true });
  const tarballs = await packPackages(root, [...byName.keys()], tarballFolder);
  pruneTarballs(tarballFolder, tarballs);
  log(`packed ${tarballs.length} public packages with pnpm (${seconds(step)})`);

  const reports = new Map<string, PackageReport>();
  for (const tarball of tarballs) {
    reports.set(tarball.name, {
      name: tarball.name,
      version: tarball.version,
      problems: [],
      notes: [],
      examples: 0,
    });
  }
  const reportOf = (name: string) => reports.get(name) as PackageReport;

  // The tarball's own manifest and files, and the version plan.
  const rootLicense = readFileSync(path.join(root, 'LICENSE'), 'utf8');
  const pending = pendingBumps(root);
  const readmes = new Map<string, ParsedReadme>();
  for (const tarball of tarballs) {
    const report = reportOf(tarball.name);
    const readmeFile = [...tarball.files.keys()].find((file) => /^readme(\.md)?$/i.test(file));
    const readme = readmeFile ? textOf(tarball, readmeFile) : undefined;
    report.problems.push(
      ...manifestProblems(tarball.manifest, {
        publicPackages: new Set(byName.keys()),
        privatePackages: privateNames,
        rootLicense,
        licenseFile: textOf(tarball, 'LICENSE'),
        readme,
      }),
    );
    const plan = firstReleaseProblem(byName.get(tarball.name) as WorkspacePackage, pending);
    if (plan) report.problems.push(plan);
    if (readme !== undefined) readmes.set(tarball.name, parseReadme(readme));
  }

  // What each README installs and imports; the third-party versions to install.
  const pins = new Map<string, string>();
  const conflicting = new Set<string>();
  const pin = (name: string, version: string) => {
    const existing = pins.get(name);
    if (existing !== undefined && existing !== version) conflicting.add(name);
    else pins.set(name, version);
  };
  for (const tarball of tarballs) {
    const directory = (byName.get(tarball.name) as WorkspacePackage).directory;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
      for (const dependency of Object.keys(tarball.manifest[field] ?? {})) {
        if (byName.has(dependency)) continue;
        const version = workspaceResolvedVersion(root, directory, dependency);
        if (version) pin(dependency, version);
      }
    }
  }
  for (const tarball of tarballs) {
    const report = reportOf(tarball.name);
    const readme = readmes.get(tarball.name);
    if (!readme) continue;
    const directory = (byName.get(tarball.name) as WorkspacePackage).directory;
    const installed = installedPackages(readme);
    report.problems.push(...installLineProblems(readme, { packageName: tarball.name }));
    const declared = declaredDependencies(directory);
    for (const name of installed) {
      if (byName.has(name) || pins.has(name)) continue;
      if (name.startsWith('@hermes/')) {
        report.problems.push(
          `README: the install line names ${name}, which is not a public package`,
        );
        continue;
      }
      const version = declared.has(name)
        ? workspaceResolvedVersion(root, directory, name)
        : undefined;
      if (version) pin(name, version);
      else {
        report.problems.push(
          `README: the install line names ${name}, which ${path.relative(root, directory)}/package.json does not declare — add it (devDependencies) so the check installs the version the package is tested with`,
        );
      }
    }
  }
  for (const name of conflicting) pins.delete(name);
  pin('@types/node', versionOf('@types/node'));

  const finish = (): CheckResult => ({
    packages: [...reports.values()].filter((report) => reported.has(report.name)),
    general,
    seconds: (performance.now() - started) / 1000,
  });

  // The scratch project — every tarball installed with npm, outside the workspace — installs in a
  // child process while publint and attw run here.
  const installStarted = performance.now();
  const installing = prepareScratchProject({
    root,
    directory: path.join(cacheDirectory, 'scratch'),
    tarballs,
    pins: [...pins].map(([name, version]): ThirdPartyPin => ({ name, version })),
    npmVersion: npmVersion(),
    useCache,
  }).then(
    (scratch) => ({ scratch, took: seconds(installStarted) }),
    (error: unknown) => ({ error }),
  );

  // publint and attw, from the tarballs alone.
  step = performance.now();
  const toolVersions = `publint@${versionOf('publint')} attw-core@${versionOf('@arethetypeswrong/core')}`;
  let lintHits = 0;
  for (const tarball of tarballs) {
    const linted = await lintTarballCached(tarball, { cacheDirectory, toolVersions, useCache });
    if (linted.cached) lintHits += 1;
    reportOf(tarball.name).problems.push(...linted.problems);
  }
  pruneOldResults(path.join(cacheDirectory, 'lint'));
  log(`publint and attw (esm-only) on each tarball (${seconds(step)}, ${lintHits} cached)`);

  const installed = await installing;
  if ('error' in installed) {
    // The problems found so far (a dependency on a private package, say) usually explain it.
    const { error } = installed;
    general.push(
      `install: ${error instanceof Error ? error.message : String(error)}\n    (the type-check and the examples need the install; they did not run)`,
    );
    return finish();
  }
  const { scratch } = installed;
  log(
    scratch.reused
      ? `scratch project reused: tarballs and pins unchanged (${installed.took})`
      : `npm install of the tarballs into ${scratch.directory} (${installed.took})`,
  );
  for (const note of scratch.notes) log(`  ${note}`);

  // Files the type-check and the runs read: one that imports every typed entry point, and the
  // README examples.
  const checksFolder = path.join(scratch.directory, 'checks');
  rmSync(checksFolder, { recursive: true, force: true });
  const typecheckFiles: TypecheckFile[] = [];
  const examples: MaterialisedExample[] = [];
  const entrySpecifiers = new Map<string, string>();
  const documentsSkipLibCheck = new Set<string>();
  for (const tarball of tarballs) {
    const folder = path.join(checksFolder, packageSlug(tarball.name));
    mkdirSync(folder, { recursive: true });
    const entries = typedEntryPoints(tarball.manifest);
    const specifiers = entries.map((entry) =>
      entry === '.' ? tarball.name : `${tarball.name}/${entry.slice(2)}`,
    );
    for (const entry of javascriptEntryPoints(tarball.manifest)) {
      entrySpecifiers.set(
        entry === '.' ? tarball.name : `${tarball.name}/${entry.slice(2)}`,
        tarball.name,
      );
    }
    if (specifiers.length > 0) {
      const apiFile = path.join(folder, 'public-api.ts');
      writeFileSync(
        apiFile,
        `${specifiers.map((specifier, index) => `import * as entry${index} from '${specifier}';`).join('\n')}\nexport const entryPoints = [${specifiers.map((_, index) => `entry${index}`).join(', ')}];\n`,
      );
      const lines = specifiers;
      typecheckFiles.push({
        file: apiFile,
        packageName: tarball.name,
        describe: (line) => `import * from '${lines[line - 1] ?? tarball.name}'`,
      });
    } else {
      reportOf(tarball.name).problems.push('types: the package exports no typed entry point');
    }
    const readme = readmes.get(tarball.name);
    if (readme && /skipLibCheck/.test(textOf(tarball, 'README.md') ?? '')) {
      documentsSkipLibCheck.add(tarball.name);
    }
    for (const example of readme?.examples ?? []) {
      const materialised = materialiseExample(folder, tarball.name, example);
      examples.push(materialised);
      if (example.language === 'ts') {
        typecheckFiles.push({
          file: materialised.sourceFile,
          packageName: tarball.name,
          describe: (line, column) => `README.md:${example.line + line}:${column}`,
        });
      }
    }
  }

  step = performance.now();
  const typecheck = runTypecheck({
    scratchDirectory: scratch.directory,
    installKey: scratch.key,
    files: typecheckFiles,
    dependencies: new Map(
      tarballs.map((tarball) => [
        tarball.name,
        Object.keys({
          ...tarball.manifest.dependencies,
          ...tarball.manifest.peerDependencies,
          ...tarball.manifest.optionalDependencies,
        }),
      ]),
    ),
    documentsSkipLibCheck,
    cacheDirectory,
    useCache,
  });
  for (const [name, errors] of typecheck.errors) reports.get(name)?.problems.push(...errors);
  for (const [name, notes] of typecheck.notes) reports.get(name)?.notes.push(...notes);
  general.push(...typecheck.general.map((message) => `types: ${message}`));
  log(
    `type-check with TypeScript ${ts.version}, strict, NodeNext, no skipLibCheck (${seconds(step)}${typecheck.cached ? ', cached: inputs unchanged' : ''})`,
  );

  step = performance.now();
  for (const [specifier, problems] of checkEntryPoints(scratch.directory, [
    ...entrySpecifiers.keys(),
  ])) {
    const owner = entrySpecifiers.get(specifier) as string;
    reportOf(owner).problems.push(...problems.map((problem) => `${specifier}: ${problem}`));
  }
  const selected = examples.filter((example) => reported.has(example.packageName));
  const outcomes = await mapLimited(selected, 2, (example) => runExample(example));
  selected.forEach((example, index) => {
    const report = reportOf(example.packageName);
    report.examples += 1;
    report.problems.push(...(outcomes[index] ?? []));
  });
  log(
    `import()/require() of each entry point and ${selected.length} README examples (${seconds(step)})`,
  );

  return finish();
}

/** Which stages a package passed, for the report's summary line. */
export function describePassing(report: PackageReport): string {
  const examples = `${report.examples} README example${report.examples === 1 ? '' : 's'}`;
  return `publint, attw, strict types, import/require, ${examples}`;
}

export type { Tarball };
