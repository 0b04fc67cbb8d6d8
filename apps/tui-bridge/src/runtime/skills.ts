import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

const SKILL_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * The skill a slash word names in a profile: `<home>/skills/[<category>/]<name>/SKILL.md` (the
 * layout `skill_view` reads). Returns the name, or undefined.
 */
export async function findSkill(home: string, name: string): Promise<string | undefined> {
  if (!SKILL_NAME.test(name) || name.includes('..')) return undefined;
  const root = path.join(home, 'skills');
  if (await isFile(path.join(root, name, 'SKILL.md'))) return name;
  let categories: string[];
  try {
    categories = await readdir(root);
  } catch {
    return undefined;
  }
  for (const category of categories) {
    if (category.startsWith('.')) continue;
    if (await isFile(path.join(root, category, name, 'SKILL.md'))) return name;
  }
  return undefined;
}
