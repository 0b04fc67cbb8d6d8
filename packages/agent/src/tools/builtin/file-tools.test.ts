import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolContext } from '../../../test/fixtures.js';
import { executeTool, type Tool } from '../define-tool.js';
import { patchTool } from './patch.js';
import { READ_FILE_MAX_BYTES, readFileTool } from './read-file.js';
import { searchFilesTool } from './search-files.js';
import { writeFileTool } from './write-file.js';

type Context = Awaited<ReturnType<typeof toolContext>>;

async function call(tool: Tool, args: unknown, context: Context) {
  const outcome = await executeTool(tool, JSON.stringify(args), context);
  return { ...outcome, value: JSON.parse(outcome.content) as Record<string, unknown> };
}

describe('read_file', () => {
  it('numbers lines and pages with offset and limit, relative to the turn’s cwd', async () => {
    const context = await toolContext();
    await writeFile(path.join(context.cwd, 'a.txt'), 'one\ntwo\nthree\nfour\n');
    const page = await call(readFileTool, { path: 'a.txt', offset: 2, limit: 2 }, context);
    expect(page.value).toEqual({
      path: 'a.txt',
      content: '     2|two\n     3|three',
      total_lines: 4,
      lines_shown: '2-3',
      truncated: true,
      next_offset: 4,
    });
  });

  it('refuses binary files, directories, missing files and files over the size cap', async () => {
    const context = await toolContext();
    await writeFile(path.join(context.cwd, 'bin'), Buffer.from([1, 2, 0, 3]));
    await writeFile(path.join(context.cwd, 'huge'), '');
    await truncate(path.join(context.cwd, 'huge'), READ_FILE_MAX_BYTES + 1);
    expect((await call(readFileTool, { path: 'bin' }, context)).value.error).toBe(
      'bin is a binary file; read_file only reads text',
    );
    expect((await call(readFileTool, { path: '.' }, context)).value.error).toBe(
      '. is a directory, not a file',
    );
    expect((await call(readFileTool, { path: 'nope.txt' }, context)).value.error).toBe(
      'File not found: nope.txt',
    );
    expect((await call(readFileTool, { path: 'huge' }, context)).value.error).toMatch(
      /^huge is 10485761 bytes, over the 10485760-byte limit/,
    );
  });
});

describe('write_file and patch', () => {
  it('writes a file with its folders, then patches a unique match', async () => {
    const context = await toolContext();
    const written = await call(
      writeFileTool,
      { path: 'src/deep/x.ts', content: 'let a = 1;\nlet b = 1;\n' },
      context,
    );
    expect(written.value).toEqual({ path: 'src/deep/x.ts', bytes_written: 22 });
    const ambiguous = await call(
      patchTool,
      { path: 'src/deep/x.ts', old_string: '= 1;', new_string: '= 2;' },
      context,
    );
    expect(ambiguous.value.error).toBe(
      'old_string matches 2 places in src/deep/x.ts; include more surrounding text to make it unique, or set replace_all',
    );
    const unique = await call(
      patchTool,
      { path: 'src/deep/x.ts', old_string: 'let b = 1;', new_string: 'let b = $&2;' },
      context,
    );
    expect(unique.value).toEqual({ path: 'src/deep/x.ts', replacements: 1 });
    expect(await readFile(path.join(context.cwd, 'src/deep/x.ts'), 'utf8')).toBe(
      'let a = 1;\nlet b = $&2;\n',
    );
    const all = await call(
      patchTool,
      { path: 'src/deep/x.ts', old_string: 'let', new_string: 'const', replace_all: true },
      context,
    );
    expect(all.value.replacements).toBe(2);
    const missing = await call(
      patchTool,
      { path: 'src/deep/x.ts', old_string: 'var', new_string: 'x' },
      context,
    );
    expect(missing.value.error).toBe('old_string was not found in src/deep/x.ts');
  });
});

describe('search_files', () => {
  it('finds content by regex and files by glob, skipping node_modules', async () => {
    const context = await toolContext();
    await mkdir(path.join(context.cwd, 'src'), { recursive: true });
    await mkdir(path.join(context.cwd, 'node_modules/dep'), { recursive: true });
    await writeFile(path.join(context.cwd, 'src/a.ts'), 'export const alpha = 1;\n// TODO later\n');
    await writeFile(path.join(context.cwd, 'src/b.md'), 'TODO in docs\n');
    await writeFile(path.join(context.cwd, 'node_modules/dep/c.ts'), 'TODO hidden\n');
    const content = await call(searchFilesTool, { pattern: 'TODO', file_glob: '*.ts' }, context);
    expect(content.value).toEqual({
      matches: [{ path: 'src/a.ts', line: 2, text: '// TODO later' }],
      count: 1,
    });
    const files = await call(searchFilesTool, { pattern: '**/*.md', target: 'files' }, context);
    expect(files.value).toEqual({ files: ['src/b.md'], count: 1 });
    // Look-ahead is JavaScript regex; ripgrep's dialect lacks it, so the tool walks with Node then.
    const lookahead = await call(searchFilesTool, { pattern: 'TODO(?= later)' }, context);
    expect(lookahead.value).toEqual({
      matches: [{ path: 'src/a.ts', line: 2, text: '// TODO later' }],
      count: 1,
    });
    const bad = await call(searchFilesTool, { pattern: '(' }, context);
    expect(String(bad.value.error)).toMatch(/^Invalid regex/);
  });
});
