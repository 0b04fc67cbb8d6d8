import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
} from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import {
  Document,
  isMap,
  isScalar,
  LineCounter,
  parseDocument,
  type Scalar,
  visit,
  type YAMLError,
} from 'yaml';
import { writeFileAtomicSync } from './atomic-write.js';
import { textSchema } from './config-schema.js';
import { ConfigParseError, HermesConfigError } from './errors.js';
import { getHermesHome } from './home.js';

export const CONFIG_FILE_NAME = 'config.yaml';

/** How many previous versions of config.yaml a write keeps (`config.yaml.bak.1` is the newest). */
export const CONFIG_BACKUP_COUNT = 3;

export function getConfigPath(home: string = getHermesHome()): string {
  return path.join(home, CONFIG_FILE_NAME);
}

export interface ConfigDocument {
  readonly file: string;
  readonly exists: boolean;
  /** The parsed YAML document; comments and unknown keys survive a write. */
  readonly document: Document;
}

function parseError(file: string, error: YAMLError): ConfigParseError {
  const position = error.linePos?.[0];
  // prettyErrors appends " at line L, column C:" and a source excerpt; we report those ourselves.
  const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?\s*$/, '') ?? '';
  return new ConfigParseError({
    file,
    line: position?.line ?? 1,
    column: position?.col ?? 1,
    reason: reason || error.code,
  });
}

/** How many alias expansions a config may use; more is a "billion laughs" document. */
const MAX_ALIAS_COUNT = 100;

/**
 * The YAML parser accepts an alias with no anchor before it, and an alias bomb, and only fails
 * when the document is turned into data — with a bare ReferenceError. Check both here so they
 * surface as located parse errors instead of a stack trace.
 */
function checkAliases(document: Document, file: string, lineCounter: LineCounter): void {
  let first: { offset: number; reason: string } | undefined;
  visit(document, {
    Alias(_key, node) {
      const offset = node.range?.[0] ?? 0;
      if (node.resolve(document) === undefined) {
        // The alias name is not echoed: a value pasted unquoted as `*sk-…` would be a secret.
        first = {
          offset,
          reason:
            'an alias (*name) has no anchor (&name) before it; quote the value if * is literal',
        };
        return visit.BREAK;
      }
      first ??= { offset, reason: '' };
      return undefined;
    },
  });
  if (first === undefined) return;
  let reason = first.reason;
  if (reason === '') {
    try {
      document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      return;
    } catch {
      reason = `aliases expand to too much data (more than ${MAX_ALIAS_COUNT} expansions)`;
    }
  }
  const position = lineCounter.linePos(first.offset);
  throw new ConfigParseError({ file, line: position.line, column: position.col, reason });
}

/** Parses YAML text as a config document. Throws `ConfigParseError` / `config_invalid`. */
export function parseConfigText(text: string, file: string): Document {
  const lineCounter = new LineCounter();
  const document: Document = parseDocument(text, {
    prettyErrors: true,
    uniqueKeys: true,
    lineCounter,
  });
  const first = document.errors[0];
  if (first) throw parseError(file, first);
  checkAliases(document, file, lineCounter);
  const contents = document.contents;
  const isEmpty = contents === null || (isScalar(contents) && contents.value === null);
  if (!isEmpty && !isMap(contents)) {
    throw new HermesConfigError({
      code: 'config_invalid',
      message: `${file}: the top level must be a mapping of keys (like "model:"), not a ${isScalar(contents) ? 'single value' : 'list'}`,
    });
  }
  if (isEmpty) document.contents = document.createNode({});
  return document;
}

/** Reads `<home>/config.yaml`. A missing file is an empty document. */
export function readConfigDocument(home: string = getHermesHome()): ConfigDocument {
  const file = getConfigPath(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { file, exists: false, document: new Document({}) };
    }
    throw new HermesConfigError({
      code: 'config_invalid',
      message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      cause: error,
    });
  }
  return { file, exists: true, document: parseConfigText(text, file) };
}

/** The plain-data view of `<home>/config.yaml` (an empty object when missing). */
export function readConfigData(home: string = getHermesHome()): Record<string, unknown> {
  return documentData(readConfigDocument(home).document);
}

export function documentData(document: Document): Record<string, unknown> {
  const data = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
  return data !== null && typeof data === 'object' && !Array.isArray(data)
    ? (data as Record<string, unknown>)
    : {};
}

function rotateBackups(file: string): void {
  if (!existsSync(file)) return;
  for (let index = CONFIG_BACKUP_COUNT - 1; index >= 1; index--) {
    const from = `${file}.bak.${index}`;
    if (existsSync(from)) renameSync(from, `${file}.bak.${index + 1}`);
  }
  copyFileSync(file, `${file}.bak.1`);
}

/** Links followed before a config path counts as a loop (the kernel's own limit is 40). */
const MAX_SYMLINK_HOPS = 40;

/**
 * The file a write to `file` must replace: `file` itself, or — when it is a symbolic link, as
 * dotfile managers make it — the file at the end of its chain of links (which may not exist yet).
 * An atomic rename over the link itself would turn it into a regular file and cut it loose.
 */
function symlinkTarget(file: string): string {
  let current = file;
  for (let hop = 0; hop < MAX_SYMLINK_HOPS; hop++) {
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return current;
      throw error;
    }
    if (!isLink) return current;
    current = path.resolve(path.dirname(current), readlinkSync(current));
  }
  throw Object.assign(new Error(`${file}: too many levels of symbolic links`), { code: 'ELOOP' });
}

/**
 * Writes a config document atomically (temp file + fsync + rename, mode 0600), keeping the
 * previous versions as `config.yaml.bak.1..3`. A symlinked `config.yaml` stays a link: the file
 * it points to is what gets replaced.
 */
export function writeConfigDocument(document: Document, home: string = getHermesHome()): string {
  const file = getConfigPath(home);
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    rotateBackups(file);
    writeFileAtomicSync(symlinkTarget(file), document.toString({ lineWidth: 0 }));
  } catch (error) {
    throw new HermesConfigError({
      code: 'config_write_failed',
      message: `${file}: cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      cause: error,
    });
  }
  return file;
}

const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Splits `gateway.loop_watchdog` into segments, rejecting empty or odd segments. */
export function parseConfigKey(key: string): string[] {
  const segments = key.split('.');
  if (key.trim() === '' || segments.some((segment) => !KEY_SEGMENT.test(segment))) {
    throw new HermesConfigError({
      code: 'invalid_config_key',
      message: `invalid config key ${JSON.stringify(key)}: use dotted names such as gateway.loop_watchdog`,
    });
  }
  return segments;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `model: <id>` is shorthand for `model: { default: <id> }` (`modelSectionSchema`): the one key
 * whose value may stand for a whole section. Every other section is only ever a mapping.
 */
const MODEL_ID_PATH = ['model', 'default'] as const;

/** A node that is the `model: <id>` shorthand: a model id (text or a finite number) at `model`. */
function isModelIdShorthand(prefix: readonly string[], node: unknown): node is Scalar {
  return (
    prefix.length === 1 &&
    prefix[0] === MODEL_ID_PATH[0] &&
    isScalar(node) &&
    v.is(textSchema, node.value)
  );
}

/**
 * Where `setConfigValue(key, value)` writes, as path segments. `model` set to a value while
 * `model` is a section means the model id (`model.default`): `hermes config set model <id>`
 * changes the model and keeps its provider, base URL and key. Any other section asked to
 * become a value is refused — that would drop every key under it.
 */
function setTarget(document: Document, file: string, key: string, value: unknown): string[] {
  const segments = parseConfigKey(key);
  const node = document.getIn(segments, true);
  if (!isMap(node) || node.items.length === 0 || isPlainObject(value)) return segments;
  if (segments.length === 1 && segments[0] === MODEL_ID_PATH[0]) return [...MODEL_ID_PATH];
  const first = node.items[0]?.key;
  const example = `${key}.${isScalar(first) ? String(first.value) : '<name>'}`;
  throw new HermesConfigError({
    code: 'invalid_config_key',
    message: `${file}: cannot set ${key} to a value: it is a section of ${node.items.length} key(s); set one of them, e.g. ${example}`,
  });
}

/**
 * The dotted key `setConfigValue(key, value, home)` would write: `key` itself, or `model.default`
 * for a model id given as `model` while `model` is a section. Throws what `setConfigValue` would.
 */
export function configSetKey(key: string, value: unknown, home: string = getHermesHome()): string {
  const { document, file } = readConfigDocument(home);
  return setTarget(document, file, key, value).join('.');
}

/**
 * Sets one dotted key in `<home>/config.yaml` and writes it back atomically. Other keys,
 * comments and unknown sections are kept. Refuses to descend through a non-mapping value, and to
 * replace a section with a value — except `model`, whose value is then the model id
 * (`model.default`; see `configSetKey`). The mirror of that: a key under `model` while `model` is
 * a bare model id turns it into the section it stands for, the id kept as `model.default`.
 */
export function setConfigValue(
  key: string,
  value: unknown,
  home: string = getHermesHome(),
): string {
  const { document, file } = readConfigDocument(home);
  const segments = setTarget(document, file, key, value);
  for (let depth = 1; depth < segments.length; depth++) {
    const prefix = segments.slice(0, depth);
    const node = document.getIn(prefix, true);
    if (node === undefined || node === null) continue;
    if (isModelIdShorthand(prefix, node)) {
      // The id node itself moves, so a comment on it stays with it.
      document.setIn(prefix, document.createNode({ [MODEL_ID_PATH[1]]: node }));
      continue;
    }
    if (!isMap(node) && !(isScalar(node) && node.value === null)) {
      throw new HermesConfigError({
        code: 'invalid_config_key',
        message: `${file}: cannot set ${key}: ${prefix.join('.')} is a value, not a section`,
      });
    }
    if (isScalar(node)) document.setIn(prefix, document.createNode({}));
  }
  document.setIn(segments, value);
  return writeConfigDocument(document, home);
}
