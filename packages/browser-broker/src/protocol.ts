import * as v from 'valibot';
import {
  BROWSER_CONTROL_PROTOCOL_VERSION,
  FRAME_CANCEL,
  FRAME_COMMAND,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_HEARTBEAT_NONCE_LENGTH,
} from './constants.js';

/**
 * The browser-control wire protocol, version 1: every frame as a valibot schema. Both sides (the
 * ws transport and the reference client) parse with these; `schema/browser-control.v1.schema.json`
 * is generated from them.
 */

const nullableString = v.nullable(v.string());
const commandIdSchema = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{32}$/, 'command_id must be 32 lowercase hex'),
);
const nonceSchema = v.pipe(
  v.string(),
  v.minLength(1, 'nonce must not be empty'),
  v.maxLength(
    MAX_HEARTBEAT_NONCE_LENGTH,
    `nonce must be at most ${MAX_HEARTBEAT_NONCE_LENGTH} characters`,
  ),
);

/** server → controller: run one action. */
export const CommandFrameSchema = v.object({
  method: v.literal(FRAME_COMMAND),
  params: v.object({
    command_id: commandIdSchema,
    action: v.string(),
    arguments: v.record(v.string(), v.unknown()),
    controller_id: nullableString,
    browser_profile_id: nullableString,
    tool_call_id: nullableString,
    tab_id: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    frame_id: v.optional(v.nullable(v.union([v.number(), v.string()]))),
  }),
});

/** server → controller: stop a command (cancel, timeout, notified detach). */
export const CancelFrameSchema = v.object({
  method: v.literal(FRAME_CANCEL),
  params: v.object({ command_id: commandIdSchema, tool_call_id: nullableString }),
});

/**
 * controller → server: the terminal answer. `ok` succeeds only when it is literally `true`; any
 * other value (including the string "false") is a rejection carrying `error`.
 */
export const ResultFrameSchema = v.object({
  method: v.literal(FRAME_RESULT),
  params: v.object({
    command_id: v.pipe(v.string(), v.minLength(1)),
    ok: v.optional(v.unknown()),
    result: v.optional(v.unknown()),
    error: v.optional(v.unknown()),
  }),
});

/** controller → server: ask the server to cancel the command of one tool call. */
export const ControllerCancelFrameSchema = v.object({
  method: v.literal(FRAME_CANCEL),
  params: v.object({ tool_call_id: v.pipe(v.string(), v.minLength(1)) }),
});

/** controller → server: liveness probe; the server echoes the nonce (checked after trimming). */
export const HeartbeatRequestFrameSchema = v.object({
  method: v.literal(FRAME_HEARTBEAT),
  params: v.object({ nonce: nonceSchema }),
});

/** server → controller: heartbeat echo, or the unsolicited `server-keepalive-N` keepalive. */
export const HeartbeatReplyFrameSchema = v.object({
  method: v.literal(FRAME_HEARTBEAT),
  params: v.object({ nonce: v.string(), ok: v.literal(true) }),
});

/** controller → server: hard detach (terminal, cancels pending work). */
export const DetachRequestFrameSchema = v.object({
  method: v.literal(FRAME_DETACH),
  params: v.object({}),
});

/** server → controller: detach acknowledged. */
export const DetachReplyFrameSchema = v.object({
  method: v.literal(FRAME_DETACH),
  params: v.object({ ok: v.literal(true) }),
});

/** Any frame's outer shape; inbound text that does not fit is dropped silently. */
export const FrameEnvelopeSchema = v.object({
  method: v.string(),
  params: v.custom<Record<string, unknown>>(
    (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    'params must be an object',
  ),
});

/** Body of `POST /v1/browser-control/register` (principal_id and extra fields are ignored). */
export const RegisterRequestSchema = v.looseObject({
  protocol_version: v.unknown(),
  session_id: v.optional(v.unknown()),
  controller_id: v.optional(v.unknown()),
  browser_profile_id: v.optional(v.unknown()),
  capabilities: v.optional(v.unknown()),
});

const wireScopeSchema = v.object({
  principal_id: nullableString,
  profile_id: nullableString,
  session_id: nullableString,
  controller_id: nullableString,
  browser_profile_id: nullableString,
  transport_family: nullableString,
  capabilities: v.array(v.string()),
});

/** 201 body of a successful registration. */
export const RegisterResponseSchema = v.object({
  protocol_version: v.literal(BROWSER_CONTROL_PROTOCOL_VERSION),
  ticket: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)),
  ticket_expires_at: v.number(),
  ticket_expires_in_seconds: v.number(),
  ws_path: v.string(),
  scope: wireScopeSchema,
});

/** The HTTP error envelope of the register route. */
export const ErrorResponseSchema = v.object({
  error: v.object({ message: v.string(), type: v.string(), code: v.string() }),
});

export type CommandFrame = v.InferOutput<typeof CommandFrameSchema>;
export type CancelFrame = v.InferOutput<typeof CancelFrameSchema>;
export type ResultFrame = v.InferOutput<typeof ResultFrameSchema>;
export type ControllerCancelFrame = v.InferOutput<typeof ControllerCancelFrameSchema>;
export type HeartbeatRequestFrame = v.InferOutput<typeof HeartbeatRequestFrameSchema>;
export type HeartbeatReplyFrame = v.InferOutput<typeof HeartbeatReplyFrameSchema>;
export type DetachRequestFrame = v.InferOutput<typeof DetachRequestFrameSchema>;
export type DetachReplyFrame = v.InferOutput<typeof DetachReplyFrameSchema>;
export type RegisterResponse = v.InferOutput<typeof RegisterResponseSchema>;

/** The frames by name, for the generated JSON Schema. */
export const BROWSER_CONTROL_FRAME_SCHEMAS = {
  command: CommandFrameSchema,
  cancel: CancelFrameSchema,
  result: ResultFrameSchema,
  controllerCancel: ControllerCancelFrameSchema,
  heartbeatRequest: HeartbeatRequestFrameSchema,
  heartbeatReply: HeartbeatReplyFrameSchema,
  detachRequest: DetachRequestFrameSchema,
  detachReply: DetachReplyFrameSchema,
  registerResponse: RegisterResponseSchema,
} as const;

/** Parses a text frame into its envelope, or `null` for non-JSON / non-object input. */
export function parseFrameText(text: string): v.InferOutput<typeof FrameEnvelopeSchema> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = v.safeParse(FrameEnvelopeSchema, value);
  return parsed.success ? parsed.output : null;
}
