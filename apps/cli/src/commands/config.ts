import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  configSetKey,
  getConfigPath,
  getEnvFilePath,
  loadConfig,
  parseConfigKey,
  readConfigData,
  readEnvFile,
  setConfigValue,
  setEnvValue,
  writeFileAtomicSync,
} from '@hermes/config';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { textArg } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { count } from '../output/format.js';

/** `OPENAI_API_KEY`, `HERMES_PEER_BOB_KEY`: environment names, which live in `.env`. */
const ENV_KEY = /^[A-Z][A-Z0-9_]*$/;
const SECRET_NAME = /(^|[_.-])(api[_-]?key|key|token|secret|password|passphrase|credentials?)$/i;
const MASK = '********';

function maskSecrets(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([name, item]) => [
        name,
        maskSecrets(item, name),
      ]),
    );
  }
  if (typeof value === 'string' && value !== '' && SECRET_NAME.test(key)) return MASK;
  return value;
}

function lookup(data: unknown, segments: readonly string[]): { found: boolean; value: unknown } {
  let node: unknown = data;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object' || !(segment in (node as object))) {
      return { found: false, value: undefined };
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return { found: true, value: node };
}

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return stringifyYaml(value).trimEnd();
}

export async function configGet(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const key = textArg(args, 0);
  const reveal = options.reveal === true;
  const { output } = context;
  if (ENV_KEY.test(key)) {
    const value = readEnvFile(context.home)[key];
    if (value === undefined) throw notSet(key, getEnvFilePath(context.home));
    const shown = reveal ? value : MASK;
    if (output.json) output.printJson({ key, value: shown, file: getEnvFilePath(context.home) });
    else output.line(shown);
    return EXIT.ok;
  }
  const data = readConfigData(context.home);
  const file = getConfigPath(context.home);
  if (key === '') {
    const shown = reveal ? data : maskSecrets(data);
    if (output.json) output.printJson(shown);
    else
      output.line(Object.keys(data).length === 0 ? `# ${file} is empty or missing` : render(shown));
    return EXIT.ok;
  }
  const segments = parseConfigKey(key);
  const { found, value } = lookup(data, segments);
  if (!found) throw notSet(key, file);
  const shown = reveal ? value : maskSecrets(value, segments.at(-1));
  if (output.json) output.printJson({ key, value: shown, file });
  else output.line(render(shown));
  return EXIT.ok;
}

function notSet(key: string, file: string): CliError {
  return new CliError({
    code: 'config_key_not_set',
    message: `${key} is not set in ${file}`,
    hint: `Set it with: hermes config set ${key} <value>`,
  });
}

/** YAML scalars and flow collections are typed (`30`, `true`, `null`, `[a, b]`); anything else is text. */
function parseValue(raw: string): unknown {
  const trimmed = raw.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return parseYaml(trimmed) as unknown;
    } catch (error) {
      throw usageError(
        `the value is not valid YAML: ${(error as Error).message.split('\n')[0]}`,
        'Quote it to store it as text',
      );
    }
  }
  if (
    /^(true|false|null|~)$/i.test(trimmed) ||
    /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(trimmed)
  ) {
    return parseYaml(trimmed) as unknown;
  }
  return raw;
}

export async function configSet(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  void options;
  const key = textArg(args, 0);
  const raw = textArg(args, 1);
  const { output } = context;
  if (ENV_KEY.test(key)) {
    setEnvValue(key, raw, context.home);
    const file = getEnvFilePath(context.home);
    if (output.json) output.printJson({ key, file, secret: true });
    else output.line(`Saved ${key} to ${file}`);
    return EXIT.ok;
  }
  const value = parseValue(raw);
  // `model <id>` sets `model.default` when model is a section: say which key was written.
  const target = configSetKey(key, value, context.home);
  const file = setConfigValue(key, value, context.home);
  const head = parseConfigKey(key)[0] ?? key;
  const warnings = loadConfig({ home: context.home }).warnings.filter((warning) =>
    warning.includes(head),
  );
  if (output.json) {
    output.printJson({
      key: target,
      value: maskSecrets(value, parseConfigKey(target).at(-1)),
      file,
      warnings,
    });
    // Warnings go to stderr as well: a script that only checks the exit code still learns why.
    for (const warning of warnings) output.warn(warning);
    return warnings.length > 0 ? EXIT.failure : EXIT.ok;
  }
  output.line(`Set ${target} in ${file}`);
  for (const warning of warnings) output.warn(warning);
  if (SECRET_NAME.test(key)) {
    output.note(
      output.errorStyles.dim(
        'Tip: secrets are safer in .env, e.g. hermes config set OPENAI_API_KEY <key>',
      ),
    );
  }
  return warnings.length > 0 ? EXIT.failure : EXIT.ok;
}

export async function configPath(context: CommandContext): Promise<number> {
  const paths = {
    home: context.home,
    config: getConfigPath(context.home),
    env: getEnvFilePath(context.home),
    state_db: path.join(context.home, 'state.db'),
    logs: path.join(context.home, 'logs'),
  };
  const { output } = context;
  if (output.json) output.printJson(paths);
  else output.line(paths.config);
  return EXIT.ok;
}

const TEMPLATE = `# Hermes configuration. Every key, with its default: docs/configuration.md
model:
  # An OpenAI-compatible endpoint and the model to use there.
  base_url: ""
  default: ""
# API keys go to .env, not here: hermes config set OPENAI_API_KEY <key>
`;

function editorCommand(): string {
  const editor = process.env.VISUAL?.trim() || process.env.EDITOR?.trim();
  if (editor) return editor;
  return process.platform === 'win32' ? 'notepad' : 'vi';
}

function shellQuote(value: string): string {
  if (process.platform === 'win32') return `"${value}"`;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export async function configEdit(context: CommandContext): Promise<number> {
  const file = getConfigPath(context.home);
  if (!existsSync(file)) writeFileAtomicSync(file, TEMPLATE, { mode: 0o600 });
  const editor = editorCommand();
  const code = await new Promise<number>((resolve, reject) => {
    // The editor setting may carry arguments (`code --wait`), so it runs through the shell.
    const child = spawn(`${editor} ${shellQuote(file)}`, { shell: true, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  if (code !== 0) {
    throw new CliError({
      code: 'editor_failed',
      message: `the editor (${editor}) exited with code ${code}`,
      hint: 'Set VISUAL or EDITOR to the editor you use',
    });
  }
  const { warnings } = loadConfig({ home: context.home });
  for (const warning of warnings) context.output.warn(warning);
  context.output.note(
    warnings.length === 0
      ? `${file} is valid.`
      : `${file} has ${count(warnings.length, 'warning')}.`,
  );
  return warnings.length === 0 ? EXIT.ok : EXIT.failure;
}
