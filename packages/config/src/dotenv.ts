import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { HermesConfigError } from './errors.js';
import { getHermesHome } from './home.js';

/** `<home>/.env`, where secrets live (API keys, tokens). */
export function getEnvFilePath(home: string = getHermesHome()): string {
  return path.join(home, '.env');
}

/**
 * Parses `<home>/.env` into a map. A missing file is an empty map; an unreadable one is a
 * `config_invalid` error naming the file. Values are secrets: callers must never log them (log key
 * names at most).
 */
export function readEnvFile(home: string = getHermesHome()): Record<string, string> {
  const file = getEnvFilePath(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new HermesConfigError({
      code: 'config_invalid',
      message: `${file}: cannot be read (${code ?? 'error'})`,
      cause: error,
    });
  }
  const parsed = parseEnv(text) as Record<string, string | undefined>;
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (value !== undefined) result[key] = value;
  }
  return result;
}

/**
 * Loads `<home>/.env` into `env` (default `process.env`) without overriding variables that are
 * already set — the environment an operator launched us with wins. Returns the names applied.
 */
export function applyEnvFile(
  home: string = getHermesHome(),
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const applied: string[] = [];
  for (const [key, value] of Object.entries(readEnvFile(home))) {
    if (env[key] !== undefined) continue;
    env[key] = value;
    applied.push(key);
  }
  return applied;
}
