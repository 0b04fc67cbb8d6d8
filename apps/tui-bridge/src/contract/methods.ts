import * as v from 'valibot';

// Field names on the wire are snake_case, like the reference's TUI gateway and the session API.

const Id = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
/** POSIX `/…`, a Windows drive `C:\…` or a UNC `\\host\…` path (no node:path: front ends import this). */
const ABSOLUTE_PATH = /^(?:\/|[A-Za-z]:[\\/]|\\\\)/;
const SessionIdParam = v.pipe(
  Id,
  v.description('A live session id from session.create / session.resume'),
);
const ProfileParam = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(64),
  v.description(
    'A profile name (`default` or a folder under profiles/); default: the launch profile',
  ),
);

export const UsageSchema = v.object({
  input_tokens: v.number(),
  output_tokens: v.number(),
  cache_read_tokens: v.number(),
  cache_write_tokens: v.number(),
  reasoning_tokens: v.number(),
  api_calls: v.number(),
  tool_calls: v.number(),
});

/** A stored message as front ends see it (the session API's projection; hidden rows are placeholders). */
export const MessageViewSchema = v.looseObject({
  id: v.nullable(v.number()),
  session_id: v.nullable(v.string()),
  role: v.string(),
  content: v.string(),
  timestamp: v.nullable(v.number()),
  display_kind: v.nullable(v.string()),
  tool_call_id: v.optional(v.nullable(v.string())),
  tool_calls: v.optional(v.unknown()),
  tool_name: v.optional(v.nullable(v.string())),
  finish_reason: v.optional(v.nullable(v.string())),
});

export const SessionSummarySchema = v.object({
  id: v.string(),
  resolved_id: v.pipe(
    v.string(),
    v.description('The compression tip: the session a resume continues'),
  ),
  title: v.nullable(v.string()),
  preview: v.nullable(v.string()),
  source: v.string(),
  started_at: v.number(),
  last_active: v.number(),
  message_count: v.number(),
  ended_at: v.nullable(v.number()),
  end_reason: v.nullable(v.string()),
  archived: v.boolean(),
  pinned: v.boolean(),
  hidden: v.boolean(),
  unread: v.boolean(),
  live_session_id: v.nullable(v.string()),
});

const LiveSessionSchema = v.object({
  session_id: v.string(),
  stored_session_id: v.string(),
  profile: v.string(),
  title: v.nullable(v.string()),
  cwd: v.nullable(v.string()),
});

export const ProfileEntrySchema = v.object({
  name: v.string(),
  home: v.string(),
  is_default: v.boolean(),
  active: v.boolean(),
  parked: v.boolean(),
  last_session: v.nullable(SessionSummarySchema),
  canonical_session: v.nullable(
    v.object({
      id: v.string(),
      resolved_id: v.string(),
      root_title: v.nullable(v.string()),
      title: v.nullable(v.string()),
      preview: v.nullable(v.string()),
      started_at: v.number(),
      last_active: v.number(),
      message_count: v.number(),
    }),
  ),
  ui_meta: v.nullable(v.record(v.string(), v.unknown())),
  has_avatar: v.boolean(),
});

export const SubagentSchema = v.object({
  subagent_id: v.string(),
  delegation_id: v.string(),
  goal: v.string(),
  status: v.string(),
  running_seconds: v.number(),
  accepting_steer: v.boolean(),
  api_calls: v.number(),
  current_tool: v.nullable(v.string()),
});

export const BotRosterEntrySchema = v.object({
  profile: ProfileParam,
  name: v.optional(v.pipe(v.string(), v.maxLength(200))),
});

export const BotEnvelopeSchema = v.object({
  id: v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/)),
  to_profile: v.string(),
  from: v.string(),
  message: v.string(),
  reply_to: v.nullable(v.string()),
  created_at: v.number(),
  expires_at: v.number(),
  attempts: v.number(),
});

/**
 * Most sessions one `session.list` page holds: the session store's page size
 * (`LIST_SESSIONS_MAX_LIMIT` of @hermes/session-store, which front ends importing the contract do
 * not load; a test keeps the two equal). A larger page would be cut short by the store.
 */
export const SESSION_LIST_MAX_LIMIT = 200;

const EnvelopeIdParam = v.pipe(v.string(), v.minLength(1), v.maxLength(200));

/**
 * Every method: its params and result schemas and a one-line summary. The bridge validates params
 * with these; the OpenRPC document (`openrpc.schema.json`) is generated from them.
 */
export const METHODS = {
  'session.create': {
    summary: 'Create a new session in a profile and attach this connection to it.',
    params: v.object({
      profile: v.optional(ProfileParam),
      title: v.optional(v.pipe(v.string(), v.maxLength(100))),
      cwd: v.optional(
        v.pipe(
          v.string(),
          v.minLength(1),
          v.maxLength(4096),
          v.regex(ABSOLUTE_PATH, 'must be an absolute path'),
          v.description("The session's working folder: an absolute path to an existing folder"),
        ),
      ),
    }),
    result: LiveSessionSchema,
  },
  'session.list': {
    summary:
      'List stored sessions. With `title`: the exact-title lookup (Bot Chat is resurrected when machinery reaped it).',
    params: v.object({
      profile: v.optional(ProfileParam),
      title: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
      limit: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(SESSION_LIST_MAX_LIMIT)),
      ),
      offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000))),
      include_hidden: v.optional(v.boolean()),
      search: v.optional(v.pipe(v.string(), v.maxLength(200))),
    }),
    result: v.object({ sessions: v.array(SessionSummarySchema), has_more: v.boolean() }),
  },
  'session.resume': {
    summary:
      'Attach to a stored session (any id of its lineage) or a live session id: its transcript, and the running turn replayed.',
    params: v.object({
      session_id: Id,
      profile: v.optional(ProfileParam),
    }),
    result: v.object({
      ...LiveSessionSchema.entries,
      running: v.boolean(),
      run_id: v.nullable(v.string()),
      messages: v.array(MessageViewSchema),
    }),
  },
  'session.close': {
    summary:
      'Close a session: interrupts its turn, ends the stored session (`tui_close`) and detaches everyone.',
    params: v.object({ session_id: SessionIdParam }),
    result: v.object({ closed: v.boolean() }),
  },
  'prompt.submit': {
    summary:
      'Start a turn. Answers once the turn has started; its events follow (message.delta, tool.start, tool.complete, message.complete, run.completed).',
    params: v.object({
      session_id: SessionIdParam,
      // Blank text is no prompt (as for the gateway and `hermes chat`): refused, never sent.
      text: v.pipe(
        v.string(),
        v.maxLength(1_000_000),
        v.regex(/\S/, 'must hold some text (not only whitespace)'),
      ),
    }),
    result: v.object({ run_id: v.string(), session_id: v.string() }),
  },
  'prompt.interrupt': {
    summary: 'Interrupt the running turn; what was said and done so far stays stored.',
    params: v.object({ session_id: SessionIdParam }),
    result: v.object({ interrupted: v.boolean() }),
  },
  'slash.exec': {
    summary:
      'Run a slash command against a live session; the answer is text for the transcript pane.',
    params: v.object({
      session_id: SessionIdParam,
      command: v.pipe(v.string(), v.maxLength(100_000)),
    }),
    result: v.object({ output: v.string(), warning: v.optional(v.string()) }),
  },
  'command.dispatch': {
    summary:
      'Dispatch a command that changes what the agent is asked (queue, steer, compress, skills). `type` says what happened.',
    params: v.object({
      session_id: SessionIdParam,
      name: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
      arg: v.optional(v.pipe(v.string(), v.maxLength(100_000))),
    }),
    result: v.object({
      type: v.picklist(['exec', 'queued', 'steered', 'send']),
      output: v.optional(v.string()),
      message: v.optional(v.string()),
    }),
  },
  'subagent.list': {
    summary: "The live subagents in this session's spawn tree (a /review reviewer included).",
    params: v.object({ session_id: SessionIdParam }),
    result: v.object({ subagents: v.array(SubagentSchema) }),
  },
  'subagent.steer': {
    summary:
      'Queue text for a subagent’s next tool result. `queued` is not `delivered`: it lands at its next step.',
    params: v.object({
      session_id: SessionIdParam,
      subagent_id: Id,
      message: v.pipe(v.string(), v.minLength(1), v.maxLength(100_000)),
    }),
    result: v.object({
      status: v.picklist(['queued', 'rejected']),
      reason: v.optional(v.string()),
    }),
  },
  'subagent.interrupt': {
    summary: 'Stop a subagent at its next step (its partial result still returns).',
    params: v.object({ session_id: SessionIdParam, subagent_id: Id }),
    result: v.object({ status: v.picklist(['stopping', 'already_stopping']) }),
  },
  'profiles.list': {
    summary:
      'Every profile with its last session and canonical Bot Chat. Read-mostly and idempotent.',
    params: v.object({}),
    result: v.object({ profiles: v.array(ProfileEntrySchema), bot_mode_protocol: v.literal(true) }),
  },
  'approval.respond': {
    summary: 'Answer an approval.request event.',
    params: v.object({
      session_id: SessionIdParam,
      request_id: Id,
      decision: v.picklist(['once', 'session', 'deny']),
    }),
    result: v.object({ accepted: v.literal(true) }),
  },
  'bot_relay.roster.sync': {
    summary: 'Declare which bots (profiles) this front end hosts; fresh for 600 s.',
    params: v.object({ bots: v.pipe(v.array(BotRosterEntrySchema), v.maxLength(1000)) }),
    result: v.object({ synced_at: v.number(), count: v.number() }),
  },
  'bot_relay.outbox.drain': {
    summary: 'Claim queued relay envelopes (expired ones are answered `queued_expired`).',
    params: v.object({
      profiles: v.optional(v.pipe(v.array(ProfileParam), v.maxLength(1000))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(500))),
    }),
    result: v.object({
      envelopes: v.array(BotEnvelopeSchema),
      expired: v.array(v.string()),
      swept: v.number(),
    }),
  },
  'bot_relay.deliver': {
    summary:
      "Deliver a claimed envelope into its profile's Bot Chat as a turn and record the reply; queued when the chat is busy.",
    params: v.object({ envelope_id: EnvelopeIdParam }),
    result: v.object({
      status: v.picklist(['delivered', 'no_reply']),
      session_id: v.string(),
      reply: v.nullable(v.string()),
    }),
  },
  'bot_relay.reply': {
    summary: 'Record the reply to a claimed envelope (a front end that ran the turn itself).',
    params: v.object({
      envelope_id: EnvelopeIdParam,
      text: v.optional(v.pipe(v.string(), v.maxLength(1_000_000))),
      status: v.optional(v.picklist(['delivered', 'no_reply', 'failed'])),
      error: v.optional(v.pipe(v.string(), v.maxLength(10_000))),
    }),
    result: v.object({ recorded: v.literal(true) }),
  },
} as const;

export type MethodName = keyof typeof METHODS;
export type MethodParams<M extends MethodName> = v.InferOutput<(typeof METHODS)[M]['params']>;
export type MethodResult<M extends MethodName> = v.InferOutput<(typeof METHODS)[M]['result']>;

export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(METHODS, name);
}
