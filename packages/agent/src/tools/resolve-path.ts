import { homedir } from 'node:os';
import path from 'node:path';

/** Resolves a path a tool was given against the turn's working directory (`~` is the user's home). */
export function resolveToolPath(cwd: string, input: string): string {
  if (input === '~') return homedir();
  if (input.startsWith('~/')) return path.join(homedir(), input.slice(2));
  return path.resolve(cwd, input);
}
