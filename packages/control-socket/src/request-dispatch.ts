import * as v from 'valibot';
import {
  CONTROL_PROTOCOL_VERSION,
  MAX_RESPONSE_LINE_BYTES,
  REQUEST_NOT_OBJECT_ERROR,
  RESPONSE_SERIALIZATION_FAILED_ERROR,
  RESPONSE_TOO_LARGE_ERROR,
  UNKNOWN_VERB_ERROR_PREFIX,
  UNSUPPORTED_PROTOCOL_ERROR_PREFIX,
} from './constants.js';
import { pythonRepr } from './python-repr.js';
import type { VerbRegistry } from './verb-registry.js';
import { ControlRequestSchema } from './wire-schema.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** `<ErrorName>: <message>`, the reference's rendering of an exception on the wire. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `Error: ${String(error)}`;
}

function jsonReplacer(_key: string, value: unknown): unknown {
  // JSON cannot hold these; send their string form rather than failing the whole reply.
  if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') {
    return String(value);
  }
  return value;
}

/**
 * Serialises one reply as a line. Unserialisable results and oversize replies become the two
 * fixed last-resort bodies, which carry neither `protocol` nor `id`.
 */
export function encodeReply(body: Record<string, unknown>): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(body, jsonReplacer);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    return `${JSON.stringify({ ok: false, error: RESPONSE_SERIALIZATION_FAILED_ERROR })}\n`;
  }
  const line = `${text}\n`;
  if (Buffer.byteLength(line, 'utf8') > MAX_RESPONSE_LINE_BYTES) {
    return `${JSON.stringify({ ok: false, error: RESPONSE_TOO_LARGE_ERROR })}\n`;
  }
  return line;
}

function withId(body: Record<string, unknown>, id: unknown): Record<string, unknown> {
  return id === null || id === undefined ? body : { ...body, id };
}

function errorReply(error: string, id: unknown, extra: Record<string, unknown> = {}): string {
  return encodeReply(
    withId({ ok: false, error, protocol: CONTROL_PROTOCOL_VERSION, ...extra }, id),
  );
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns one request line (without its newline) into one reply line. Never throws: malformed
 * input, unknown verbs and handler failures all become `{ ok: false, … }` replies.
 */
export async function dispatchRequestLine(
  line: Uint8Array,
  registry: VerbRegistry,
): Promise<string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(line));
  } catch (error) {
    return errorReply(describeError(error), undefined);
  }
  if (!isJsonObject(parsed)) {
    return errorReply(`TypeError: ${REQUEST_NOT_OBJECT_ERROR}`, undefined);
  }
  const id = parsed.id;
  const verb = parsed.verb;
  const handler = typeof verb === 'string' ? registry.get(verb) : undefined;
  if (handler === undefined) {
    return errorReply(`${UNKNOWN_VERB_ERROR_PREFIX}${pythonRepr(verb)}`, id, {
      supported_verbs: registry.verbs(),
    });
  }
  if (parsed.protocol !== undefined && parsed.protocol !== CONTROL_PROTOCOL_VERSION) {
    return errorReply(`${UNSUPPORTED_PROTOCOL_ERROR_PREFIX}${pythonRepr(parsed.protocol)}`, id, {
      supported_protocols: [CONTROL_PROTOCOL_VERSION],
    });
  }
  const request = v.safeParse(ControlRequestSchema, parsed);
  if (!request.success) {
    const issue = request.issues[0];
    const field = issue.path?.map((item) => String(item.key)).join('.') ?? 'request';
    return errorReply(`TypeError: invalid request field "${field}": ${issue.message}`, id);
  }
  try {
    // A handler that returns nothing still answers `result: null`, never a reply without `result`.
    const result = (await handler(request.output)) ?? null;
    return encodeReply(withId({ ok: true, protocol: CONTROL_PROTOCOL_VERSION, result }, id));
  } catch (error) {
    return errorReply(describeError(error), id);
  }
}
