import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { defineTool } from '../define-tool.js';

export const SKILL_FILE = 'SKILL.md';
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_SKILL_CHARS = 200_000;

/** `<home>/skills/<name>/SKILL.md`, or one category level down (`skills/<category>/<name>/`). */
async function findSkillDirectory(root: string, name: string): Promise<string | undefined> {
  const isSkill = async (directory: string) =>
    (await stat(path.join(directory, SKILL_FILE)).catch(() => undefined))?.isFile() === true;
  const direct = path.join(root, name);
  if (await isSkill(direct)) return direct;
  const categories = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const category of categories) {
    if (!category.isDirectory() || category.name.startsWith('.')) continue;
    const nested = path.join(root, category.name, name);
    if (await isSkill(nested)) return nested;
  }
  return undefined;
}

async function listSkills(root: string): Promise<string[]> {
  const names: string[] = [];
  const top = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const entry of top) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const directory = path.join(root, entry.name);
    if (await stat(path.join(directory, SKILL_FILE)).catch(() => undefined)) names.push(entry.name);
    else {
      const nested = await readdir(directory, { withFileTypes: true }).catch(() => []);
      for (const child of nested)
        if (
          child.isDirectory() &&
          (await stat(path.join(directory, child.name, SKILL_FILE)).catch(() => undefined))
        )
          names.push(child.name);
    }
  }
  return names.sort();
}

export const skillViewTool = defineTool({
  name: 'skill_view',
  toolset: 'skills',
  readOnly: true,
  description:
    'Load a skill (its SKILL.md instructions) from $HERMES_HOME/skills by name. With file_path, read one supporting file of that skill instead (that does not load the skill).',
  parameters: v.object({
    name: v.pipe(v.string(), v.regex(SKILL_NAME, 'a skill name (letters, digits, . _ -)')),
    file_path: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('A file inside the skill folder')),
    ),
  }),
  async run(args, context) {
    const root = path.join(context.home, 'skills');
    const directory = await findSkillDirectory(root, args.name);
    if (!directory) {
      const available = await listSkills(root);
      throw new Error(
        `Skill '${args.name}' not found in ${root}${available.length > 0 ? `; available: ${available.join(', ')}` : ' (no skills are installed)'}`,
      );
    }
    if (args.file_path !== undefined) {
      const file = path.resolve(directory, args.file_path);
      const relative = path.relative(directory, file);
      if (relative.startsWith('..') || path.isAbsolute(relative))
        throw new Error(`file_path must stay inside the skill folder of '${args.name}'`);
      const content = await readFile(file, 'utf8').catch(() => {
        throw new Error(`File not found in skill '${args.name}': ${args.file_path}`);
      });
      return { name: args.name, file_path: relative, content: content.slice(0, MAX_SKILL_CHARS) };
    }
    const content = await readFile(path.join(directory, SKILL_FILE), 'utf8');
    return {
      name: args.name,
      path: path.join(directory, SKILL_FILE),
      loaded: true,
      content: content.slice(0, MAX_SKILL_CHARS),
    };
  },
});
