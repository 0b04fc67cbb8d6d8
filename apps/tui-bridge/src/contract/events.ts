import * as v from 'valibot';
import { UsageSchema } from './methods.js';

const RunId = v.string();

/** Every event type and its payload. Events arrive as `{ method: 'event', params: { type, session_id, payload } }`. */
export const EVENTS = {
  'gateway.ready': {
    summary: 'Sent once per connection when the bridge is ready (stdio: at startup).',
    payload: v.object({
      version: v.string(),
      protocol_version: v.number(),
      pid: v.number(),
      profile: v.string(),
      transport: v.picklist(['stdio', 'websocket']),
      methods: v.array(v.string()),
      delegation: v.boolean(),
    }),
  },
  'run.started': {
    summary:
      'A turn started: from prompt.submit, a queued prompt, or a delivered delegation result.',
    payload: v.object({
      run_id: RunId,
      origin: v.picklist(['prompt', 'queue', 'delegation', 'bot_relay']),
      model: v.string(),
      provider: v.string(),
      replayed: v.optional(v.boolean()),
    }),
  },
  'message.delta': {
    summary: 'Streamed reply text, in order.',
    payload: v.object({ run_id: RunId, text: v.string(), replayed: v.optional(v.boolean()) }),
  },
  'reasoning.delta': {
    summary: 'Streamed reasoning text, when the provider sends it.',
    payload: v.object({ run_id: RunId, text: v.string(), replayed: v.optional(v.boolean()) }),
  },
  'message.complete': {
    summary: 'An assistant message is stored (one per model call).',
    payload: v.object({
      run_id: RunId,
      message_id: v.number(),
      content: v.string(),
      finish_reason: v.nullable(v.string()),
      tool_calls: v.array(v.object({ id: v.string(), name: v.string(), arguments: v.string() })),
      replayed: v.optional(v.boolean()),
    }),
  },
  'tool.start': {
    summary: 'A tool call started.',
    payload: v.object({
      run_id: RunId,
      call_id: v.string(),
      name: v.string(),
      arguments: v.string(),
      replayed: v.optional(v.boolean()),
    }),
  },
  'tool.complete': {
    summary: 'A tool call finished (`ok: false` with `error` when it failed).',
    payload: v.object({
      run_id: RunId,
      call_id: v.string(),
      name: v.string(),
      ok: v.boolean(),
      result: v.nullable(v.string()),
      error: v.nullable(v.string()),
      duration_ms: v.number(),
      replayed: v.optional(v.boolean()),
    }),
  },
  'approval.request': {
    summary: 'A tool needs approval: answer with approval.respond (no answer in time = deny).',
    payload: v.object({
      run_id: v.nullable(RunId),
      request_id: v.string(),
      tool_name: v.string(),
      command: v.string(),
      reason: v.string(),
    }),
  },
  'run.completed': {
    summary: 'The turn ended: `status` completed, interrupted or failed. Everything is stored.',
    payload: v.object({
      run_id: RunId,
      status: v.picklist(['completed', 'interrupted', 'failed']),
      final_response: v.string(),
      stored_session_id: v.string(),
      error: v.nullable(v.object({ code: v.string(), message: v.string() })),
      usage: UsageSchema,
      replayed: v.optional(v.boolean()),
    }),
  },
  'session.compressed': {
    summary: 'The conversation was compressed: it continues on a new stored session id.',
    payload: v.object({
      run_id: v.nullable(RunId),
      from_session_id: v.string(),
      to_session_id: v.string(),
    }),
  },
  'delegation.completed': {
    summary:
      'A background delegation (a /review reviewer) finished and its result is entering this session as a new turn.',
    payload: v.object({
      delegation_id: v.string(),
      status: v.string(),
      goal: v.string(),
      text: v.string(),
    }),
  },
  warning: {
    summary: 'Something degraded but nothing was lost (compression failed, usage not recorded…).',
    payload: v.object({ run_id: v.nullable(RunId), code: v.string(), message: v.string() }),
  },
} as const;

export type EventType = keyof typeof EVENTS;
export type EventPayload<T extends EventType> = v.InferOutput<(typeof EVENTS)[T]['payload']>;
export const EVENT_TYPES = Object.keys(EVENTS) as EventType[];
