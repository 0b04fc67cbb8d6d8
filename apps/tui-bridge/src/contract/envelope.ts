import * as v from 'valibot';

/** The wire protocol version front ends can check in `gateway.ready`. */
export const PROTOCOL_VERSION = 1;

/** The JSON-RPC method that carries every server → front-end event. */
export const EVENT_METHOD = 'event';

/** Longest accepted line (stdio) or WebSocket message, in bytes. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * A request id: a string or a number. JSON-RPC 2.0 only advises against fractions (SHOULD NOT),
 * so they are served like any other id; null is allowed too (discouraged, and answered with null).
 */
export const RequestIdSchema = v.union([v.string(), v.pipe(v.number(), v.finite())]);

/** A request (with `id`, null included) or a notification (no `id` member). `params` is checked per method. */
export const RequestSchema = v.object({
  jsonrpc: v.literal('2.0'),
  id: v.optional(v.nullable(RequestIdSchema)),
  method: v.pipe(v.string(), v.minLength(1)),
  params: v.optional(v.union([v.array(v.unknown()), v.record(v.string(), v.unknown())])),
});
export type RpcRequest = v.InferOutput<typeof RequestSchema>;

export const ErrorObjectSchema = v.object({
  code: v.pipe(v.number(), v.integer()),
  message: v.string(),
  data: v.optional(v.unknown()),
});

export const SuccessResponseSchema = v.object({
  jsonrpc: v.literal('2.0'),
  id: v.nullable(RequestIdSchema),
  result: v.unknown(),
});

export const ErrorResponseSchema = v.object({
  jsonrpc: v.literal('2.0'),
  id: v.nullable(RequestIdSchema),
  error: ErrorObjectSchema,
});

export const ResponseSchema = v.union([SuccessResponseSchema, ErrorResponseSchema]);
export type RpcResponse = v.InferOutput<typeof ResponseSchema>;

/** `{ jsonrpc, method: 'event', params: { type, session_id, payload } }`. */
export const EventEnvelopeSchema = v.object({
  jsonrpc: v.literal('2.0'),
  method: v.literal(EVENT_METHOD),
  params: v.object({
    type: v.string(),
    session_id: v.nullable(v.string()),
    payload: v.record(v.string(), v.unknown()),
  }),
});
export type EventEnvelope = v.InferOutput<typeof EventEnvelopeSchema>;
