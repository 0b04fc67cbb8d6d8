import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTypecheck, type TypecheckFile } from './typecheck.js';

const require = createRequire(import.meta.url);
const sandbox = mkdtempSync(path.join(tmpdir(), 'pack-check-types-'));
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

/**
 * A scratch project as the check lays it out: two published packages whose public types reach a
 * third-party package with broken declarations (standing in for drizzle-orm), and a consumer
 * file per package that imports its public API.
 */
function scratchProject(): { directory: string; files: TypecheckFile[] } {
  const directory = path.join(sandbox, 'scratch');
  const modules = path.join(directory, 'node_modules');
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(directory, file)), { recursive: true });
    writeFileSync(path.join(directory, file), text);
  };
  write('package.json', '{"type":"module"}');
  write(
    'node_modules/drizzle-orm/package.json',
    '{"name":"drizzle-orm","version":"0.45.4","types":"./index.d.ts"}',
  );
  write(
    'node_modules/drizzle-orm/index.d.ts',
    "import type { Missing } from 'gel';\nexport type Table = { name: string; gel: Missing };\n",
  );
  for (const name of ['session-store', 'other']) {
    write(
      `node_modules/@hermes/${name}/package.json`,
      `{"name":"@hermes/${name}","version":"0.0.0","type":"module","exports":{".":{"types":"./index.d.ts","default":"./index.js"}}}`,
    );
    write(
      `node_modules/@hermes/${name}/index.d.ts`,
      "import type { Table } from 'drizzle-orm';\nexport declare const table: Table;\n",
    );
    write(
      `checks/${name}/public-api.ts`,
      `import * as api from '@hermes/${name}';\nexport { api };\n`,
    );
  }
  mkdirSync(path.join(modules, '@types'), { recursive: true });
  symlinkSync(
    path.dirname(require.resolve('@types/node/package.json')),
    path.join(modules, '@types', 'node'),
  );
  const files = ['session-store', 'other'].map((name) => ({
    file: path.join(directory, 'checks', name, 'public-api.ts'),
    packageName: `@hermes/${name}`,
    describe: () => `import * from '@hermes/${name}'`,
  }));
  return { directory, files };
}

describe('runTypecheck', () => {
  const { directory, files } = scratchProject();
  const input = {
    scratchDirectory: directory,
    installKey: 'fixture',
    files,
    dependencies: new Map([
      ['@hermes/session-store', ['drizzle-orm']],
      ['@hermes/other', ['drizzle-orm']],
    ]),
    cacheDirectory: path.join(sandbox, 'cache'),
    useCache: false,
  };

  it('blames errors in a dependency’s declarations on the packages that depend on it', () => {
    const result = runTypecheck({ ...input, documentsSkipLibCheck: new Set() });
    for (const name of ['@hermes/session-store', '@hermes/other']) {
      expect(result.errors.get(name)).toEqual([
        "types (in drizzle-orm, a dependency): node_modules/drizzle-orm/index.d.ts(1,30): TS2307 Cannot find module 'gel' or its corresponding type declarations.",
      ]);
    }
    expect(result.general).toEqual([]);
  }, 120_000);

  it('tolerates drizzle-orm’s errors for session-store only, and only while its README documents skipLibCheck', () => {
    const result = runTypecheck({
      ...input,
      documentsSkipLibCheck: new Set(['@hermes/session-store', '@hermes/other']),
    });
    expect(result.errors.get('@hermes/session-store')).toBeUndefined();
    expect(result.notes.get('@hermes/session-store')).toEqual([
      "1 error(s) inside drizzle-orm's own declarations tolerated: the README documents skipLibCheck",
    ]);
    expect(result.errors.get('@hermes/other')).toHaveLength(1); // the exception is not a loophole
  }, 120_000);

  it('does not check drizzle-orm’s declarations at all when session-store is its only dependant and documents skipLibCheck', () => {
    const result = runTypecheck({
      ...input,
      files: files.filter((file) => file.packageName === '@hermes/session-store'),
      dependencies: new Map([['@hermes/session-store', ['drizzle-orm']]]),
      documentsSkipLibCheck: new Set(['@hermes/session-store']),
    });
    expect(result.errors.size).toBe(0);
    expect(result.notes.get('@hermes/session-store')).toEqual([
      "drizzle-orm's own declarations are not checked: the README documents skipLibCheck",
    ]);
  }, 120_000);
});
