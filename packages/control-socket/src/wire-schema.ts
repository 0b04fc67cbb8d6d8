import * as v from 'valibot';
import { CONTROL_PROTOCOL_VERSION, GATEWAY_KIND } from './constants.js';

/** The longest verb name, in UTF-16 code units (JavaScript string length). */
export const MAX_VERB_NAME_LENGTH = 128;

/** A verb name: what a request asks for. */
export const VerbNameSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_VERB_NAME_LENGTH));

/** One request line, after JSON parsing. Unknown extra fields are kept and ignored. */
export const ControlRequestSchema = v.looseObject({
  verb: VerbNameSchema,
  /** Any JSON value; echoed back in the reply when not null. */
  id: v.optional(v.unknown()),
  /** The client's protocol version; when present and not null it must be 1. */
  protocol: v.optional(v.nullable(v.literal(CONTROL_PROTOCOL_VERSION))),
  /** Arguments for verbs that take them. */
  payload: v.optional(v.record(v.string(), v.unknown())),
});
export type ControlRequest = v.InferOutput<typeof ControlRequestSchema>;

/** `{ ok: true, protocol: 1, result, id? }` */
export const ControlSuccessReplySchema = v.object({
  ok: v.literal(true),
  protocol: v.literal(CONTROL_PROTOCOL_VERSION),
  result: v.unknown(),
  id: v.optional(v.unknown()),
});
export type ControlSuccessReply = v.InferOutput<typeof ControlSuccessReplySchema>;

/**
 * `{ ok: false, error, protocol?, supported_verbs?, supported_protocols?, id? }`. The two
 * last-resort bodies (`response serialization failed`, `response too large`) carry only `ok` and
 * `error`.
 */
export const ControlErrorReplySchema = v.object({
  ok: v.literal(false),
  error: v.string(),
  protocol: v.optional(v.literal(CONTROL_PROTOCOL_VERSION)),
  supported_verbs: v.optional(v.array(v.string())),
  supported_protocols: v.optional(v.array(v.number())),
  id: v.optional(v.unknown()),
});
export type ControlErrorReply = v.InferOutput<typeof ControlErrorReplySchema>;

/** Any reply line, discriminated on `ok`. */
export const ControlReplySchema = v.variant('ok', [
  ControlSuccessReplySchema,
  ControlErrorReplySchema,
]);
export type ControlReply = v.InferOutput<typeof ControlReplySchema>;

const PidSchema = v.pipe(v.number(), v.integer(), v.minValue(1));

/** The result of `identify`: who answers on this home's socket. */
export const IdentifyResultSchema = v.looseObject({
  protocol: v.literal(CONTROL_PROTOCOL_VERSION),
  kind: v.literal(GATEWAY_KIND),
  pid: PidSchema,
  /** Process start-time fingerprint (Linux: clock ticks since boot), or null when unknown. */
  start_time: v.nullable(v.number()),
  hermes_home: v.string(),
  /** `default`, a profile name, or null for a custom home. */
  profile: v.nullable(v.string()),
  /** `systemd`, `launchd`, `desktop`, `external` or `manual` (open for future kinds). */
  supervisor: v.string(),
  code_sha: v.optional(v.nullable(v.string())),
  code_version: v.optional(v.nullable(v.string())),
  /** Present only for a multiplexing gateway. */
  served_profiles: v.optional(v.array(v.string())),
});
export type IdentifyResult = v.InferOutput<typeof IdentifyResultSchema>;

/**
 * The result of `status`: the live `gateway_state.json` record (its fields pass through as the
 * file holds them, see the README) plus who answered and when.
 */
export const StatusResultSchema = v.looseObject({
  protocol: v.literal(CONTROL_PROTOCOL_VERSION),
  /** Epoch seconds (fractional). */
  answered_at: v.number(),
  answering_pid: PidSchema,
});
export type StatusResult = v.InferOutput<typeof StatusResultSchema>;
