/**
 * Every route of docs/gateway.md as a valid request the fuzzer starts from, with what the
 * contract says of each top-level body field, so a mutation that breaks it must be refused.
 */

/** Ids of live things the valid requests name; refreshed as the run goes on. */
export interface Fixtures {
  /** A chat session with a transcript (chats, fork, messages). */
  sessionId: string;
  /** A message of `sessionId`'s transcript. */
  messageId: number;
  /** The session PATCH changes. */
  patchId: string;
  /** A stored response (the newest of its conversation is not required). */
  responseId: string;
  /** A finished run. */
  runId: string;
  /** A fresh one-shot thing made for this request only (a session or response to delete). */
  victim: string;
}

/** What the contract says of a field: the value is acceptable as far as validation goes. */
export type FieldCheck = (value: unknown) => boolean;

export interface FieldSpec {
  readonly required?: boolean;
  /** Applied to a present value; `undefined` means any value is acceptable. */
  readonly check?: FieldCheck;
}

export interface RouteTemplate {
  readonly name: string;
  readonly method: string;
  /** `{id}` is where an id goes (`id` gives it), so a mutation can put another there. */
  readonly path: string;
  readonly id?: (fixtures: Fixtures) => string;
  readonly query?: (fixtures: Fixtures) => Record<string, string>;
  /** A plain JSON body (`unique` keeps titles and ids apart between requests). */
  readonly body?: (fixtures: Fixtures, unique: string) => unknown;
  readonly headers?: (fixtures: Fixtures, unique: string) => Record<string, string>;
  /** Raw bytes instead of JSON (artifact uploads). */
  readonly rawBody?: () => Buffer;
  /** Top-level body fields; unlisted ones are `unknownFields`. */
  readonly fields?: Record<string, FieldSpec>;
  readonly unknownFields?: 'ignored' | 'refused';
  /** An empty body reads as `{}`. */
  readonly emptyIsObject?: boolean;
  /** What must be made before each request (`victim`). */
  readonly prepare?: 'session' | 'response';
  /** A 2xx may leave a turn running after the answer (a 202). */
  readonly background?: boolean;
  /** No key needed. */
  readonly public?: boolean;
  /** The valid request itself is refused (an id nothing can have): a 4xx is its answer. */
  readonly refusedBase?: boolean;
  /** Answers 429 past a per-minute budget, valid or not. */
  readonly rateLimited?: boolean;
  /** A package's route that reads its body itself (no nesting limit: nothing of it is stored). */
  readonly ownBodyRules?: boolean;
}

const isString: FieldCheck = (value) => typeof value === 'string';
const isBoolean: FieldCheck = (value) => typeof value === 'boolean';
const nullable =
  (check: FieldCheck): FieldCheck =>
  (value) =>
    value === null || check(value);
const nonBlank: FieldCheck = (value) => typeof value === 'string' && value.trim() !== '';
const nonEmpty: FieldCheck = (value) => typeof value === 'string' && value.length > 0;
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const CHAT_FIELDS: Record<string, FieldSpec> = {
  message: { required: true, check: nonBlank },
  author: { check: nullable(isString) },
  wait: { check: isBoolean },
  reply_to: { check: nullable(isString) },
  from: { check: nullable(isString) },
};

const COMPLETION_FIELDS: Record<string, FieldSpec> = {
  model: { check: isString },
  messages: {
    required: true,
    check: (value) => Array.isArray(value) && value.length > 0,
  },
  stream: { check: nullable(isBoolean) },
  stream_options: {
    check: nullable(
      (value) =>
        isPlainObject(value) &&
        (value.include_usage === undefined || typeof value.include_usage === 'boolean'),
    ),
  },
  user: { check: isString },
};

const RESPONSE_FIELDS: Record<string, FieldSpec> = {
  model: { check: isString },
  input: {
    required: true,
    check: (value) => nonEmpty(value) || (Array.isArray(value) && value.length > 0),
  },
  instructions: { check: nullable(isString) },
  previous_response_id: { check: nullable(nonEmpty) },
  store: { check: nullable(isBoolean) },
  stream: { check: nullable(isBoolean) },
  metadata: {
    check: nullable(
      (value) =>
        isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string'),
    ),
  },
};

/** A conversation as a client resends it: system, an answered tool call, the new question. */
function conversation(unique: string) {
  return [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'What is in the todo list?' }] },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${unique}`,
          type: 'function',
          function: { name: 'todo', arguments: '{}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: `call_${unique}`, content: 'empty' },
    { role: 'user', content: `Thanks (${unique})` },
  ];
}

const GET_ROUTES = [
  '/health',
  '/v1/health',
  '/health/detailed',
  '/metrics',
  '/v1/models',
  '/v1/capabilities',
  '/v1/skills',
  '/v1/toolsets',
].map(
  (path): RouteTemplate => ({
    name: `GET ${path}`,
    method: 'GET',
    path,
    public: path === '/health' || path === '/v1/health',
  }),
);

export const ROUTES: readonly RouteTemplate[] = [
  ...GET_ROUTES,
  {
    name: 'list sessions',
    method: 'GET',
    path: '/api/sessions',
    query: () => ({ limit: '20', offset: '0', include_children: 'false' }),
  },
  {
    name: 'find a session by title',
    method: 'GET',
    path: '/api/sessions',
    query: () => ({ limit: '200', title: 'Bot Chat', include_hidden: '1', source: 'api_server' }),
  },
  {
    name: 'create a session',
    method: 'POST',
    path: '/api/sessions',
    body: (_fixtures, unique) => ({
      id: `fuzz_${unique}`,
      title: `fuzz ${unique}`,
      source: 'fuzz',
      model: 'test-model',
      user_id: 'fuzzer',
      hidden: false,
      pinned: false,
    }),
    fields: {
      id: { check: (value) => typeof value === 'string' && SESSION_ID.test(value) },
      session_id: { check: isString },
      title: { check: nullable(isString) },
      source: {
        check: (value) =>
          typeof value === 'string' && value.trim() !== '' && value.trim().length <= 64,
      },
      model: { check: nullable(isString) },
      user_id: { check: nullable(isString) },
      hidden: { check: isBoolean },
      pinned: { check: isBoolean },
    },
    unknownFields: 'ignored',
    emptyIsObject: true,
  },
  { name: 'read a session', method: 'GET', path: '/api/sessions/{id}', id: (f) => f.sessionId },
  {
    name: 'change a session',
    method: 'PATCH',
    path: '/api/sessions/{id}',
    id: (f) => f.patchId,
    body: (_fixtures, unique) => ({
      title: `patched ${unique}`,
      pinned: true,
      unread: false,
      hidden: false,
    }),
    fields: {
      title: { check: nullable(isString) },
      end_reason: {
        check: (value) => typeof value === 'string' && /^[a-z][a-z_]{0,63}$/.test(value.trim()),
      },
      pinned: { check: isBoolean },
      archived: { check: isBoolean },
      hidden: { check: isBoolean },
      unread: { check: isBoolean },
      confirm_cascade: { check: isBoolean },
    },
    unknownFields: 'refused',
  },
  {
    name: 'delete a session',
    method: 'DELETE',
    path: '/api/sessions/{id}',
    id: (f) => f.victim,
    query: () => ({ confirm_cascade: 'true' }),
    prepare: 'session',
  },
  {
    name: 'read a transcript',
    method: 'GET',
    path: '/api/sessions/{id}/messages',
    id: (f) => f.sessionId,
    query: () => ({ limit: '10', order: 'latest', after_id: '0' }),
  },
  {
    name: 'fork a session',
    method: 'POST',
    path: '/api/sessions/{id}/fork',
    id: (f) => f.sessionId,
    body: (fixtures, unique) => ({ title: `fork ${unique}`, message_id: fixtures.messageId }),
    fields: {
      title: { check: nullable(isString) },
      message_id: {
        check: (value) => typeof value === 'number' && Number.isInteger(value) && value >= 1,
      },
    },
    unknownFields: 'ignored',
    emptyIsObject: true,
  },
  {
    name: 'chat in a session',
    method: 'POST',
    path: '/api/sessions/{id}/chat',
    id: (f) => f.sessionId,
    body: (_fixtures, unique) => ({ message: `hello ${unique}`, author: 'ada', wait: true }),
    fields: CHAT_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'chat in a session without waiting',
    method: 'POST',
    path: '/api/sessions/{id}/chat',
    id: (f) => f.sessionId,
    body: (_fixtures, unique) => ({ message: `later ${unique}`, wait: false }),
    fields: CHAT_FIELDS,
    unknownFields: 'ignored',
    background: true,
  },
  {
    name: 'stream a chat',
    method: 'POST',
    path: '/api/sessions/{id}/chat/stream',
    id: (f) => f.sessionId,
    body: (_fixtures, unique) => ({ message: `stream ${unique}` }),
    fields: CHAT_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'chat completion, new conversation',
    method: 'POST',
    path: '/v1/chat/completions',
    body: (_fixtures, unique) => ({
      model: 'hermes-agent',
      messages: conversation(unique),
      stream: false,
      user: 'fuzzer',
    }),
    fields: COMPLETION_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'chat completion in a session, streamed',
    method: 'POST',
    path: '/v1/chat/completions',
    headers: (fixtures) => ({ 'x-hermes-session-id': fixtures.sessionId }),
    body: (_fixtures, unique) => ({
      messages: [{ role: 'user', content: `streamed ${unique}` }],
      stream: true,
      stream_options: { include_usage: true },
    }),
    fields: COMPLETION_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'response, new conversation',
    method: 'POST',
    path: '/v1/responses',
    body: (_fixtures, unique) => ({
      model: 'hermes-agent',
      input: [
        { role: 'developer', content: 'Be brief.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: `hi ${unique}` }] },
      ],
      instructions: 'Answer in English.',
      store: true,
      metadata: { run: unique },
    }),
    fields: RESPONSE_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'response chained, streamed',
    method: 'POST',
    path: '/v1/responses',
    body: (fixtures, unique) => ({
      input: `and then ${unique}`,
      previous_response_id: fixtures.responseId,
      stream: true,
    }),
    fields: RESPONSE_FIELDS,
    unknownFields: 'ignored',
  },
  {
    name: 'read a response',
    method: 'GET',
    path: '/v1/responses/{id}',
    id: (f) => f.responseId,
  },
  {
    name: 'delete a response',
    method: 'DELETE',
    path: '/v1/responses/{id}',
    id: (f) => f.victim,
    prepare: 'response',
  },
  {
    name: 'start a run',
    method: 'POST',
    path: '/v1/runs',
    headers: (_fixtures, unique) => ({ 'idempotency-key': `key-${unique}` }),
    body: (fixtures, unique) => ({
      input: `run ${unique}`,
      session_id: fixtures.sessionId,
      instructions: 'Be brief.',
    }),
    fields: {
      // `message` stands in for it; the valid request sends `input`.
      input: { required: true, check: nonBlank },
      message: { check: nonBlank },
      session_id: { check: isString },
      instructions: { check: nullable(isString) },
    },
    unknownFields: 'ignored',
    background: true,
  },
  { name: 'read a run', method: 'GET', path: '/v1/runs/{id}', id: (f) => f.runId },
  { name: 'replay a run', method: 'GET', path: '/v1/runs/{id}/events', id: (f) => f.runId },
  { name: 'stop a run', method: 'POST', path: '/v1/runs/{id}/stop', id: (f) => f.runId },
  {
    name: 'register a browser controller',
    method: 'POST',
    path: '/v1/browser-control/register',
    body: (fixtures, unique) => ({
      protocol_version: 1,
      controller_id: `controller-${unique}`,
      browser_profile_id: 'profile-1',
      session_id: fixtures.sessionId,
      capabilities: ['browser_navigate', 'browser_screenshot'],
    }),
    fields: {
      protocol_version: { required: true, check: (value) => value === 1 },
      controller_id: { required: true, check: nonBlank },
      browser_profile_id: { required: true, check: nonBlank },
      session_id: { required: true },
      capabilities: { required: true, check: Array.isArray },
    },
    unknownFields: 'ignored',
    ownBodyRules: true,
  },
  {
    name: 'upload an artifact',
    method: 'POST',
    path: '/v1/artifacts/upload',
    headers: () => ({ 'content-type': 'text/plain', 'x-artifact-filename': 'note.txt' }),
    rawBody: () => Buffer.from('hello, artifact'),
    rateLimited: true,
  },
  {
    name: 'download an unknown artifact',
    method: 'GET',
    path: '/v1/artifacts/download/{id}',
    id: () => 'art_0123456789abcdef0123456789abcdef',
    refusedBase: true,
    rateLimited: true,
  },
];
