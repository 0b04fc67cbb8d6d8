import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRipgrep, type SearchArgs, searchWithNode, searchWithRipgrep } from './search-files.js';

// ripgrep is optional for users (the tool falls back to a Node walk); where it is installed, both
// paths must answer the same, so the model sees one behaviour whatever the machine has.
const rg = await findRipgrep();

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hermes-search-'));
  const files: Record<string, string | Buffer> = {
    'B.txt': 'needle upper\n',
    'a.txt': 'no match\nneedle one\nneedle two\n',
    'a/b.txt': 'needle nested\n',
    'a/c.ts': 'const needle = 1;\n',
    'a-b/d.ts': 'needle dash\n',
    '_z/e.md': 'Needle case\n',
    '.hidden/f.txt': 'needle hidden\n',
    '.env.example': 'needle dotfile\n',
    'ignored.log': 'needle ignored by .gitignore\n',
    '.gitignore': '*.log\n',
    'node_modules/dep/g.ts': 'needle dependency\n',
    '.git/HEAD': 'needle git\n',
    'bin.dat': Buffer.from([0, 1, 2, 110, 101, 101, 100, 108, 101, 0]),
  };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function args(overrides: Partial<SearchArgs>): SearchArgs {
  return {
    pattern: 'needle',
    target: 'content',
    root,
    relativeTo: root,
    glob: undefined,
    limit: 50,
    caseInsensitive: false,
    signal: new AbortController().signal,
    ...overrides,
  };
}

const cases: Array<[string, Partial<SearchArgs>]> = [
  ['content', {}],
  ['content, case-insensitive', { caseInsensitive: true }],
  ['content under a file glob', { glob: '*.ts' }],
  ['content with a limit that truncates', { limit: 3 }],
  ['files by a base-name glob', { target: 'files', pattern: '*.txt' }],
  ['files by a path glob', { target: 'files', pattern: 'a/**' }],
  ['files, every one', { target: 'files', pattern: '*' }],
  ['files with a limit that truncates', { target: 'files', pattern: '*', limit: 2 }],
];

describe('search_files without ripgrep', () => {
  it('lists matches depth first in byte order, with hidden and ignored files, never .git or node_modules', async () => {
    const { results, truncated } = await searchWithNode(args({}));
    expect(truncated).toBe(false);
    expect(results.map((match) => (match as { path: string }).path)).toEqual([
      '.env.example',
      '.hidden/f.txt',
      'B.txt',
      'a/b.txt',
      'a/c.ts',
      'a-b/d.ts',
      'a.txt',
      'a.txt',
      'ignored.log',
    ]);
  });
});

describe.skipIf(rg === undefined)('search_files with ripgrep on PATH', () => {
  it.each(cases)('answers like the Node walk: %s', async (_name, overrides) => {
    const expected = await searchWithNode(args(overrides));
    const actual = await searchWithRipgrep(rg as string, args(overrides));
    expect(actual).toEqual(expected);
  });

  it('refuses a pattern its regex dialect lacks with an error the tool can fall back on', async () => {
    await expect(
      searchWithRipgrep(rg as string, args({ pattern: 'needle(?= one)' })),
    ).rejects.toThrow(/regex/i);
  });
});
