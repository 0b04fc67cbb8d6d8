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
  setEnvValues({ [name]: value }, home);
}

/**
 * Sets several entries of `<home>/.env` at once (`undefined` removes one), in one atomic write
 * (mode 0600): every other line is kept as it was, and a bad name or value refuses the whole
 * change before anything is written. When the text would not change (removing entries that are
 * not there, setting values already set) nothing is written — no `.env`, no home is created.
 */
export function setEnvValues(
  entries: Readonly<Record<string, string | undefined>>,
  home: string = getHermesHome(),
): void {
  const rendered = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries(entries)) {
    if (!ENV_NAME_PATTERN.test(name)) {
      throw new HermesConfigError({
        code: 'invalid_env_name',
        message: `invalid .env name ${JSON.stringify(name)}: use letters, digits and "_", not starting with a digit`,
      });
    }
    rendered.set(name, value === undefined ? undefined : renderEntry(name, value));
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
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const kept: string[] = [];
  const written = new Set<string>();
  let changed = false;
  for (const line of lines) {
    const name = lineName(line);
    if (name === undefined || !rendered.has(name)) {
      kept.push(line);
      continue;
    }
    // The first definition is replaced in place; later duplicates go (parseEnv keeps the last).
    const entry = rendered.get(name);
    if (!written.has(name) && entry !== undefined) {
      kept.push(entry);
      if (entry !== line) changed = true;
    } else {
      changed = true;
    }
    written.add(name);
  }
  for (const [name, entry] of rendered) {
    if (!written.has(name) && entry !== undefined) {
      kept.push(entry);
      changed = true;
    }
  }
  const output = kept.length === 0 ? '' : `${kept.join('\n')}\n`;
  const parsed = parseEnv(output) as Record<string, string | undefined>;
  for (const [name, value] of Object.entries(entries)) {
    if (value !== undefined && parsed[name] !== value) {
      throw new HermesConfigError({
        code: 'invalid_env_value',
        message: `the value of ${name} cannot be written to .env so that it reads back unchanged`,
      });
    }
  }
  if (!changed) return;
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
