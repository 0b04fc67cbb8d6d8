import * as v from 'valibot';
import { MAX_MESSAGE_BYTES, RequestIdSchema, RequestSchema } from '../src/contract/envelope.js';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import { isMethodName, METHODS, type MethodName } from '../src/contract/methods.js';
import { buildOpenRpcDocument } from '../src/contract/openrpc.js';

/**
 * The generator and the oracle of the params fuzz (params-fuzz.e2e.test.ts): requests built from
 * a valid one per method, mutated by a seeded random source, written as raw JSON lines (so they
 * can hold what `JSON.stringify` cannot write: 1e309, -0, integers past 2^53, duplicate keys,
 * 100,000 levels of nesting), and what the contract says the bridge must answer to each.
 */

export type Random = () => number;

/** What a base request may point at: live and stored ids the fuzz set up. */
export interface FuzzContext {
  readonly home: string;
  readonly liveId: string;
  readonly storedId: string;
  readonly otherLiveId: string;
  readonly closedLiveId: string;
  /** A fresh live session for session.close to close. */
  readonly victimId: string;
  /** Bot relay envelopes claimed for this front end (delivered or replied at most once). */
  readonly claimedIds: readonly string[];
}

/** A valid request per method: every method of the contract must be here (the type says so). */
export const BASE_PARAMS: {
  readonly [M in MethodName]: (context: FuzzContext, n: number) => Record<string, unknown>;
} = {
  'session.create': (context, n) => ({ profile: 'default', title: `fuzz ${n}`, cwd: context.home }),
  'session.list': () => ({
    profile: 'default',
    limit: 5,
    offset: 0,
    include_hidden: false,
    search: 'seed',
  }),
  'session.resume': (context) => ({ session_id: context.storedId, profile: 'default' }),
  'session.close': (context) => ({ session_id: context.victimId }),
  'prompt.submit': (context) => ({ session_id: context.liveId, text: 'hello again' }),
  'prompt.interrupt': (context) => ({ session_id: context.liveId }),
  'slash.exec': (context) => ({ session_id: context.liveId, command: '/status' }),
  'command.dispatch': (context) => ({ session_id: context.liveId, name: 'steer', arg: 'go on' }),
  'subagent.list': (context) => ({ session_id: context.liveId }),
  'subagent.steer': (context) => ({
    session_id: context.liveId,
    subagent_id: 'sa-0-deadbeef',
    message: 'hello?',
  }),
  'subagent.interrupt': (context) => ({ session_id: context.liveId, subagent_id: 'sa-0-deadbeef' }),
  'profiles.list': () => ({}),
  'approval.respond': (context) => ({
    session_id: context.liveId,
    request_id: 'apr_000000000000',
    decision: 'once',
  }),
  'bot_relay.roster.sync': () => ({ bots: [{ profile: 'default', name: 'Fuzz bot' }] }),
  'bot_relay.outbox.drain': () => ({ profiles: ['default'], limit: 10 }),
  'bot_relay.deliver': () => ({ envelope_id: 'a'.repeat(32) }),
  'bot_relay.reply': () => ({
    envelope_id: 'b'.repeat(32),
    text: 'hi',
    status: 'delivered',
    error: 'none',
  }),
};

// ---------------------------------------------------------------------------------------------
// Raw JSON: a marker string that `toLine` replaces by its text, unquoted.

const RAW_PREFIX = '\u0000raw:';

/** `text` written into the line as it is (a number or structure JSON.stringify cannot produce). */
export function raw(text: string): string {
  return `${RAW_PREFIX}${text}\u0000`;
}

const RAW_LITERAL = /"\\u0000raw:(?:[^"\\]|\\.)*?\\u0000"/g;

/** The JSON line for `value`, raw markers replaced by their text. */
export function toLine(value: unknown): string {
  return JSON.stringify(value).replace(RAW_LITERAL, (literal) =>
    (JSON.parse(literal) as string).slice(RAW_PREFIX.length, -1),
  );
}

/** An object whose own keys include `__proto__` (as JSON.parse makes it, not a prototype). */
function withOwnKeys(entries: readonly [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(object, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return object;
}

/** Every key written twice, a bad value first: JSON.parse keeps the last, so this stays valid. */
function duplicateKeys(params: Record<string, unknown>): string {
  const bad = Object.keys(params).map((key) => `${JSON.stringify(key)}:{"bad":[null]},`);
  return raw(`{${bad.join('')}${toLine(params).slice(1)}`);
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function deepArray(depth: number): string {
  return raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
}

function deepObject(depth: number): string {
  return raw(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
}

/** Values of every JSON type and the strings that tend to break things. */
function weirdValue(random: Random, context: FuzzContext): unknown {
  const roll = random();
  if (roll < 0.02) return deepArray(100_000);
  if (roll < 0.04) return deepObject(20_000);
  if (roll < 0.06) return 'y'.repeat(300_000);
  return pick(random, [
    null,
    true,
    false,
    0,
    -1,
    1,
    1.5,
    -2.25,
    1e308,
    -1e308,
    5e-324,
    Number.MAX_SAFE_INTEGER,
    2 ** 53 + 2,
    raw('1e309'),
    raw('-1e309'),
    raw('-0'),
    raw('123456789012345678901234567890'),
    raw('1E400'),
    raw('0.00000000000000000000000000000001'),
    'NaN',
    'Infinity',
    '-0',
    '1e309',
    '',
    ' ',
    '\t\n\r',
    '\u0000',
    'nul\u0000inside',
    '\ud800',
    '\udfff',
    'lone \ud83d high',
    'lone \ude00 low',
    '\ud83d\ude00\ud83d\ude00',
    '\u202e\u2066bidi\u2069',
    '\u2028\u2029',
    '\ufeff',
    '__proto__',
    'constructor',
    '/constructor',
    '/__proto__',
    'prototype',
    'toString',
    'hasOwnProperty',
    '../../etc/passwd',
    '..',
    '/',
    '/nonexistent/folder',
    'C:\\Windows',
    '\\\\host\\share',
    '%s%n%x',
    '$' + '{7*7}',
    "' OR 1=1; --",
    '"quoted"',
    '*',
    'NEAR(a b)',
    '"unterminated',
    'x'.repeat(10_000),
    [],
    [null],
    [1, 'a', {}],
    {},
    { a: 1 },
    withOwnKeys([['__proto__', { polluted: true }]]),
    { constructor: { prototype: { polluted: true } } },
    context.storedId,
    context.otherLiveId,
    context.closedLiveId,
    deepArray(64),
  ]);
}

/**
 * Values a field's handler tells apart (commands, titles the store treats specially, profile
 * spellings, claimed envelopes): mutations reach past the schema into the methods. `/review` is
 * left out: the reviewer it starts keeps writing after the reply (review.e2e.test.ts covers it).
 */
function domainValues(field: string, context: FuzzContext): readonly unknown[] {
  switch (field) {
    case 'command':
      return [
        '/help',
        '/status',
        '/usage',
        '/history',
        '/title',
        '/title Fuzzed title',
        '/title Seed chat',
        `/title ${'t'.repeat(150)}`,
        '/title \u200b\u0000',
        '/title Bot Chat',
        '/compress',
        '/compress the tools',
        '/tools',
        '/model',
        '/agents',
        '/version',
        '/profile',
        '/stop',
        '/queue',
        '/queue do more',
        '/steer',
        '/steer left',
        '/retry',
        '/undo',
        '/new',
        '/resume',
        '/quit',
        '/sessions',
        '/haiku',
        '/no-such-command',
        '//',
        '/ ',
        '/status extra args',
        'status',
        '/STATUS',
        '/__proto__',
        '/constructor',
        '/toString',
        '/hasOwnProperty',
        '/valueOf',
        '/prototype',
      ];
    case 'name':
      return [
        'queue',
        'steer',
        'retry',
        'compress',
        'undo',
        'help',
        'status',
        'QUEUE',
        '/queue',
        'haiku',
        'review',
        '__proto__',
        'constructor',
        'toString',
        'valueOf',
      ];
    case 'arg':
    case 'message':
    case 'text':
      return ['', ' ', 'do more', '/status', 'NO_REPLY', '[SILENT]', 'x'.repeat(100_000)];
    case 'title':
    case 'search':
      return [
        'Bot Chat',
        'bot chat',
        'Seed chat',
        ' Seed chat ',
        '\u200bSeed chat',
        'Seed%',
        '_',
        '%',
        '\\',
      ];
    case 'profile':
    case 'profiles':
      return [
        'default',
        'DEFAULT',
        'Default',
        ' default',
        'ghost',
        '../default',
        'profiles',
        '.',
        'a'.repeat(64),
        ['default', 'default'],
      ];
    case 'envelope_id':
      return [...context.claimedIds, '0'.repeat(32), 'A'.repeat(32), `${'a'.repeat(32)}.json`];
    case 'session_id':
      return [
        context.liveId,
        context.storedId,
        context.otherLiveId,
        context.closedLiveId,
        'tui_',
        'Bot Chat',
      ];
    case 'bots':
      return [
        [{ profile: 'ghost' }],
        [{ profile: 'default' }, { profile: 'default' }],
        [{ profile: 'default', name: '' }],
      ];
    default:
      return [];
  }
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/** Each method's params as JSON Schema (the OpenRPC document generated from the contract). */
const PARAM_SCHEMAS: Record<string, Record<string, JsonSchema>> = Object.fromEntries(
  (
    buildOpenRpcDocument('fuzz').methods as {
      name: string;
      params: { name: string; schema: JsonSchema }[];
    }[]
  ).map((method) => [
    method.name,
    Object.fromEntries(method.params.map((param) => [param.name, param.schema])),
  ]),
);

/** Values at and just past a field's limits (its JSON Schema): both sides of every bound. */
function boundaryValue(random: Random, schema: JsonSchema, valid: unknown): unknown {
  const options: unknown[] = [];
  if (schema.type === 'string') {
    if (schema.maxLength !== undefined) {
      options.push('x'.repeat(schema.maxLength), 'x'.repeat(schema.maxLength + 1));
      // UTF-16 units, not code points: an emoji is two.
      options.push('\ud83d\ude00'.repeat(Math.ceil((schema.maxLength + 1) / 2)));
    }
    if (schema.minLength !== undefined && schema.minLength > 0)
      options.push('x'.repeat(schema.minLength - 1));
    if (typeof valid === 'string') options.push(`${valid} `, ` ${valid}`, valid.toUpperCase());
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.minimum !== undefined) options.push(schema.minimum, schema.minimum - 1);
    if (schema.maximum !== undefined) options.push(schema.maximum, schema.maximum + 1);
    if (schema.type === 'integer') options.push(1.5, raw('2.0'), raw('1e2'));
    if (typeof valid === 'number') options.push(String(valid));
  }
  if (schema.enum)
    options.push(
      ...schema.enum.map((value) => String(value).toUpperCase()),
      `${String(schema.enum[0])} `,
    );
  if (schema.type === 'boolean') options.push('true', 1, 0);
  if (schema.type === 'array') {
    const item = Array.isArray(valid) ? valid[0] : undefined;
    if (schema.maxItems !== undefined) {
      options.push(Array.from({ length: schema.maxItems }, () => item));
      options.push(Array.from({ length: schema.maxItems + 1 }, () => item));
    }
    options.push([], [item, item]);
  }
  return options.length > 0 ? pick(random, options) : valid;
}

const UNKNOWN_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '',
  '\ud800',
  'extra',
  'jsonrpc',
  'id',
];

/** One mutation of a params object (in place; `__proto__` keys are made own properties). */
function mutateObject(
  random: Random,
  params: Record<string, unknown>,
  schema: Record<string, JsonSchema>,
  context: FuzzContext,
  notes: string[],
): void {
  const fields = Object.keys(schema);
  const roll = random();
  if (roll < 0.25 && fields.length > 0) {
    const field = pick(random, fields);
    params[field] = weirdValue(random, context);
    notes.push(`${field}=weird`);
  } else if (roll < 0.4 && fields.length > 0) {
    const field = pick(random, fields);
    const values = domainValues(field, context);
    params[field] = values.length > 0 ? pick(random, values) : weirdValue(random, context);
    notes.push(`${field}=${values.length > 0 ? 'domain' : 'weird'}`);
  } else if (roll < 0.6 && fields.length > 0) {
    const field = pick(random, fields);
    const fieldSchema = schema[field] ?? {};
    // Arrays of objects (bots) and of strings (profiles): mutate inside, too.
    if (fieldSchema.type === 'array' && Array.isArray(params[field]) && random() < 0.5) {
      const list = [...(params[field] as unknown[])];
      const index = Math.floor(random() * (list.length + 1));
      const item = list[index] ?? list[0];
      if (fieldSchema.items?.type === 'object' && typeof item === 'object' && item !== null) {
        const copy = { ...(item as Record<string, unknown>) };
        mutateObject(random, copy, fieldSchema.items.properties ?? {}, context, notes);
        list[index] = copy;
      } else {
        list[index] = weirdValue(random, context);
      }
      params[field] = list;
      notes.push(`${field}[${index}] mutated`);
    } else {
      params[field] = boundaryValue(random, fieldSchema, params[field]);
      notes.push(`${field}=boundary`);
    }
  } else if (roll < 0.75 && fields.length > 0) {
    const field = pick(random, fields);
    delete params[field];
    notes.push(`-${field}`);
  } else {
    const key = pick(random, UNKNOWN_KEYS);
    Object.defineProperty(params, key, {
      value: weirdValue(random, context),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    notes.push(`+${JSON.stringify(key)}`);
  }
}

export interface FuzzRequest {
  readonly method: string;
  /** The request object (raw markers inside), written with `toLine`. */
  readonly request: Record<string, unknown>;
  /** What was done to the valid request, for the failure report. */
  readonly notes: string;
}

/** A request for `method`: its valid params, mutated (or not: some stay valid). */
export function fuzzRequest(
  random: Random,
  method: MethodName,
  context: FuzzContext,
  n: number,
): FuzzRequest {
  const notes: string[] = [];
  let params: unknown = BASE_PARAMS[method](context, n);
  const schema = PARAM_SCHEMAS[method] ?? {};
  const roll = random();
  if (roll < 0.1) {
    // The params member itself of another shape.
    params = pick(random, [
      [],
      [params],
      Object.values(params as Record<string, unknown>),
      'params',
      42,
      true,
      null,
      raw('1e309'),
      undefined,
      deepArray(100_000),
      withOwnKeys([['__proto__', params]]),
      { constructor: params },
      duplicateKeys(params as Record<string, unknown>),
    ]);
    notes.push('params reshaped');
  } else if (roll < 0.16) {
    notes.push('unchanged');
  } else {
    const count = 1 + Math.floor(random() * random() * 4);
    for (let index = 0; index < count; index += 1)
      mutateObject(random, params as Record<string, unknown>, schema, context, notes);
  }
  const request: Record<string, unknown> = { jsonrpc: '2.0', id: n, method };
  if (params === undefined) delete request.params;
  else request.params = params;
  return { method, request, notes: notes.join(', ') };
}

/** An id for request `n`: mostly unique numbers, sometimes of an odd type. */
export function fuzzId(random: Random, n: number): unknown {
  const roll = random();
  if (roll < 0.6) return n;
  return pick(random, [
    `id-${n}`,
    n + 0.5,
    -n,
    `${n}:${'i'.repeat(20_000)}`,
    `\ud800${n}`,
    null,
    { n },
    [n],
    true,
    raw('1e309'),
    raw('-0'),
    raw('123456789012345678901234567890'),
    '',
  ]);
}

/**
 * Lines that are not one JSON value: answered -32700 with a null id (a blank line is ignored).
 * `oversized` is one line past the line limit, a valid request otherwise.
 */
export function junkLine(random: Random, options: { oversized: boolean; liveId: string }): string {
  const request = toLine({
    jsonrpc: '2.0',
    id: 'junk',
    method: 'prompt.submit',
    params: { session_id: options.liveId, text: 'junk' },
  });
  if (options.oversized) return request.replace('"junk"}', `"${'j'.repeat(MAX_MESSAGE_BYTES)}"}`);
  return pick(random, [
    request.slice(0, -1),
    `\ufeff${request}`,
    `${request}}`,
    `${request} ${request}`,
    "{'jsonrpc':'2.0'}",
    'undefined',
    'NaN',
    '   ',
    '\t',
  ]);
}

// ---------------------------------------------------------------------------------------------
// The oracle.

export type Verdict =
  | 'parseError'
  | 'invalidRequest'
  | 'methodNotFound'
  | 'invalidParams'
  | 'valid';

export interface MemberExpectation {
  /** The id the reply must carry. */
  readonly id: unknown;
  readonly verdict: Verdict;
  readonly method: MethodName | undefined;
}

/** What the contract says one member (a request object or anything else) gets: a reply or none. */
export function judge(value: unknown): MemberExpectation | undefined {
  const request = v.safeParse(RequestSchema, value);
  if (!request.success) {
    const id =
      typeof value === 'object' && value !== null && Object.hasOwn(value, 'id')
        ? (value as { id: unknown }).id
        : null;
    return {
      id: v.is(RequestIdSchema, id) ? id : null,
      verdict: 'invalidRequest',
      method: undefined,
    };
  }
  const { id, method, params } = request.output;
  if (id === undefined) return undefined; // a notification is never answered
  if (method === 'event' || !isMethodName(method))
    return { id, verdict: 'methodNotFound', method: undefined };
  if (Array.isArray(params) || !v.safeParse(METHODS[method].params, params ?? {}).success)
    return { id, verdict: 'invalidParams', method };
  return { id, verdict: 'valid', method };
}

/** True when params of `request` are invalid by the contract (a notification to send). */
export function hasInvalidParams(request: Record<string, unknown>): boolean {
  return judge(JSON.parse(toLine(request)))?.verdict === 'invalidParams';
}

const VERDICT_CODES: Record<Exclude<Verdict, 'valid'>, number> = {
  parseError: RPC_ERROR_CODES.parseError,
  invalidRequest: RPC_ERROR_CODES.invalidRequest,
  methodNotFound: RPC_ERROR_CODES.methodNotFound,
  invalidParams: RPC_ERROR_CODES.invalidParams,
};

/** Codes a method may answer to params the contract accepts (its application codes). */
function allowedCodes(method: MethodName): ReadonlySet<number> {
  const transport = new Set<number>([
    RPC_ERROR_CODES.parseError,
    RPC_ERROR_CODES.invalidRequest,
    RPC_ERROR_CODES.methodNotFound,
    RPC_ERROR_CODES.internalError,
    // Valid by the schema; only session.create checks more (cwd exists, title free).
    ...(method === 'session.create' ? [] : [RPC_ERROR_CODES.invalidParams]),
  ]);
  return new Set(Object.values(RPC_ERROR_CODES).filter((code) => !transport.has(code)));
}

/** Text that only shows up when a JS value leaked where a string belonged. */
const LEAKS = ['[object Object]', '[native code]', 'function Object()'];

/** Why `reply` is not what `expected` calls for, or undefined when it is. */
export function checkReply(expected: MemberExpectation, reply: unknown): string | undefined {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply))
    return `reply is not an object: ${short(JSON.stringify(reply))}`;
  const message = reply as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  if (message.jsonrpc !== '2.0') return 'reply without jsonrpc "2.0"';
  if (message.id !== expected.id)
    return `reply id ${short(JSON.stringify(message.id))}, expected ${short(JSON.stringify(expected.id))}`;
  if ('result' in message === 'error' in message)
    return 'reply needs exactly one of result and error';
  const text = JSON.stringify(reply);
  const leak = LEAKS.find((marker) => text.includes(marker));
  if (leak) return `reply leaks a JS value (${leak}): ${short(text)}`;
  if ('error' in message) {
    const error = message.error as { code?: unknown; message?: unknown };
    if (typeof error?.code !== 'number' || typeof error.message !== 'string')
      return `malformed error: ${short(text)}`;
    if (expected.verdict !== 'valid') {
      const code = VERDICT_CODES[expected.verdict];
      return error.code === code
        ? undefined
        : `error ${error.code} (${short(error.message)}), expected ${code} (${expected.verdict})`;
    }
    if (!expected.method || !allowedCodes(expected.method).has(error.code))
      return `error ${error.code} (${short(error.message)}) for params the contract accepts`;
    return undefined;
  }
  if (expected.verdict !== 'valid') return `answered a result, expected ${expected.verdict}`;
  const method = expected.method as MethodName;
  const result = v.safeParse(METHODS[method].result, message.result);
  return result.success
    ? undefined
    : `result does not match the contract (${result.issues.map((issue) => issue.message).join('; ')}): ${short(text)}`;
}

export function short(text: string | undefined, limit = 400): string {
  if (text === undefined) return 'undefined';
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} chars)` : text;
}
