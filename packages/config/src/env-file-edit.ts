import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { writeFileAtomicSync } from './atomic-write.js';
import { getEnvFilePath } from './dotenv.js';
import { HermesConfigError } from './errors.js';
import { getHermesHome } from './home.js';

/** Names a `.env` entry may take (what shells and `util.parseEnv` accept). */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

const BARE_VALUE = /^[A-Za-z0-9_\-.:/@+,=%~^]*$/;

/** The text of one `NAME=value` line, quoted so `util.parseEnv` reads back exactly `value`. */
function renderEntry(name: string, value: string): string {
  if (/[\r\n]/.test(value)) {
    throw new HermesConfigError({
      code: 'invalid_env_value',
      message: `the value of ${name} contains a line break; .env values must be one line`,
    });
  }
  if (BARE_VALUE.test(value)) return `${name}=${value}`;
  // Single quotes are literal; double quotes would expand `\n`; backticks are the last resort.
  if (!value.includes("'")) return `${name}='${value}'`;
  if (!value.includes('"') && !value.includes('\\')) return `${name}="${value}"`;
  if (!value.includes('`')) return `${name}=\`${value}\``;
  throw new HermesConfigError({
    code: 'invalid_env_value',
    message: `the value of ${name} mixes ', " and \` quotes, which .env cannot hold`,
  });
}

function lineName(line: string): string | undefined {
  const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
  return match?.[1];
}

/**
 * Sets (or, with `undefined`, removes) one entry of `<home>/.env`, keeping every other line —
 * comments included — as it was. The file is written atomically with mode 0600. Values are
 * secrets: the errors name the entry, never its value.
 */
export function setEnvValue(
  name: string,
  value: string | undefined,
  home: string = getHermesHome(),
): void {
  if (!ENV_NAME_PATTERN.test(name)) {
    throw new HermesConfigError({
      code: 'invalid_env_name',
      message: `invalid .env name ${JSON.stringify(name)}: use letters, digits and "_", not starting with a digit`,
    });
  }
  const file = getEnvFilePath(home);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new HermesConfigError({
        code: 'config_invalid',
        message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        cause: error,
      });
    }
  }
  const entry = value === undefined ? undefined : renderEntry(name, value);
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const kept: string[] = [];
  let written = false;
  for (const line of lines) {
    if (lineName(line) !== name) {
      kept.push(line);
      continue;
    }
    // The first definition is replaced in place; later duplicates go (parseEnv keeps the last).
    if (!written && entry !== undefined) kept.push(entry);
    written = true;
  }
  if (!written && entry !== undefined) kept.push(entry);
  const output = kept.length === 0 ? '' : `${kept.join('\n')}\n`;
  if (entry !== undefined) {
    const parsed = parseEnv(output) as Record<string, string | undefined>;
    if (parsed[name] !== value) {
      throw new HermesConfigError({
        code: 'invalid_env_value',
        message: `the value of ${name} cannot be written to .env so that it reads back unchanged`,
      });
    }
  }
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(file, output, { mode: 0o600 });
  } catch (error) {
    throw new HermesConfigError({
      code: 'config_write_failed',
      message: `${file}: cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      cause: error,
    });
  }
}
