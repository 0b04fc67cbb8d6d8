import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintTarball } from './lint.js';
import type { Tarball } from './pack.js';

const sandbox = mkdtempSync(path.join(tmpdir(), 'pack-check-lint-'));
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

/** A real tarball made by `npm pack` (offline, no scripts) from the given files. */
function tarballOf(name: string, files: Record<string, string>): Tarball {
  const folder = path.join(sandbox, name);
  mkdirSync(folder, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(folder, file), text);
  const packed = spawnSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', folder],
    {
      cwd: folder,
      encoding: 'utf8',
    },
  );
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  const bytes = new Uint8Array(readFileSync(path.join(folder, filename)));
  return {
    name,
    version: '1.0.0',
    file: filename,
    hash: '',
    bytes,
    files: new Map(),
    manifest: { name, version: '1.0.0' },
  };
}

const manifest = (exports: unknown) =>
  JSON.stringify({
    name: 'demo',
    version: '1.0.0',
    license: 'MIT',
    type: 'module',
    sideEffects: false,
    exports,
    main: './index.js',
    types: './index.d.ts',
    engines: { node: '>=20.12' },
  });

describe('lintTarball', () => {
  it('finds nothing in a clean ESM package with types and a default condition', async () => {
    const tarball = tarballOf('clean', {
      'package.json': manifest({ '.': { types: './index.d.ts', default: './index.js' } }),
      'index.js': 'export const answer = 42;\n',
      'index.d.ts': 'export declare const answer = 42;\n',
      LICENSE: 'MIT',
      'README.md': '# demo',
    });
    expect(await lintTarball(tarball)).toEqual([]);
  });

  it('reports an ESM implementation typed as CommonJS (attw, under node16 from ESM)', async () => {
    const tarball = tarballOf('masquerading', {
      'package.json': manifest({ '.': { types: './index.d.cts', default: './index.js' } }),
      'index.js': 'export const answer = 42;\n',
      'index.d.cts': 'export declare const answer = 42;\n',
      LICENSE: 'MIT',
      'README.md': '# demo',
    });
    const problems = await lintTarball(tarball);
    expect(problems.some((problem) => problem.startsWith('attw FalseCJS'))).toBe(true);
  });

  it('reports an export whose file is not in the tarball (publint)', async () => {
    const tarball = tarballOf('missing', {
      'package.json': manifest({
        '.': { types: './index.d.ts', default: './index.js' },
        './extra': { types: './extra.d.ts', default: './extra.js' },
      }),
      'index.js': 'export const answer = 42;\n',
      'index.d.ts': 'export declare const answer = 42;\n',
      LICENSE: 'MIT',
      'README.md': '# demo',
    });
    const problems = await lintTarball(tarball);
    expect(
      problems.some((problem) => problem.startsWith('publint error FILE_DOES_NOT_EXIST')),
    ).toBe(true);
  });
});
