import { readFile, writeFile } from 'node:fs/promises';
import * as v from 'valibot';
import { defineTool } from '../define-tool.js';
import { resolveToolPath } from '../resolve-path.js';

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (
    let index = text.indexOf(needle);
    index !== -1;
    index = text.indexOf(needle, index + needle.length)
  )
    count += 1;
  return count;
}

export const patchTool = defineTool({
  name: 'patch',
  toolset: 'file',
  description:
    'Replace exact text in a file. old_string must match exactly once (include surrounding lines to make it unique), unless replace_all is true.',
  parameters: v.object({
    path: v.pipe(v.string(), v.minLength(1)),
    old_string: v.pipe(v.string(), v.minLength(1), v.description('Exact text to find')),
    new_string: v.pipe(v.string(), v.description('Replacement text')),
    replace_all: v.optional(v.boolean()),
  }),
  async run(args, context) {
    const file = resolveToolPath(context.cwd, args.path);
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new Error(
        error.code === 'ENOENT'
          ? `File not found: ${args.path}`
          : `Cannot read ${args.path}: ${error.code}`,
      );
    });
    const count = countOccurrences(text, args.old_string);
    if (count === 0) throw new Error(`old_string was not found in ${args.path}`);
    if (count > 1 && !args.replace_all)
      throw new Error(
        `old_string matches ${count} places in ${args.path}; include more surrounding text to make it unique, or set replace_all`,
      );
    const updated = args.replace_all
      ? text.split(args.old_string).join(args.new_string)
      : text.replace(args.old_string, () => args.new_string);
    await writeFile(file, updated, 'utf8');
    return { path: args.path, replacements: args.replace_all ? count : 1 };
  },
});
