import type { WireRequest } from './client.js';
import {
  cloneJson,
  dropSlot,
  fromPlain,
  JsonObject,
  type JsonText,
  objectsOf,
  type Slot,
  serialize,
  setSlot,
  slotsOf,
} from './json-text.js';
import type { Fixtures, RouteTemplate } from './routes.js';
import { type Dice, deepArray, deepObject, unknownKey, weirdValue } from './weird-values.js';

/**
 * What the contract says of a request after its mutations: it must be taken (2xx), it must be
 * refused (4xx), or either may be right.
 */
export type Verdict = 'accept' | 'reject' | 'any';

export interface FuzzCase {
  readonly index: number;
  readonly template: RouteTemplate;
  readonly mutations: readonly string[];
  readonly verdict: Verdict;
  /** The answer must be the documented profile refusal (`{"error": "Unknown or …"}`). */
  readonly profileRefused: boolean;
  /** The prefix names a profile the gateway serves: the answer must not be the profile refusal. */
  readonly profileServed: boolean;
  /**
   * Multiplexing: the request addresses another served profile than `settings.profile`'s (with
   * that profile's own key when `touchesOther`, so it may change that profile's store).
   */
  readonly addressesOther: boolean;
  readonly touchesOther: boolean;
  readonly request: WireRequest;
}

export interface FuzzSettings {
  /** The key of the profile the requests address. */
  readonly apiKey: string;
  readonly maxRequestBytes: number;
  /**
   * Multiplexing: the requests address this served profile (not the default one) under its
   * prefix; the default profile, with its own key, is the other one.
   */
  readonly profile?: {
    /** The prefix the fixtures are made under. */
    readonly prefix: string;
    /** Prefixes that name it too (case, escapes, spaces), one picked per request. */
    readonly aliases: readonly string[];
    /** The default profile's key: refused under this profile's prefix. */
    readonly otherKey: string;
  };
}

/** A request being mutated. */
interface Draft {
  method: string;
  prefix: string;
  /** The path with `{id}` still in it. */
  path: string;
  /** The id segment as it goes on the wire (already percent-encoded). */
  id: string | undefined;
  query: [string, string][];
  headers: Record<string, string | string[]>;
  json: JsonText | undefined;
  /** Raw bytes, when the body is not (or no longer) the JSON tree. */
  raw: Buffer | undefined;
  chunked: boolean;
  /** Byte length the body is padded to with trailing spaces. */
  padTo: number | undefined;
  profileRefused: boolean;
  /** The prefix names another served profile (the default one). */
  addressesOther: boolean;
  /** The bearer is the other profile's key. */
  otherKey: boolean;
  /** A body edit whose effect the contract leaves open (a nested field, an odd but typed value). */
  uncertainBody: boolean;
}

interface Outcome {
  readonly label: string;
  readonly verdict: Verdict;
  /** Another method or path: the template's verdicts no longer apply. */
  readonly rerouted?: boolean;
  /** No URL can be made of it: refused before any profile or route is looked at. */
  readonly malformed?: boolean;
  /** Changed the JSON body (superseded when the whole body is replaced). */
  readonly body?: boolean;
  /** What it changed; a later mutation of the same aspect supersedes it. */
  readonly aspect?: string;
}

type Mutation = (draft: Draft, context: MutationContext) => Outcome | undefined;

interface MutationContext {
  readonly dice: Dice;
  readonly template: RouteTemplate;
  readonly fixtures: Fixtures;
  readonly settings: FuzzSettings;
  readonly unique: string;
}

function hasJsonBody(draft: Draft): draft is Draft & { json: JsonText } {
  return draft.json !== undefined && draft.raw === undefined;
}

function describeValue(value: JsonText): string {
  const text = serialize(value);
  return text.length > 60 ? `${text.slice(0, 60)}…(${text.length} chars)` : text;
}

/** The value a JSON text parses to (what the gateway sees), or a marker when it does not parse. */
function parsed(value: JsonText): unknown {
  try {
    return JSON.parse(serialize(value));
  } catch {
    return Symbol('unparsable');
  }
}

function fieldSpec(template: RouteTemplate, key: string) {
  return template.fields && Object.hasOwn(template.fields, key) ? template.fields[key] : undefined;
}

/**
 * A top-level field set to `value`: `any` when the contract lets the value through validation
 * (what it means may still be refused: a title in use, an unknown id), else `accept` — the
 * final body is judged as a whole (`bodyVerdict`), since a later duplicate may shadow it.
 */
function fieldVerdict(template: RouteTemplate, key: string, value: JsonText): Verdict {
  const spec = fieldSpec(template, key);
  if (!spec) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return 'any';
    return 'accept';
  }
  return spec.check && !spec.check(parsed(value)) ? 'accept' : 'any';
}

/** Documented in docs/gateway.md: deeper JSON is a 400. */
const MAX_JSON_DEPTH = 64;

function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The contract's word on a final JSON body: what validation must refuse, or `accept`. */
export function bodyVerdict(template: RouteTemplate, body: JsonText): Verdict {
  const value = parsed(body);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'reject';
  if (!template.ownBodyRules && depthOf(value) > MAX_JSON_DEPTH) return 'reject';
  const fields = value as Record<string, unknown>;
  for (const [key, spec] of Object.entries(template.fields ?? {}))
    if (spec.required && !Object.hasOwn(fields, key)) return 'reject';
  for (const key of Object.keys(fields)) {
    const spec = fieldSpec(template, key);
    if (!spec) {
      if (template.unknownFields === 'refused') return 'reject';
      continue;
    }
    if (spec.check && !spec.check(fields[key])) return 'reject';
  }
  return 'accept';
}

function topLevelKey(draft: Draft, slot: Slot): string | undefined {
  return slot.kind === 'entry' && slot.object === draft.json
    ? (slot.object.entries[slot.index]?.[0] ?? '')
    : undefined;
}

const replaceField: Mutation = (draft, { dice, template }) => {
  if (!hasJsonBody(draft)) return undefined;
  const slots = slotsOf(draft.json);
  if (slots.length === 0) return undefined;
  const slot = dice.pick(slots);
  const key = topLevelKey(draft, slot);
  const value = weirdValue(dice);
  setSlot(slot, value);
  return {
    label: `body ${slot.path} = ${describeValue(value)}`,
    verdict: key === undefined ? 'any' : fieldVerdict(template, key, value),
    body: true,
  };
};

const dropField: Mutation = (draft, { dice }) => {
  if (!hasJsonBody(draft)) return undefined;
  const slots = slotsOf(draft.json);
  if (slots.length === 0) return undefined;
  const slot = dice.pick(slots);
  const key = topLevelKey(draft, slot);
  dropSlot(slot);
  return {
    label: `drop body ${slot.path}`,
    verdict: key === undefined ? 'any' : 'accept',
    body: true,
  };
};

const addField: Mutation = (draft, { dice, template }) => {
  if (!hasJsonBody(draft)) return undefined;
  const objects = objectsOf(draft.json);
  if (objects.length === 0) return undefined;
  const target = dice.pick(objects);
  const key = unknownKey(dice);
  const value = weirdValue(dice);
  target.entries.push([key, value]);
  return {
    label: `add body field ${JSON.stringify(key)} = ${describeValue(value)}`,
    verdict: target === draft.json ? fieldVerdict(template, key, value) : 'any',
    body: true,
  };
};

const duplicateKey: Mutation = (draft, { dice, template }) => {
  if (!hasJsonBody(draft) || !(draft.json instanceof JsonObject)) return undefined;
  const entries = draft.json.entries;
  if (entries.length === 0) return undefined;
  const index = dice.int(entries.length);
  const [key] = entries[index] ?? [''];
  const value = weirdValue(dice);
  // JSON.parse keeps the last copy.
  const weirdLast = dice.chance(0.5);
  entries.splice(weirdLast ? index + 1 : index, 0, [key, value]);
  return {
    label: `duplicate key ${JSON.stringify(key)}, ${weirdLast ? 'last' : 'first'} = ${describeValue(value)}`,
    verdict: weirdLast ? fieldVerdict(template, key, value) : 'accept',
    body: true,
  };
};

/** Bodies that replace the whole request body, and what each must get. */
const wholeBody: Mutation = (draft, { dice, template }) => {
  if (!template.body) return undefined;
  // The body as it stands (earlier edits included), and what the contract says of it.
  const tree = hasJsonBody(draft) ? draft.json : new JsonObject([]);
  const valid = serialize(tree);
  const judged = bodyVerdict(template, tree);
  const current: Verdict = judged === 'accept' && draft.uncertainBody ? 'any' : judged;
  const required = Object.values(template.fields ?? {}).some((spec) => spec.required);
  const choices: [string, Buffer | string, Verdict][] = [
    ['empty', '', template.emptyIsObject ? 'accept' : 'reject'],
    ['only spaces', '  \n', template.emptyIsObject ? 'accept' : 'reject'],
    ['unterminated', '{', 'reject'],
    ['half a pair', '{"a":', 'reject'],
    ['trailing comma', valid.replace(/}$/, ',}'), 'reject'],
    ['single quotes', "{'a':1}", 'reject'],
    ['null', 'null', 'reject'],
    ['array', '[]', 'reject'],
    ['array of the body', `[${valid}]`, 'reject'],
    ['string', '"text"', 'reject'],
    ['number', '42', 'reject'],
    ['NaN', 'NaN', 'reject'],
    ['true', 'true', 'reject'],
    ['NUL', '\u0000', 'reject'],
    ['empty object', '{}', required ? 'reject' : template.unknownFields ? 'accept' : 'any'],
    ['deep array', deepArray(30_000).text, 'reject'],
    ['deep object', deepObject(30_000).text, 'reject'],
    [
      'nested at the limit',
      deepObject(64).text,
      required || template.unknownFields === 'refused' ? 'reject' : 'any',
    ],
    ['body then garbage', `${valid}x`, 'reject'],
    ['body then spaces', `${valid} \n\t`, current],
    ['byte order mark', `\uFEFF${valid}`, 'any'],
    ['UTF-16', Buffer.from(valid, 'utf16le'), 'reject'],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('{"'), Buffer.from([0xff, 0xfe]), Buffer.from('":1}')]),
      required ? 'reject' : 'any',
    ],
  ];
  const [label, body, verdict] = dice.pick(choices);
  draft.json = undefined;
  draft.raw = typeof body === 'string' ? Buffer.from(body) : body;
  return { label: `whole body: ${label}`, verdict, aspect: 'whole body' };
};

/** A string of the body turned into bytes that are not UTF-8 (decoded as U+FFFD). */
const invalidUtf8: Mutation = (draft, { dice }) => {
  if (!hasJsonBody(draft)) return undefined;
  const strings = slotsOf(draft.json).filter((slot) => {
    const value =
      slot.kind === 'entry' ? slot.object.entries[slot.index]?.[1] : slot.array[slot.index];
    return typeof value === 'string';
  });
  if (strings.length === 0) return undefined;
  const slot = dice.pick(strings);
  const marker = '\u0001MARK\u0001';
  setSlot(slot, marker);
  const text = serialize(draft.json);
  const at = text.indexOf(JSON.stringify(marker).slice(1, -1));
  const bad = dice.pick([
    [0xff],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xe2, 0x82],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
  ]);
  draft.raw = Buffer.concat([
    Buffer.from(text.slice(0, at)),
    Buffer.from(bad),
    Buffer.from(text.slice(at + JSON.stringify(marker).length - 2)),
  ]);
  (draft as Draft).json = undefined;
  return {
    label: `invalid UTF-8 ${bad.map((byte) => byte.toString(16)).join(' ')} in ${slot.path}`,
    verdict: 'any',
  };
};

const contentType: Mutation = (draft, { dice, template }) => {
  if (draft.json === undefined && draft.raw === undefined) return undefined;
  const value = dice.pick<string | string[] | undefined>([
    undefined,
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/xml',
    '',
    'application/json, text/plain',
    ['application/json', 'text/plain'],
  ]);
  if (value === undefined) delete draft.headers['content-type'];
  else draft.headers['content-type'] = value;
  // The Content-Type is not checked (docs/gateway.md), except for an artifact's own type.
  return {
    label: `content-type ${JSON.stringify(value)}`,
    aspect: 'content-type',
    verdict: template.rawBody ? 'any' : 'accept',
  };
};

const bodySize: Mutation = (draft, { dice, settings, template }) => {
  if (template.path.startsWith('/v1/artifacts/')) return undefined;
  const limit = settings.maxRequestBytes;
  const over = dice.chance(0.5);
  const chunked = dice.chance(0.3);
  if (!template.body && !template.rawBody) {
    // A bodiless route: only a body over the limit is refused (by its declared length).
    if (!over || chunked) return undefined;
    draft.chunked = false;
    draft.raw = Buffer.alloc(limit + 1, 0x20);
    return {
      label: 'a body over the limit on a bodiless route',
      verdict: 'reject',
      aspect: 'size',
    };
  }
  draft.chunked = chunked;
  draft.padTo = over ? limit + 1 + dice.int(3) : limit;
  return {
    label: `body padded to ${draft.padTo} bytes${draft.chunked ? ', chunked' : ''}`,
    aspect: 'size',
    verdict: over ? 'reject' : 'accept',
  };
};

/** Query parameters the routes read, and what a value must be for each. */
const DIGITS = (value: string) => /^[0-9]*$/.test(value);
const BOOLEAN_WORD = (value: string) =>
  ['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off', ''].includes(value.trim().toLowerCase());
const QUERY_RULES: Record<string, Record<string, (value: string) => boolean>> = {
  '/api/sessions': {
    limit: DIGITS,
    include_hidden: BOOLEAN_WORD,
    include_children: BOOLEAN_WORD,
    title: (value) => [...value.replace(/\s+/g, ' ').trim()].length <= 100,
  },
  '/api/sessions/{id}/messages': {
    limit: DIGITS,
    after_id: DIGITS,
    order: (value) => value === 'oldest' || value === 'latest',
  },
};
const DELETE_SESSION_RULES: Record<string, (value: string) => boolean> = {
  confirm_cascade: BOOLEAN_WORD,
};

const QUERY_NAMES = [
  'limit',
  'offset',
  'title',
  'include_hidden',
  'include_children',
  'source',
  'order',
  'after_id',
  'confirm_cascade',
  'unknown',
  '__proto__',
  'constructor',
];
const QUERY_VALUES = [
  '',
  ' ',
  '-1',
  '+5',
  '0',
  '1e309',
  'NaN',
  '0x10',
  '99999999999999999999999',
  '١٢',
  'true',
  'maybe',
  'ON',
  'latest',
  'Bot Chat',
  'x'.repeat(101),
  'x'.repeat(5000),
  '😀',
  '\u0000',
  '../..',
  '__proto__',
];
/** Escapes that do not decode cleanly: sent as they are. */
const RAW_QUERY_VALUES = ['%ZZ', '%', '%00', '%ED%A0%80', '%FF', '%C0%AF', 'a+b', '%2B5'];

const queryMutation: Mutation = (draft, { dice, template }) => {
  const name =
    dice.chance(0.6) && draft.query.length > 0 ? dice.pick(draft.query)[0] : dice.pick(QUERY_NAMES);
  const rules =
    template.method === 'DELETE' && template.path === '/api/sessions/{id}'
      ? DELETE_SESSION_RULES
      : template.method === 'GET'
        ? (QUERY_RULES[template.path] ?? {})
        : {};
  const form = dice.int(10);
  draft.query = draft.query.filter(([key]) => key !== name);
  if (form <= 5) {
    const value = dice.pick(QUERY_VALUES);
    draft.query.push([name, encodeURIComponent(value)]);
    const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
    return {
      label: `query ${name}=${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`,
      verdict: rule && !rule(value) ? 'reject' : 'any',
      aspect: `query ${name}`,
    };
  }
  if (form <= 7) {
    const value = dice.pick(RAW_QUERY_VALUES);
    draft.query.push([name, value]);
    return { label: `query ${name}=${value} (raw)`, verdict: 'any', aspect: `query ${name}` };
  }
  if (form === 8) {
    draft.query.push([name, '1'], [name, dice.pick(['x', '-1', 'true', ''])]);
    return { label: `query ${name} repeated`, verdict: 'any', aspect: `query ${name}` };
  }
  draft.query.push([dice.chance(0.5) ? `${name}[]` : `${name}[a]`, '1']);
  return { label: `query ${name} as an array`, verdict: 'any', aspect: `query ${name}` };
};

/** Ids no session, response, run or artifact has, as path segments on the wire. */
const UNKNOWN_IDS = [
  'unknown',
  'x'.repeat(300),
  'x'.repeat(6000),
  '%00',
  '%ZZ',
  '%',
  '..',
  '%2e%2e',
  '%2F',
  'a%2Fb',
  '%F0%9F%98%80',
  '%ED%A0%80',
  '%FF',
  'a%20b',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '%E2%80%AE',
  'api_1_deadbeef',
  'run_unknown',
  'resp_unknown',
  '-1',
  '0',
];

const pathId: Mutation = (draft, { dice, fixtures, template }) => {
  if (draft.id === undefined) return undefined;
  const choice = dice.int(10);
  // Derived from the live id, not from an earlier mutation of it (which could undo it).
  const real = encodeURIComponent(template.id?.(fixtures) ?? '');
  let id: string;
  let listed = false;
  if (choice === 0) id = `${real}%00`;
  else if (choice === 1) id = `${real}x`;
  else if (choice === 2 && real.length > 1) id = real.slice(0, -1);
  else {
    id = dice.pick(UNKNOWN_IDS);
    listed = true;
  }
  // Names that are live ids here are not unknown, nor is a session id another request may
  // have created (`POST /api/sessions` with a fuzzed `id`).
  const live = [fixtures.sessionId, fixtures.patchId, fixtures.responseId, fixtures.runId];
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(id);
  } catch {}
  const maybeSession =
    listed &&
    template.path.startsWith('/api/sessions/') &&
    decoded !== undefined &&
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(decoded);
  draft.id = id;
  return {
    label: `id ${id.length > 40 ? `${id.slice(0, 40)}…` : id}`,
    verdict: live.includes(id) || maybeSession ? 'any' : 'reject',
    aspect: 'id',
  };
};

const pathShape: Mutation = (draft, { dice }) => {
  const form = dice.pick([
    'trailing slash',
    'extra segment',
    'double slash',
    'upper case',
    'dot segment',
    'encoded slash',
    'backslash',
  ]);
  if (form === 'trailing slash') draft.path = `${draft.path}/`;
  else if (form === 'extra segment') draft.path = `${draft.path}/extra`;
  else if (form === 'double slash') draft.path = draft.path.replace(/^\//, '//');
  else if (form === 'upper case') draft.path = draft.path.toUpperCase().replace('{ID}', '{id}');
  else if (form === 'dot segment') draft.path = `${draft.path}/..`;
  else if (form === 'backslash') draft.path = draft.path.replace(/\/([^/]*)$/, '\\$1');
  else draft.path = `${draft.path}%2F`;
  return {
    label: `path ${form}`,
    verdict: 'any',
    rerouted: true,
    malformed: form === 'backslash',
    // Path edits add up: none supersedes another.
    aspect: `path ${form}`,
  };
};

const method: Mutation = (draft, { dice, template }) => {
  // A DELETE of a fixture session would take it from every later request.
  const fixture = template.id !== undefined && template.prepare === undefined;
  const methods = [
    'GET',
    'POST',
    'PUT',
    'PATCH',
    'OPTIONS',
    'HEAD',
    ...(fixture ? [] : ['DELETE']),
  ];
  const chosen = dice.pick(methods);
  if (chosen === draft.method) return undefined;
  draft.method = chosen;
  return { label: `method ${chosen}`, verdict: 'any', rerouted: true, aspect: 'method' };
};

const SESSION_HEADER_VALUES = [
  '',
  ' ',
  'x'.repeat(257),
  'x'.repeat(129),
  '../../etc',
  'a b',
  'caf\u00e9',
  '-leading',
  '\t',
  'api_1_deadbeef',
];

const sessionHeader: Mutation = (draft, { dice, template, fixtures, unique }) => {
  const name = dice.pick(['x-hermes-session-id', 'x-hermes-session-key']);
  const form = dice.int(10);
  let value: string | string[];
  if (form < 6) value = dice.pick(SESSION_HEADER_VALUES);
  else if (form === 6) value = fixtures.sessionId;
  else if (form === 7) value = `fresh_${unique}`;
  else value = [fixtures.sessionId, dice.pick(['other', fixtures.sessionId, ''])];
  draft.headers[name] = value;
  // Chat completions always resolve their session from the headers: a malformed id is a 400.
  const sent = Array.isArray(value) ? value.join(', ') : value;
  const malformed =
    name === 'x-hermes-session-id' && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(sent.trim());
  const completions = template.path === '/v1/chat/completions';
  return {
    label: `${name}: ${JSON.stringify(value).slice(0, 80)}`,
    verdict: completions && malformed ? 'reject' : 'any',
    aspect: `header ${name}`,
  };
};

const idempotencyKey: Mutation = (draft, { dice, unique, template }) => {
  if (template.path !== '/v1/runs') return undefined;
  const value = dice.pick<string | string[]>([
    '',
    'k'.repeat(257),
    'k'.repeat(256),
    'caf\u00e9',
    ' ',
    `key-${unique}`,
    ['a', 'b'],
    'key-repeated',
  ]);
  draft.headers['idempotency-key'] = value;
  const sent = Array.isArray(value) ? value.join(', ') : value;
  return {
    label: `idempotency-key ${JSON.stringify(value).slice(0, 60)}`,
    verdict: sent.trim() === '' || sent.length > 256 ? 'reject' : 'any',
    aspect: 'header idempotency-key',
  };
};

const authorization: Mutation = (draft, { dice, settings, template }) => {
  const key = settings.apiKey;
  const wrong: (string | string[] | undefined)[] = [
    undefined,
    'Bearer',
    'Bearer ',
    `Bearer ${key}x`,
    `Bearer ${key.slice(0, -1)}`,
    `Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
    key,
    `Token ${key}`,
    `Bearer ${'x'.repeat(10_000)}`,
    `Bearer caf\u00e9`,
    ['Bearer wrong', `Bearer ${key}`],
    // Multiplexing: the other profile's key is no key here.
    ...(settings.profile
      ? [
          `Bearer ${settings.profile.otherKey}`,
          [`Bearer ${settings.profile.otherKey}`, `Bearer ${key}`],
        ]
      : []),
  ];
  const accepted: (string | string[])[] = [
    `bearer ${key}`,
    `Bearer  ${key}`,
    `Bearer ${key} `,
    `BEARER ${key}`,
  ];
  const refuse = dice.chance(0.75);
  const value = refuse ? dice.pick(wrong) : dice.pick(accepted);
  if (value === undefined) delete draft.headers.authorization;
  else draft.headers.authorization = value;
  draft.otherKey =
    settings.profile !== undefined && value === `Bearer ${settings.profile.otherKey}`;
  const label = `authorization ${JSON.stringify(value)?.slice(0, 60) ?? 'missing'}`;
  const aspect = 'authorization';
  if (template.public) return { label, verdict: 'any', aspect };
  return { label, verdict: refuse ? 'reject' : 'accept', aspect };
};

const otherHeader: Mutation = (draft, { dice }) => {
  const [name, value] = dice.pick<[string, string | string[]]>([
    ['host', 'exa mple'],
    ['host', '[::1'],
    ['host', 'localhost:99999'],
    ['host', '%'],
    ['host', ''],
    ['host', 'a'.repeat(300)],
    ['if-none-match', '*'],
    ['if-none-match', 'W/"x", "y"'],
    ['if-none-match', '"'],
    ['x-artifact-filename', '../../etc/passwd'],
    ['x-artifact-filename', ''],
    ['x-artifact-filename', 'a'.repeat(1000)],
    ['x-artifact-filename', 'caf\u00e9.txt'],
    ['x-forwarded-for', '10.0.0.1'],
    ['accept', 'text/event-stream'],
    ['accept-encoding', 'gzip, br'],
    ['expect', '100-continue'],
    ['connection', 'upgrade'],
    ['upgrade', 'websocket'],
    ['cookie', 'a=b; __proto__=x'],
  ]);
  draft.headers[name] = value;
  return {
    label: `${name}: ${JSON.stringify(value).slice(0, 60)}`,
    verdict: 'any',
    malformed: name === 'host',
    aspect: `header ${name}`,
  };
};

/** Where a multiplexed prefix leads: the addressed profile, the other served one, or nowhere. */
type PrefixKind = 'same' | 'other' | 'refused';

/** Prefixes on a multiplexing gateway serving `default` and `work` (`parked` is parked). */
const MULTIPLEX_PREFIXES: readonly [string, PrefixKind][] = [
  ['/p/work', 'same'],
  ['/p/WORK', 'same'],
  ['/p/%77ork', 'same'],
  ['/p/%20work%20', 'same'],
  ['/p/default', 'other'],
  ['/p/DEFAULT', 'other'],
  ['/p/%64efault', 'other'],
  // Dot segments are resolved before routing: these are the bare path, the default profile.
  ['/p/..', 'other'],
  ['/p/%2E%2E', 'other'],
  ['/p/parked', 'refused'],
  ['/p/ghost', 'refused'],
  ['/p/profiles', 'refused'],
  ['/p/', 'refused'],
  ['/p/%20', 'refused'],
  ['/p/%09', 'refused'],
  ['/p/%ZZ', 'refused'],
  ['/p/%E0%A4%A', 'refused'],
  ['/p/%00', 'refused'],
  ['/p/work%00', 'refused'],
  ['/p/work%2F..', 'refused'],
  ['/p/..%2Fwork', 'refused'],
  ['/p/%2Fwork', 'refused'],
  ['/p/work%2Fx', 'refused'],
  ['/p/.work', 'refused'],
  ['/p/-work', 'refused'],
  ['/p/__proto__', 'refused'],
  ['/p/constructor', 'refused'],
  ['/p/w%C3%B6rk', 'refused'],
  ['/p/%E2%80%AEwork', 'refused'],
  ['/p/%F0%9F%98%80', 'refused'],
  [`/p/${'a'.repeat(65)}`, 'refused'],
  [`/p/${'w'.repeat(5000)}`, 'refused'],
];

const profilePrefix: Mutation = (draft, { dice, settings, template }) => {
  if (settings.profile) {
    const [prefix, kind] = dice.pick(MULTIPLEX_PREFIXES);
    draft.prefix = prefix;
    draft.profileRefused = kind === 'refused';
    draft.addressesOther = kind === 'other';
    const label = `profile prefix ${prefix.length > 40 ? `${prefix.slice(0, 40)}…` : prefix}`;
    // Another profile's routes want that profile's key (the public ones none).
    const verdict: Verdict =
      kind === 'refused' ? 'reject' : kind === 'other' && !template.public ? 'reject' : 'accept';
    return { label, verdict, aspect: 'profile' };
  }
  const [prefix, refused] = dice.pick<[string, boolean]>([
    ['/p/other', true],
    ['/p/%ZZ', true],
    ['/p/', true],
    ['/p/%20', true],
    ['/p/default%2F..', true],
    // Dot segments are resolved before routing: this is the bare path.
    ['/p/..', false],
    ['/p/%00', true],
    ['/p/__proto__', true],
    ['/p/constructor', true],
    ['/p/%64efault', false],
    ['/p/DEFAULT', false],
  ]);
  draft.prefix = prefix;
  draft.profileRefused = refused;
  return {
    label: `profile prefix ${prefix}`,
    verdict: refused ? 'reject' : 'any',
    aspect: 'profile',
  };
};

const MUTATIONS: readonly [Mutation, number][] = [
  [replaceField, 26],
  [dropField, 6],
  [addField, 6],
  [duplicateKey, 4],
  [wholeBody, 9],
  [invalidUtf8, 3],
  [contentType, 4],
  [bodySize, 4],
  [queryMutation, 8],
  [pathId, 8],
  [pathShape, 2],
  [method, 3],
  [sessionHeader, 5],
  [idempotencyKey, 2],
  [authorization, 5],
  [otherHeader, 3],
  [profilePrefix, 3],
];
/** Multiplexing: prefixes and keys are what is under test, so they are drawn more often. */
const MULTIPLEX_MUTATIONS: readonly [Mutation, number][] = MUTATIONS.map(([mutation, weight]) => [
  mutation,
  mutation === profilePrefix ? 16 : mutation === authorization ? 10 : weight,
]);

function pickMutation(dice: Dice, settings: FuzzSettings): Mutation {
  const table = settings.profile ? MULTIPLEX_MUTATIONS : MUTATIONS;
  let roll = dice.int(table.reduce((sum, [, weight]) => sum + weight, 0));
  for (const [mutation, weight] of table) {
    if (roll < weight) return mutation;
    roll -= weight;
  }
  return replaceField;
}

function combine(outcomes: readonly Outcome[], base: Verdict, body: Verdict): Verdict {
  // A request sent elsewhere is judged by the invariants alone.
  if (outcomes.some((outcome) => outcome.rerouted)) return 'any';
  const verdicts = [base, body, ...outcomes.map((outcome) => outcome.verdict)];
  if (verdicts.includes('reject')) return 'reject';
  return verdicts.every((verdict) => verdict === 'accept') ? 'accept' : 'any';
}

/** Adds `outcome`, dropping what it supersedes (the same aspect; every body edit for a new body). */
function record(outcomes: Outcome[], outcome: Outcome): void {
  for (let index = outcomes.length - 1; index >= 0; index -= 1) {
    const earlier = outcomes[index];
    const superseded =
      (outcome.aspect !== undefined && earlier?.aspect === outcome.aspect) ||
      (outcome.aspect === 'whole body' && earlier?.body === true);
    if (superseded) outcomes.splice(index, 1);
  }
  outcomes.push(outcome);
}

function wirePath(draft: Draft): string {
  const path = draft.id === undefined ? draft.path : draft.path.replace('{id}', draft.id);
  const query = draft.query.map(([key, value]) => `${key}=${value}`).join('&');
  return `${draft.prefix}${path}${query ? `?${query}` : ''}`;
}

function wireBody(draft: Draft): Buffer | undefined {
  let body =
    draft.raw ?? (draft.json !== undefined ? Buffer.from(serialize(draft.json)) : undefined);
  if (body !== undefined && draft.padTo !== undefined && body.byteLength < draft.padTo)
    body = Buffer.concat([body, Buffer.alloc(draft.padTo - body.byteLength, 0x20)]);
  return body;
}

/** The `index`-th request of a run: the template's valid request, mutated 0–3 times. */
export function generateCase(input: {
  index: number;
  dice: Dice;
  template: RouteTemplate;
  fixtures: Fixtures;
  settings: FuzzSettings;
  unique: string;
}): FuzzCase {
  const { dice, fixtures, settings, unique, template } = input;
  const id = template.id?.(fixtures);
  const plainBody = template.body?.(fixtures, unique);
  const draft: Draft = {
    method: template.method,
    prefix: settings.profile
      ? dice.pick([settings.profile.prefix, ...settings.profile.aliases])
      : dice.chance(0.2)
        ? '/p/default'
        : '',
    path: template.path,
    id: id === undefined ? undefined : encodeURIComponent(id),
    query: Object.entries(template.query?.(fixtures) ?? {}).map(([key, value]) => [
      key,
      encodeURIComponent(value),
    ]),
    headers: {
      authorization: `Bearer ${settings.apiKey}`,
      ...(plainBody !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(template.headers?.(fixtures, unique) ?? {}),
    },
    json: plainBody === undefined ? undefined : cloneJson(fromPlain(plainBody)),
    raw: template.rawBody?.(),
    chunked: false,
    padTo: undefined,
    profileRefused: false,
    addressesOther: false,
    otherKey: false,
    uncertainBody: false,
  };
  const context: MutationContext = { dice, template, fixtures, settings, unique };
  const roll = dice.int(100);
  const count = roll < 8 ? 0 : roll < 85 ? 1 : roll < 96 ? 2 : 3;
  const outcomes: Outcome[] = [];
  for (let applied = 0, attempt = 0; applied < count && attempt < 20; attempt += 1) {
    const outcome = pickMutation(dice, settings)(draft, context);
    if (!outcome) continue;
    if (outcome.body && outcome.verdict === 'any') draft.uncertainBody = true;
    record(outcomes, outcome);
    applied += 1;
  }
  const base: Verdict = template.refusedBase ? 'reject' : 'accept';
  // A request no URL can be made of is refused before its profile is looked at.
  const profileRefused = draft.profileRefused && !outcomes.some((outcome) => outcome.malformed);
  // The final JSON body, judged as a whole (a raw body was judged by the mutation that made it).
  const body =
    draft.json !== undefined && draft.raw === undefined
      ? bodyVerdict(template, draft.json)
      : 'accept';
  let verdict = draft.profileRefused ? 'reject' : combine(outcomes, base, body);
  // The other profile's prefix with that profile's own key: a request of its own, judged by the
  // invariants alone (and it may change that profile's store).
  const touchesOther = draft.addressesOther && draft.otherKey;
  if (touchesOther) verdict = 'any';
  const disturbed = outcomes.some((outcome) => outcome.rerouted || outcome.malformed);
  const profileServed = !draft.profileRefused && draft.prefix.startsWith('/p/') && !disturbed;
  const bytes = wireBody(draft);
  // Over the limit is a 413 before anything reads it (by its declared length) — or, sent
  // without one, once a route reads it. Artifacts have their own limit.
  const overLimit =
    bytes !== undefined &&
    bytes.byteLength > settings.maxRequestBytes &&
    !template.path.startsWith('/v1/artifacts/');
  // Sent chunked, only a route that reads its body finds out.
  const read = template.body !== undefined && verdict !== 'any';
  if (overLimit && (!draft.chunked || read)) verdict = 'reject';
  return {
    index: input.index,
    template,
    mutations: outcomes.map((outcome) => outcome.label),
    verdict,
    profileRefused,
    profileServed,
    addressesOther: draft.addressesOther,
    touchesOther,
    request: {
      method: draft.method,
      path: wirePath(draft),
      headers: draft.headers,
      ...(bytes === undefined ? {} : { body: bytes }),
      chunked: draft.chunked,
    },
  };
}
