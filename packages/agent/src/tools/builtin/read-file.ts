import { open } from 'node:fs/promises';
import * as v from 'valibot';
import { defineTool } from '../define-tool.js';
import { resolveToolPath } from '../resolve-path.js';

/** Files larger than this are refused (search them instead). */
export const READ_FILE_MAX_BYTES = 10 * 1024 * 1024;
export const READ_FILE_DEFAULT_LIMIT = 500;
export const READ_FILE_MAX_LIMIT = 2000;
/** Characters of numbered output returned per call. */
export const READ_FILE_MAX_OUTPUT_CHARS = 100_000;
/** Longer lines are cut with a marker. */
export const READ_FILE_MAX_LINE_CHARS = 2000;
const BINARY_SNIFF_BYTES = 8192;

/** A NUL byte in the first 8 KiB marks a binary file (what git and grep judge by). */
export function looksBinary(sample: Uint8Array): boolean {
  return sample.includes(0);
}

export const readFileTool = defineTool({
  name: 'read_file',
  toolset: 'file',
  readOnly: true,
  description:
    'Read a text file with line numbers (`N|text`). Use offset (1-based line) and limit to page through long files. Binary files are refused.',
  parameters: v.object({
    path: v.pipe(
      v.string(),
      v.minLength(1),
      v.description('File path, relative to the working directory'),
    ),
    offset: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.description('First line to show (1-based)')),
    ),
    limit: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(READ_FILE_MAX_LIMIT),
        v.description(`Lines to show (default ${READ_FILE_DEFAULT_LIMIT})`),
      ),
    ),
  }),
  async run(args, context) {
    const file = resolveToolPath(context.cwd, args.path);
    const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new Error(`File not found: ${args.path}`);
      if (error.code === 'EISDIR') throw new Error(`${args.path} is a directory, not a file`);
      throw new Error(`Cannot read ${args.path}: ${error.code ?? error.message}`);
    });
    let text: string;
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw new Error(`${args.path} is a directory, not a file`);
      if (stats.size > READ_FILE_MAX_BYTES)
        throw new Error(
          `${args.path} is ${stats.size} bytes, over the ${READ_FILE_MAX_BYTES}-byte limit; use search_files to find the part you need`,
        );
      const buffer = await handle.readFile();
      if (looksBinary(buffer.subarray(0, BINARY_SNIFF_BYTES)))
        throw new Error(`${args.path} is a binary file; read_file only reads text`);
      text = buffer.toString('utf8');
    } finally {
      await handle.close();
    }
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const offset = args.offset ?? 1;
    const limit = args.limit ?? READ_FILE_DEFAULT_LIMIT;
    if (offset > Math.max(1, lines.length))
      throw new Error(`offset ${offset} is past the end of ${args.path} (${lines.length} lines)`);
    const out: string[] = [];
    let size = 0;
    let last = offset - 1;
    for (let index = offset - 1; index < Math.min(lines.length, offset - 1 + limit); index += 1) {
      let line = lines[index] ?? '';
      if (line.length > READ_FILE_MAX_LINE_CHARS)
        line = `${line.slice(0, READ_FILE_MAX_LINE_CHARS)}… [line truncated]`;
      const entry = `${String(index + 1).padStart(6, ' ')}|${line}`;
      if (size + entry.length + 1 > READ_FILE_MAX_OUTPUT_CHARS && out.length > 0) break;
      out.push(entry);
      size += entry.length + 1;
      last = index + 1;
    }
    const more = last < lines.length;
    return {
      path: args.path,
      content: out.join('\n'),
      total_lines: lines.length,
      lines_shown: out.length === 0 ? '0' : `${offset}-${last}`,
      ...(more ? { truncated: true, next_offset: last + 1 } : {}),
    };
  },
});
