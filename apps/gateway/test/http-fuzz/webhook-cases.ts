import { createHmac } from 'node:crypto';
import { clipQuoted } from '../../src/http/body.js';
import type { WireRequest } from './client.js';
import type { Dice } from './weird-values.js';

/**
 * The webhook platform's fuzz: each request starts as a valid delivery to one configured route
 * and is mutated (signature, body, content type, path, profile prefix, method, event, delivery id,
 * size, replays). What each mutation did is tracked, and `expectedAnswers` walks the checks of
 * docs/operations.md (§Platforms and adapters, "Webhook") in their documented order to say which
 * answers the contract allows. Where the docs are silent the expectation is mature behaviour (a
 * JSON body is JSON whatever its Content-Type, a blank delivery id is no id, a signed delivery is
 * taken once), or both answers are allowed.
 */

export const WEBHOOK_MAX_BODY_BYTES = 16 * 1024;
const SECRET_A = 'whsec-fuzz-a-0123456789';
const SECRET_B = 'whsec-fuzz-b-9876543210';
const SECRET_DYNAMIC = 'whsec-fuzz-dynamic-55555';
/** docs/operations.md: a V2 timestamp is accepted within 300 s of the gateway's clock. */
const TOLERANCE_S = 300;
/** The limited route's budget per 60 s window. */
export const LIMITED_RATE = 5;
const PUSH_PROMPT = 'Push to {payload.repository.name}: {payload.head_commit.message}';

/** The profiles of the fuzz gateway that a webhook request can address. */
export type FuzzProfile = 'default' | 'work';

export interface WebhookRouteSpec {
  readonly name: string;
  /** The profile whose config (or `webhook_subscriptions.json`) declares it. */
  readonly table: FuzzProfile;
  /** `undefined`: no secret; `INSECURE_NO_AUTH` turns the check off (dynamic: loopback only). */
  readonly secret: string | undefined;
  readonly enabled: boolean;
  /** The profile it is bound to (`profile:`, absent = its table's); null: a `profile:` that never matches. */
  readonly profile: FuzzProfile | null;
  readonly events?: readonly string[];
  readonly deliverOnly: boolean;
  readonly rateLimit?: number;
  readonly dynamic?: boolean;
}

const DEFAULT_ROUTE = { table: 'default', profile: 'default', enabled: true } as const;
const WORK_ROUTE = { table: 'work', profile: 'work', enabled: true } as const;

export const WEBHOOK_ROUTES: readonly WebhookRouteSpec[] = [
  {
    ...DEFAULT_ROUTE,
    name: 'push',
    secret: SECRET_A,
    events: ['push', 'ping'],
    deliverOnly: false,
  },
  { ...DEFAULT_ROUTE, name: 'any', secret: SECRET_B, deliverOnly: false },
  { ...DEFAULT_ROUTE, name: 'notify', secret: SECRET_A, deliverOnly: true },
  {
    ...DEFAULT_ROUTE,
    name: 'limited',
    secret: SECRET_B,
    deliverOnly: true,
    rateLimit: LIMITED_RATE,
  },
  { ...DEFAULT_ROUTE, name: 'off', secret: SECRET_A, enabled: false, deliverOnly: true },
  { ...DEFAULT_ROUTE, name: 'nosecret', secret: undefined, deliverOnly: true },
  // The listener's routes bound to work (reached under /p/work only) and to no profile.
  { ...DEFAULT_ROUTE, name: 'work_only', secret: SECRET_A, profile: 'work', deliverOnly: true },
  { ...DEFAULT_ROUTE, name: 'nobody', secret: SECRET_A, profile: null, deliverOnly: true },
  { ...DEFAULT_ROUTE, name: 'dyn', secret: SECRET_DYNAMIC, deliverOnly: true, dynamic: true },
  { ...DEFAULT_ROUTE, name: 'open', secret: 'INSECURE_NO_AUTH', deliverOnly: true, dynamic: true },
  // Work's own: `notify` again under work's secret, a turn route, one bound back to default.
  { ...WORK_ROUTE, name: 'notify', secret: SECRET_B, deliverOnly: true },
  { ...WORK_ROUTE, name: 'wpush', secret: SECRET_B, events: ['push'], deliverOnly: false },
  { ...WORK_ROUTE, name: 'wdefault', secret: SECRET_B, profile: 'default', deliverOnly: true },
];

/**
 * The route a request to `name` under `profile`'s prefix meets: the profile's own routes first,
 * then the listener's (the default profile's) bound to it; one bound elsewhere is none.
 */
export function routeFor(
  profile: FuzzProfile,
  name: string | undefined,
): WebhookRouteSpec | undefined {
  if (name === undefined) return undefined;
  const tables: FuzzProfile[] = profile === 'work' ? ['work', 'default'] : ['default'];
  for (const table of tables) {
    const route = WEBHOOK_ROUTES.find((spec) => spec.table === table && spec.name === name);
    if (route?.profile === profile) return route;
  }
  return undefined;
}

/** The `platforms.webhook` block of the fuzz gateway's `config.yaml` (the static routes). */
export function webhookConfigYaml(): string {
  const routes = [
    `      push:\n        secret: ${SECRET_A}\n        events: [push, ping]\n        prompt: "${PUSH_PROMPT}"\n        rate_limit: 1000000`,
    `      any:\n        secret: ${SECRET_B}\n        rate_limit: 1000000`,
    `      notify:\n        secret: ${SECRET_A}\n        deliver_only: true\n        rate_limit: 1000000`,
    `      limited:\n        secret: ${SECRET_B}\n        deliver_only: true\n        rate_limit: ${LIMITED_RATE}`,
    `      off:\n        secret: ${SECRET_A}\n        enabled: false`,
    '      nosecret:\n        deliver_only: true',
    `      work_only:\n        secret: ${SECRET_A}\n        profile: work\n        deliver_only: true\n        rate_limit: 1000000`,
    `      nobody:\n        secret: ${SECRET_A}\n        profile: null\n        deliver_only: true`,
  ];
  return `platforms:\n  webhook:\n    enabled: true\n    port: 0\n    max_body_bytes: ${WEBHOOK_MAX_BODY_BYTES}\n    routes:\n${routes.join('\n')}\n`;
}

/** The `platforms.webhook` block of the served profile `work` (mirrored on the one listener). */
export function workWebhookConfigYaml(): string {
  const routes = [
    `      notify:\n        secret: ${SECRET_B}\n        deliver_only: true\n        rate_limit: 1000000`,
    `      wpush:\n        secret: ${SECRET_B}\n        events: [push]\n        prompt: "${PUSH_PROMPT}"\n        rate_limit: 1000000`,
    `      wdefault:\n        secret: ${SECRET_B}\n        profile: default\n        deliver_only: true`,
  ];
  return `platforms:\n  webhook:\n    enabled: true\n    routes:\n${routes.join('\n')}\n`;
}

/** `webhook_subscriptions.json`: the dynamic routes. */
export function webhookSubscriptionsJson(): string {
  return JSON.stringify({
    routes: {
      dyn: { secret: SECRET_DYNAMIC, deliver_only: true, rate_limit: 1_000_000 },
      open: { secret: 'INSECURE_NO_AUTH', deliver_only: true, rate_limit: 1_000_000 },
    },
  });
}

function hmacHex(secret: string, data: Buffer | string): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

/** One answer the contract allows: a status and the error or the `status` field it carries. */
export interface Allowed {
  readonly status: number;
  /** The error body `{"error": …}`: the exact message, or a pattern it must match. */
  readonly error?: string | RegExp;
  /** A 2xx body's `status` field. */
  readonly outcome?: 'accepted' | 'ignored' | 'duplicate' | 'delivered' | 'ok';
}

type SignatureClass = 'valid' | 'invalid' | 'either';
type BodyClass = 'json' | 'form' | 'garbage' | 'deep' | 'odd';
/** `self` names the default profile, `work` the other served one. */
type PrefixClass = 'none' | 'self' | 'work' | 'refused' | 'unmatched';

/** What a case did, as the checks of the contract see it. */
export interface WebhookFacts {
  /** The path is not `/webhooks/<name>` under an optional `/p/<profile>`: 404 `Not found`. */
  readonly unmatched: boolean;
  readonly health: boolean;
  readonly method: string;
  readonly prefix: PrefixClass;
  /** The route a decodable name names (`undefined`: none). */
  readonly route: WebhookRouteSpec | undefined;
  /** The name as the gateway decodes it (`undefined`: it cannot be decoded). */
  readonly routeName: string | undefined;
  /** The secret the case was signed with (another route's secret makes any signature wrong). */
  readonly signedWith: string;
  readonly overLimit: boolean;
  readonly signature: SignatureClass;
  /** A valid V2 signature, as `<t>:<hex>`: the same signed delivery twice is a replay. */
  readonly signatureKey: string | undefined;
  readonly body: BodyClass;
  /** The event the request names (headers, then the payload's `event`); `null`: may be either. */
  readonly event: string | undefined | null;
  /** The delivery id the headers name (blank is none). */
  readonly deliveryId: string | undefined;
  /** A string the rendered prompt of an accepted turn must contain. */
  readonly marker: string | undefined;
}

export interface WebhookCase {
  readonly index: number;
  readonly routeSpec: WebhookRouteSpec;
  readonly mutations: readonly string[];
  readonly facts: WebhookFacts;
  readonly request: WireRequest;
}

/** How a case is signed once its body is final. */
type Signer = (input: { secret: string; body: Buffer; nowS: number }) => {
  headers: Record<string, string | string[]>;
  signature: SignatureClass;
  key?: string;
};

const v2 =
  (options: {
    offsetS?: number;
    secret?: string;
    over?: (body: Buffer) => Buffer;
    shape?: (t: number, hex: string) => string | string[];
    signature: SignatureClass;
    keyed?: boolean;
  }): Signer =>
  ({ secret, body, nowS }) => {
    const t = nowS + (options.offsetS ?? 0);
    const signed = options.over ? options.over(body) : body;
    const hex = hmacHex(options.secret ?? secret, Buffer.concat([Buffer.from(`${t}.`), signed]));
    const value = options.shape ? options.shape(t, hex) : `t=${t},v1=${hex}`;
    return {
      headers: { 'x-webhook-signature-v2': value },
      signature: options.signature,
      ...(options.signature !== 'invalid' && options.keyed !== false ? { key: `${t}:${hex}` } : {}),
    };
  };

const VALID_V2 = v2({ signature: 'valid' });

/** Signatures: valid, wrong, truncated, duplicated, oddly encoded, stale, V1, none. */
const SIGNERS: readonly [string, Signer][] = [
  ['V2 290 s old', v2({ offsetS: 10 - TOLERANCE_S, signature: 'valid' })],
  ['V2 290 s ahead', v2({ offsetS: TOLERANCE_S - 10, signature: 'valid' })],
  ['V2 310 s old', v2({ offsetS: -TOLERANCE_S - 10, signature: 'invalid' })],
  ['V2 310 s ahead', v2({ offsetS: TOLERANCE_S + 10, signature: 'invalid' })],
  ['V2 with another secret', v2({ secret: 'not-the-secret', signature: 'invalid' })],
  [
    'V2 over another body',
    v2({ over: (body) => Buffer.concat([body, Buffer.from(' ')]), signature: 'invalid' }),
  ],
  [
    'V2 hex truncated',
    v2({ shape: (t, hex) => `t=${t},v1=${hex.slice(0, -1)}`, signature: 'invalid' }),
  ],
  ['V2 hex half', v2({ shape: (t, hex) => `t=${t},v1=${hex.slice(0, 32)}`, signature: 'invalid' })],
  ['V2 without v1', v2({ shape: (t) => `t=${t}`, signature: 'invalid' })],
  ['V2 without t', v2({ shape: (_t, hex) => `v1=${hex}`, signature: 'invalid' })],
  ['V2 empty', v2({ shape: () => '', signature: 'invalid' })],
  [
    'V2 base64 digest',
    v2({
      shape: (t, hex) => `t=${t},v1=${Buffer.from(hex, 'hex').toString('base64')}`,
      signature: 'invalid',
    }),
  ],
  ['V2 sha256= digest', v2({ shape: (t, hex) => `t=${t},v1=sha256=${hex}`, signature: 'invalid' })],
  ['V2 t as a float', v2({ shape: (t, hex) => `t=${t}.0,v1=${hex}`, signature: 'invalid' })],
  ['V2 t signed +', v2({ shape: (t, hex) => `t=+${t},v1=${hex}`, signature: 'invalid' })],
  // Signed over the timestamp's value: a leading zero names the same second.
  ['V2 t padded with a zero', v2({ shape: (t, hex) => `t=0${t},v1=${hex}`, signature: 'either' })],
  ['V2 latin-1 bytes', v2({ shape: (t) => `t=${t},v1=caf\u00e9`, signature: 'invalid' })],
  ['V2 8 KB', v2({ shape: (t) => `t=${t},v1=${'a'.repeat(8192)}`, signature: 'invalid' })],
  [
    'V2 hex upper case',
    v2({ shape: (t, hex) => `t=${t},v1=${hex.toUpperCase()}`, signature: 'either' }),
  ],
  ['V2 spaced', v2({ shape: (t, hex) => `t=${t}, v1=${hex}`, signature: 'either' })],
  [
    'V2 a wrong and a right candidate',
    v2({ shape: (t, hex) => `t=${t},v1=${'0'.repeat(64)},v1=${hex}`, signature: 'either' }),
  ],
  [
    'V2 header twice, wrong first',
    v2({
      shape: (t, hex) => [`t=${t},v1=${'0'.repeat(64)}`, `t=${t},v1=${hex}`],
      signature: 'either',
    }),
  ],
  [
    'V2 header twice, right first',
    v2({
      shape: (t, hex) => [`t=${t},v1=${hex}`, `t=${t},v1=${'0'.repeat(64)}`],
      signature: 'either',
    }),
  ],
  [
    'V1 sha256=',
    ({ secret, body }) => ({
      headers: { 'x-webhook-signature': `sha256=${hmacHex(secret, body)}` },
      signature: 'valid',
    }),
  ],
  [
    'V1 bare hex',
    ({ secret, body }) => ({
      headers: { 'x-webhook-signature': hmacHex(secret, body) },
      signature: 'either',
    }),
  ],
  [
    'V1 SHA256= upper case',
    ({ secret, body }) => ({
      headers: { 'x-webhook-signature': `SHA256=${hmacHex(secret, body)}` },
      signature: 'either',
    }),
  ],
  [
    'V1 wrong',
    ({ body }) => ({
      headers: { 'x-webhook-signature': `sha256=${hmacHex('not-the-secret', body)}` },
      signature: 'invalid',
    }),
  ],
  [
    'V1 sha1=',
    ({ secret, body }) => ({
      headers: {
        'x-webhook-signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
      },
      signature: 'invalid',
    }),
  ],
  [
    'V1 base64',
    ({ secret, body }) => ({
      headers: {
        'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`,
      },
      signature: 'invalid',
    }),
  ],
  [
    // A V2 header that fails is not rescued by a V1 that passes: fail closed.
    'V2 wrong with V1 right',
    ({ secret, body, nowS }) => ({
      headers: {
        'x-webhook-signature-v2': `t=${nowS},v1=${'0'.repeat(64)}`,
        'x-webhook-signature': `sha256=${hmacHex(secret, body)}`,
      },
      signature: 'invalid',
    }),
  ],
  [
    'V2 right with V1 wrong',
    (input) => {
      const signed = VALID_V2(input);
      return {
        ...signed,
        headers: { ...signed.headers, 'x-webhook-signature': 'sha256=00' },
        signature: 'either',
      };
    },
  ],
  ['no signature', () => ({ headers: {}, signature: 'invalid' })],
];

const PREFIXES: readonly [string, PrefixClass][] = [
  ['/p/default', 'self'],
  ['/p/DEFAULT', 'self'],
  ['/p/%64efault', 'self'],
  ['/p/%20default%20', 'self'],
  // Dot segments are resolved before routing: this is the bare path.
  ['/p/..', 'none'],
  // A served profile: its own routes, and the listener's bound to it.
  ['/p/work', 'work'],
  ['/p/WORK', 'work'],
  ['/p/%77ork', 'work'],
  ['/p/%20work%20', 'work'],
  ['/p/parked', 'refused'],
  ['/p/ghost', 'refused'],
  ['/p/%20', 'refused'],
  ['/p/%09', 'refused'],
  ['/p/%ZZ', 'refused'],
  ['/p/%', 'refused'],
  ['/p/%E0%A4%A', 'refused'],
  ['/p/%00', 'refused'],
  ['/p/work%2F..', 'refused'],
  ['/p/..%2Fwork', 'refused'],
  ['/p/%2E%2E%2F%2E%2E', 'refused'],
  ['/p/__proto__', 'refused'],
  ['/p/constructor', 'refused'],
  ['/p/w%C3%B6rk', 'refused'],
  ['/p/%E2%80%AEwork', 'refused'],
  [`/p/${'a'.repeat(65)}`, 'refused'],
  [`/p/${'a'.repeat(3000)}`, 'refused'],
  // An empty segment: refused as a profile or as no webhook path at all.
  ['/p/', 'unmatched'],
];

/** Route segments that name no configured route (or that cannot be decoded: `undefined`). */
const OTHER_NAMES: readonly [string, string | undefined][] = [
  ['nope', 'nope'],
  ['PUSH', 'PUSH'],
  ['push%2Fx', 'push/x'],
  ['%00', '\u0000'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['toString', 'toString'],
  ['caf%C3%A9', 'caf\u00e9'],
  ['%F0%9F%98%80', '\u{1F600}'],
  ['a'.repeat(300), 'a'.repeat(300)],
  ['%E0%A4%A', undefined],
  ['%', undefined],
  ['%ZZ', undefined],
  ['push%', undefined],
  ['%ED%A0%80', undefined],
];

export interface ReplaySource {
  readonly request: WireRequest;
  readonly facts: WebhookFacts;
  readonly routeSpec: WebhookRouteSpec;
}

interface Draft {
  method: string;
  prefix: string;
  prefixClass: PrefixClass;
  segment: string;
  routeName: string | undefined;
  route: WebhookRouteSpec | undefined;
  suffix: string;
  /** `//…`: read as a host, not a path. */
  doubleSlash: boolean;
  headers: Record<string, string | string[]>;
  body: Buffer;
  bodyClass: BodyClass;
  /** The parsed payload (JSON or form), for its `event`. */
  payload: unknown;
  marker: string | undefined;
  chunked: boolean;
  padTo: number | undefined;
  signer: Signer;
  signerLabel: string | undefined;
}

type Mutation = (draft: Draft, dice: Dice, unique: string) => string | undefined;

function basePayload(marker: string) {
  return {
    ref: 'refs/heads/main',
    repository: { name: 'hermes', full_name: 'ada/hermes' },
    head_commit: { message: marker },
    pusher: { name: 'ada' },
  };
}

function nested(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{"event":"push"}${'}'.repeat(levels - 1)}`;
}

const signature: Mutation = (draft, dice) => {
  const [label, signer] = dice.pick(SIGNERS);
  draft.signer = signer;
  draft.signerLabel = label;
  return `signature: ${label}`;
};

const body: Mutation = (draft, dice, unique) => {
  const marker = draft.marker ?? `marker-${unique}`;
  const json = JSON.stringify(basePayload(marker));
  const choices: [string, string | Buffer, BodyClass, unknown, boolean][] = [
    ['array', '[1,"a",null]', 'json', [1, 'a', null], false],
    ['empty array', '[]', 'json', [], false],
    ['string', '"text"', 'json', 'text', false],
    ['number', '42', 'json', 42, false],
    ['null', 'null', 'json', null, false],
    ['true', 'true', 'json', true, false],
    [
      'odd keys',
      `{"__proto__":{"polluted":true},"constructor":{"prototype":1},"":null,"\u{1F600}":"\u202Eevil","head_commit":{"message":"${marker}"}}`,
      'json',
      { head_commit: { message: marker } },
      true,
    ],
    [
      'event in the payload',
      `{"event":"push","head_commit":{"message":"${marker}"}}`,
      'json',
      { event: 'push' },
      true,
    ],
    ['nested at the limit', nested(64), 'json', {}, false],
    ['nested one past the limit', nested(65), 'deep', {}, false],
    ['deep array', `${'['.repeat(7000)}${']'.repeat(7000)}`, 'deep', [], false],
    ['deep object', `${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`, 'deep', {}, false],
    [
      'invalid UTF-8 in a string',
      // Inside the last string value (`"ada"}}`): decoded as U+FFFD, still JSON.
      Buffer.concat([
        Buffer.from(json.slice(0, -3)),
        Buffer.from([0xff, 0xc0, 0xaf]),
        Buffer.from(json.slice(-3)),
      ]),
      'json',
      {},
      true,
    ],
    ['form payload=', `payload=${encodeURIComponent(json)}`, 'form', {}, true],
    ['form fields', `a=1&b=${encodeURIComponent(marker)}`, 'form', { a: '1' }, true],
    ['form payload= not JSON', 'payload=%7Bnot', 'form', { payload: '{not' }, false],
    [
      'form payload= nested past the limit',
      `payload=${encodeURIComponent(nested(65))}`,
      'deep',
      {},
      false,
    ],
    ['empty', '', 'garbage', undefined, false],
    ['only spaces', '  \n ', 'garbage', undefined, false],
    ['unterminated', '{', 'garbage', undefined, false],
    ['half a pair', '{"a":', 'garbage', undefined, false],
    ['single quotes', "{'a':1}", 'garbage', undefined, false],
    ['NUL', '\u0000', 'garbage', undefined, false],
    ['UTF-16', Buffer.from(json, 'utf16le'), 'garbage', undefined, false],
    ['body then garbage', `${json}x`, 'garbage', undefined, false],
    ['byte order mark', `\uFEFF${json}`, 'odd', {}, true],
    ['a word', 'garbage', 'odd', {}, false],
    ['form with an empty pair', 'a=1&&b', 'odd', {}, false],
  ];
  const [label, bytes, bodyClass, payload, keepsMarker] = dice.pick(choices);
  draft.body = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  draft.bodyClass = bodyClass;
  draft.payload = payload;
  draft.marker = keepsMarker ? marker : undefined;
  return `body: ${label}`;
};

const contentType: Mutation = (draft, dice) => {
  const value = dice.pick<string | string[] | undefined>([
    undefined,
    '',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=utf-16',
    'multipart/form-data; boundary=x',
    'application/xml',
    ['application/json', 'application/x-www-form-urlencoded'],
    ['application/x-www-form-urlencoded', 'application/json'],
  ]);
  if (value === undefined) delete draft.headers['content-type'];
  else draft.headers['content-type'] = value;
  return `content-type ${JSON.stringify(value)}`;
};

const size: Mutation = (draft, dice) => {
  const over = dice.chance(0.5);
  draft.chunked = dice.chance(0.4);
  draft.padTo = over ? WEBHOOK_MAX_BODY_BYTES + 1 + dice.int(1000) : WEBHOOK_MAX_BODY_BYTES;
  return `body padded to ${draft.padTo} bytes${draft.chunked ? ', chunked' : ''}`;
};

const routeName: Mutation = (draft, dice) => {
  const [segment, decoded] = dice.pick(OTHER_NAMES);
  draft.segment = segment;
  draft.routeName = decoded;
  draft.route = undefined;
  return `route segment ${segment.length > 40 ? `${segment.slice(0, 40)}…` : segment}`;
};

const pathShape: Mutation = (draft, dice) => {
  const form = dice.pick([
    'trailing slash',
    'extra segment',
    'encoded route name',
    'dot segment',
    'double slash',
    'empty name',
    'query',
    'health',
  ]);
  if (form === 'trailing slash') draft.suffix = '/';
  else if (form === 'extra segment') draft.suffix = '/extra';
  else if (form === 'encoded route name') {
    // Every character escaped: the gateway decodes it to the segment as it was.
    const decoded = draft.segment;
    draft.segment = [...decoded]
      .map((char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .join('');
    draft.routeName = decoded;
    draft.route =
      WEBHOOK_ROUTES.find(
        (route) => route.name === decoded && route.table === draft.route?.table,
      ) ?? WEBHOOK_ROUTES.find((route) => route.name === decoded);
  } else if (form === 'dot segment') draft.segment = `x/../${draft.segment}`;
  else if (form === 'double slash') draft.doubleSlash = true;
  else if (form === 'empty name') draft.segment = '';
  else if (form === 'query') draft.suffix = '?x=1&route=other';
  else draft.suffix = 'health';
  return `path ${form}`;
};

const prefix: Mutation = (draft, dice) => {
  const [value, kind] = dice.pick(PREFIXES);
  draft.prefix = value;
  draft.prefixClass = kind;
  return `profile prefix ${value.length > 40 ? `${value.slice(0, 40)}…` : value}`;
};

const method: Mutation = (draft, dice) => {
  const chosen = dice.pick(['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
  draft.method = chosen;
  return `method ${chosen}`;
};

const event: Mutation = (draft, dice) => {
  const [label, headers] = dice.pick<[string, Record<string, string | string[]>]>([
    ['ping', { 'x-github-event': 'ping' }],
    ['issues', { 'x-github-event': 'issues' }],
    ['PUSH', { 'x-github-event': 'PUSH' }],
    ['empty', { 'x-github-event': '' }],
    ['none', {}],
    ['X-Event-Type push', { 'x-event-type': 'push' }],
    ['X-Event-Type issues', { 'x-event-type': 'issues' }],
    ['empty, then X-Event-Type push', { 'x-github-event': '', 'x-event-type': 'push' }],
    ['twice', { 'x-github-event': ['push', 'issues'] }],
  ]);
  delete draft.headers['x-github-event'];
  Object.assign(draft.headers, headers);
  return `event ${label}`;
};

const DELIVERY_HEADERS = ['x-github-delivery', 'svix-id', 'x-request-id'];

const deliveryId: Mutation = (draft, dice, unique) => {
  for (const name of DELIVERY_HEADERS) delete draft.headers[name];
  const name = dice.pick(DELIVERY_HEADERS);
  const [label, value] = dice.pick<[string, string | string[] | undefined]>([
    ['none', undefined],
    ['empty', ''],
    ['svix-style', `msg_${unique}`],
    ['300 characters', `${unique}-${'d'.repeat(300)}`],
    ['4000 characters', `${unique}-${'d'.repeat(4000)}`],
    ['a path', `../../${unique}/x`],
    ['dots', `${unique}.a.b`],
    ['underscores', `${unique}_a_b`],
    ['latin-1', `caf\u00e9-${unique}`],
    ['twice', [`${unique}-1`, `${unique}-2`]],
  ]);
  if (value !== undefined) draft.headers[name] = value;
  return `delivery id ${label}${value === undefined ? '' : ` in ${name}`}`;
};

const MUTATIONS: readonly [Mutation, number][] = [
  [signature, 14],
  [body, 12],
  [contentType, 5],
  [size, 4],
  [routeName, 4],
  [pathShape, 4],
  [prefix, 6],
  [method, 2],
  [event, 5],
  [deliveryId, 6],
];
const TOTAL_WEIGHT = MUTATIONS.reduce((sum, [, weight]) => sum + weight, 0);

function pickMutation(dice: Dice): Mutation {
  let roll = dice.int(TOTAL_WEIGHT);
  for (const [mutation, weight] of MUTATIONS) {
    if (roll < weight) return mutation;
    roll -= weight;
  }
  return signature;
}

function headerValue(headers: Record<string, string | string[]>, name: string) {
  const value = headers[name];
  // Node joins a repeated header (other than the few it keeps once) with ", ".
  return Array.isArray(value) ? value.join(', ') : value;
}

function eventOf(
  headers: Record<string, string | string[]>,
  payload: unknown,
  bodyClass: BodyClass,
) {
  for (const name of ['x-github-event', 'x-event-type']) {
    const value = headerValue(headers, name);
    if (value) return value;
  }
  if (bodyClass === 'odd') return null;
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    const record = payload as Record<string, unknown>;
    if (typeof record.event === 'string') return record.event;
  }
  return undefined;
}

function deliveryIdOf(headers: Record<string, string | string[]>): string | undefined {
  for (const name of DELIVERY_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** Signs the final body and fills in what the case did. */
function finish(
  draft: Draft,
  context: { index: number; routeSpec: WebhookRouteSpec; mutations: string[]; nowS: number },
): WebhookCase {
  let bytes = draft.body;
  if (draft.padTo !== undefined && bytes.byteLength < draft.padTo)
    bytes = Buffer.concat([bytes, Buffer.alloc(draft.padTo - bytes.byteLength, 0x20)]);
  const secret = draft.route?.secret ?? context.routeSpec.secret ?? SECRET_A;
  const signed = draft.signer({ secret, body: bytes, nowS: context.nowS });
  for (const name of ['x-webhook-signature', 'x-webhook-signature-v2']) delete draft.headers[name];
  Object.assign(draft.headers, signed.headers);
  const health = draft.suffix === 'health';
  const path = health
    ? '/health'
    : `${draft.doubleSlash ? '/' : draft.prefix}/webhooks/${draft.segment}${draft.suffix}`;
  // No name (`/webhooks/`, `/webhooks/x/../`), a segment past it, or `//…`: no webhook path.
  const unmatched =
    draft.suffix === '/extra' ||
    draft.doubleSlash ||
    /^(x\/\.\.\/)*$/.test(draft.segment) ||
    draft.prefixClass === 'unmatched';
  return {
    index: context.index,
    routeSpec: context.routeSpec,
    mutations: context.mutations,
    facts: {
      unmatched,
      health,
      method: draft.method,
      prefix: draft.prefixClass,
      route: draft.route,
      routeName: draft.routeName,
      signedWith: secret,
      overLimit: bytes.byteLength > WEBHOOK_MAX_BODY_BYTES,
      signature: signed.signature,
      // A route that checks no signature takes no signature as a delivery's identity.
      signatureKey: draft.route?.secret === 'INSECURE_NO_AUTH' ? undefined : signed.key,
      body: draft.bodyClass,
      event: eventOf(draft.headers, draft.payload, draft.bodyClass),
      deliveryId: deliveryIdOf(draft.headers),
      marker: draft.marker,
    },
    request: {
      method: draft.method,
      path,
      headers: draft.headers,
      body: bytes,
      chunked: draft.chunked,
    },
  };
}

/** The `index`-th case: a valid delivery to a route of `WEBHOOK_ROUTES`, mutated 0–2 times. */
export function generateWebhookCase(input: {
  index: number;
  dice: Dice;
  unique: string;
  nowS: number;
}): WebhookCase {
  const { dice, unique, index, nowS } = input;
  // The routes a delivery is meant for most of the time, the refusing ones now and then.
  const routeSpec = dice.chance(0.8)
    ? dice.pick(
        WEBHOOK_ROUTES.filter((route) => route.enabled && route.profile !== null && route.secret),
      )
    : dice.pick(WEBHOOK_ROUTES);
  // A route bound to work is sent where it is reached: under /p/work.
  const [startPrefix, startClass]: [string, PrefixClass] =
    routeSpec.profile === 'work' ? ['/p/work', 'work'] : ['', 'none'];
  const marker = `marker-${unique}`;
  const json = JSON.stringify(basePayload(marker));
  const draft: Draft = {
    method: 'POST',
    prefix: startPrefix,
    prefixClass: startClass,
    segment: routeSpec.name,
    routeName: routeSpec.name,
    route: routeSpec,
    suffix: '',
    doubleSlash: false,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': `delivery-${unique}`,
    },
    body: Buffer.from(json),
    bodyClass: 'json',
    payload: basePayload(marker),
    marker,
    chunked: false,
    padTo: undefined,
    signer: VALID_V2,
    signerLabel: undefined,
  };
  const roll = dice.int(100);
  const count = roll < 15 ? 0 : roll < 80 ? 1 : 2;
  const mutations: string[] = [];
  for (let applied = 0; applied < count; applied += 1) {
    const label = pickMutation(dice)(draft, dice, unique);
    if (label) mutations.push(label);
  }
  return finish(draft, { index, routeSpec, mutations, nowS });
}

/**
 * A replay of an earlier delivery: the same bytes and signature, with its delivery id kept,
 * changed or dropped.
 */
export function replayCase(input: {
  index: number;
  dice: Dice;
  unique: string;
  source: ReplaySource;
}): WebhookCase {
  const { dice, source, unique } = input;
  const form = dice.pick(['exact', 'a new delivery id', 'no delivery id']);
  const headers = { ...source.request.headers };
  if (form !== 'exact') for (const name of DELIVERY_HEADERS) delete headers[name];
  if (form === 'a new delivery id') headers['x-github-delivery'] = `replay-${unique}`;
  return {
    index: input.index,
    routeSpec: source.routeSpec,
    mutations: [`replay of an earlier delivery: ${form}`],
    facts: { ...source.facts, deliveryId: deliveryIdOf(headers) },
    request: { ...source.request, headers },
  };
}

/** What the test knows of the gateway's memory: ids and signatures taken, rate-limit hits. */
export interface WebhookMemory {
  readonly deliveries: Set<string>;
  readonly signatures: Set<string>;
  /** Hits counted by the limited route's window, and when the window opened (ms, monotonic). */
  limitedHits: number;
  limitedSince: number | undefined;
}

const PROFILE_REFUSAL = 'Unknown or unconfigured profile';

/** The profile a case's prefix addresses and the route it meets there. */
function addressed(facts: WebhookFacts): {
  profile: FuzzProfile;
  route: WebhookRouteSpec | undefined;
} {
  const profile: FuzzProfile = facts.prefix === 'work' ? 'work' : 'default';
  return { profile, route: routeFor(profile, facts.routeName) };
}

/**
 * The answers docs/operations.md allows for a case, in the order of its checks: the first check
 * that fails answers. Where a fact may go either way, both branches are allowed.
 */
export function expectedAnswers(facts: WebhookFacts, memory: WebhookMemory): Allowed[] {
  if (facts.health)
    return facts.method === 'GET'
      ? [{ status: 200, outcome: 'ok' }]
      : [{ status: 404, error: 'Not found' }, { status: 405 }];
  if (facts.unmatched)
    return [
      { status: 404, error: 'Not found' },
      { status: 404, error: PROFILE_REFUSAL },
    ];
  if (facts.method !== 'POST') return [{ status: 405, error: 'Method not allowed' }];
  if (facts.prefix === 'refused') return [{ status: 404, error: PROFILE_REFUSAL }];
  const { profile, route } = addressed(facts);
  if (!route)
    return [
      {
        status: 404,
        error:
          facts.routeName === undefined
            ? /^Unknown route: /
            : `Unknown route: ${clipQuoted(facts.routeName)}`,
      },
    ];
  if (!route.enabled) return [{ status: 403, error: `Route disabled: ${route.name}` }];
  if (facts.overLimit) return [{ status: 413, error: 'Payload too large' }];
  if (!route.secret) return [{ status: 403, error: 'Webhook route is missing an HMAC secret' }];
  const refusals: Allowed[] = [];
  const insecure = route.secret === 'INSECURE_NO_AUTH';
  if (!insecure) {
    if (facts.signature === 'invalid' || facts.signedWith !== route.secret)
      return [{ status: 401, error: 'Invalid signature' }];
    if (facts.signature === 'either') refusals.push({ status: 401, error: 'Invalid signature' });
  }
  if (route.rateLimit !== undefined) {
    const elapsed = memory.limitedSince === undefined ? 0 : performance.now() - memory.limitedSince;
    // The window is 60 s from its first hit: near its end, either answer may be right.
    if (elapsed > 50_000) refusals.push({ status: 429, error: 'Rate limit exceeded' });
    else if (memory.limitedHits >= route.rateLimit)
      return [...refusals, { status: 429, error: 'Rate limit exceeded' }];
  }
  if (facts.body === 'garbage' || facts.body === 'deep')
    return [...refusals, { status: 400, error: 'Cannot parse body' }];
  if (facts.body === 'odd') refusals.push({ status: 400, error: 'Cannot parse body' });
  if (route.events) {
    if (facts.event === null) refusals.push({ status: 200, outcome: 'ignored' });
    else if (facts.event === undefined || !route.events.includes(facts.event))
      return [...refusals, { status: 200, outcome: 'ignored' }];
  }
  // Delivery ids and signatures are remembered per profile and route.
  const replayed =
    (facts.deliveryId !== undefined &&
      memory.deliveries.has(`${profile}/${route.name}/${facts.deliveryId}`)) ||
    (facts.signatureKey !== undefined &&
      memory.signatures.has(`${profile}/${route.name}/${facts.signatureKey}`));
  if (replayed) return [...refusals, { status: 200, outcome: 'duplicate' }];
  return [
    ...refusals,
    route.deliverOnly
      ? { status: 200, outcome: 'delivered' }
      : { status: 202, outcome: 'accepted' },
  ];
}

/** Learns from an answer the contract allowed: what was taken, what the rate window counted. */
export function remember(
  memory: WebhookMemory,
  facts: WebhookFacts,
  answer: { status: number; error?: string; outcome?: string },
): void {
  const { profile, route } = addressed(facts);
  if (!route) return;
  const passedSignature = answer.status < 300 || answer.error === 'Cannot parse body';
  if (route.rateLimit !== undefined && passedSignature) {
    memory.limitedSince ??= performance.now();
    memory.limitedHits += 1;
  }
  if (answer.outcome === 'accepted' || answer.outcome === 'delivered') {
    if (facts.deliveryId !== undefined)
      memory.deliveries.add(`${profile}/${route.name}/${facts.deliveryId}`);
    if (facts.signatureKey !== undefined)
      memory.signatures.add(`${profile}/${route.name}/${facts.signatureKey}`);
  }
}
