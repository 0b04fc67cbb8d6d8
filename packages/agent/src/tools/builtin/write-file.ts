import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { defineTool } from '../define-tool.js';
import { resolveToolPath } from '../resolve-path.js';

export const writeFileTool = defineTool({
  name: 'write_file',
  toolset: 'file',
  description:
    'Write a whole file (created with its parent folders, or replaced). For small edits prefer patch.',
  parameters: v.object({
    path: v.pipe(
      v.string(),
      v.minLength(1),
      v.description('File path, relative to the working directory'),
    ),
    content: v.pipe(v.string(), v.description('The complete new contents')),
  }),
  async run(args, context) {
    const file = resolveToolPath(context.cwd, args.path);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, args.content, 'utf8');
    return { path: args.path, bytes_written: Buffer.byteLength(args.content) };
  },
});
