import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { unpack } from '@publint/pack';
import { sha256 } from './cache.js';
import { runPnpm } from './workspace.js';

export interface PackageManifest {
  name: string;
  version: string;
  license?: string;
  private?: boolean;
  exports?: unknown;
  imports?: unknown;
  main?: string;
  types?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface Tarball {
  readonly name: string;
  readonly version: string;
  /** Where the tarball sits, named by its content hash (`<name>-<hash12>.tgz`). */
  readonly file: string;
  readonly hash: string;
  readonly bytes: Uint8Array;
  /** Packed files by path inside the package (`dist/index.js`, `package.json`, …). */
  readonly files: ReadonlyMap<string, Uint8Array>;
  readonly manifest: PackageManifest;
}

const slug = (name: string) => name.replace(/^@/, '').replace(/\//g, '-');

/**
 * Packs the named workspace packages with pnpm — the same code path `pnpm publish` takes: the
 * `workspace:` ranges are replaced and the root `.pnpmfile.cjs` `beforePacking` hook runs — and
 * reads each tarball back. One recursive pnpm call packs them all.
 */
export async function packPackages(
  root: string,
  names: readonly string[],
  destination: string,
): Promise<Tarball[]> {
  const staging = path.join(destination, `.staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    const filters = names.flatMap((name) => ['--filter', name]);
    const { stdout } = runPnpm(
      ['--recursive', ...filters, 'pack', '--pack-destination', staging, '--json'],
      { cwd: root },
    );
    const reported = JSON.parse(stdout) as { name: string; version: string; filename: string }[];
    const tarballs: Tarball[] = [];
    for (const entry of Array.isArray(reported) ? reported : [reported]) {
      const bytes = new Uint8Array(readFileSync(entry.filename));
      const hash = sha256(bytes);
      const file = path.join(destination, `${slug(entry.name)}-${hash.slice(0, 12)}.tgz`);
      renameSync(entry.filename, file);
      const unpacked = await unpack(bytes);
      const prefix = `${unpacked.rootDir}/`;
      const files = new Map<string, Uint8Array>();
      for (const packed of unpacked.files) {
        files.set(
          packed.name.startsWith(prefix) ? packed.name.slice(prefix.length) : packed.name,
          packed.data,
        );
      }
      const manifestBytes = files.get('package.json');
      if (!manifestBytes) throw new Error(`${entry.name}: the tarball has no package.json`);
      const manifest = JSON.parse(Buffer.from(manifestBytes).toString('utf8')) as PackageManifest;
      tarballs.push({
        name: entry.name,
        version: entry.version,
        file,
        hash,
        bytes,
        files,
        manifest,
      });
    }
    const missing = names.filter((name) => !tarballs.some((tarball) => tarball.name === name));
    if (missing.length > 0)
      throw new Error(`pnpm pack produced no tarball for ${missing.join(', ')}`);
    return tarballs.sort((left, right) => left.name.localeCompare(right.name));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes tarballs of earlier runs (anything not in `keep`). */
export function pruneTarballs(destination: string, keep: readonly Tarball[]): void {
  const wanted = new Set(keep.map((tarball) => path.basename(tarball.file)));
  for (const file of readdirSync(destination)) {
    if (file.endsWith('.tgz') && !wanted.has(file)) rmSync(path.join(destination, file));
  }
}

export const textOf = (tarball: Tarball, file: string): string | undefined => {
  const bytes = tarball.files.get(file);
  return bytes ? Buffer.from(bytes).toString('utf8') : undefined;
};

export { slug as packageSlug };
