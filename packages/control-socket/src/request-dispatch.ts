import * as v from 'valibot';
import {
  CONTROL_PROTOCOL_VERSION,
  DEFAULT_HANDLER_TIMEOUT_MS,
  HANDLER_TIMEOUT_ERROR_PREFIX,
  MAX_RESPONSE_LINE_BYTES,
  REQUEST_NOT_OBJECT_ERROR,
  RESPONSE_SERIALIZATION_FAILED_ERROR,
  RESPONSE_TOO_LARGE_ERROR,
  UNKNOWN_VERB_ERROR_PREFIX,
  UNSUPPORTED_PROTOCOL_ERROR_PREFIX,
} from './constants.js';
import { pythonRepr } from './python-repr.js';
import type { VerbHandler, VerbRegistry } from './verb-registry.js';
import { type ControlRequest, ControlRequestSchema } from './wire-schema.js';

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

export interface DispatchOptions {
  /** How long the handler may take (default 10 s); then the reply is a `TimeoutError`. */
  readonly handlerTimeoutMs?: number;
  /** Aborts the handler's signal early (the server passes the connection's end). */
  readonly signal?: AbortSignal;
}

const TIMED_OUT = Symbol('timed out');
const ABANDONED = Symbol('abandoned');

/**
 * Runs `handler` against its deadline. A handler that never settles cannot hold the caller: at
 * the deadline its signal is aborted and `TIMED_OUT` returned; when the caller's signal aborts
 * first (the connection went away), `ABANDONED`. What the handler settles to later is dropped.
 */
async function runWithDeadline(
  handler: VerbHandler,
  request: ControlRequest,
  options: DispatchOptions,
): Promise<unknown> {
  const controller = new AbortController();
  const external = options.signal;
  let timer: NodeJS.Timeout | undefined;
  let onExternalAbort = () => {};
  const cutOff = new Promise<typeof TIMED_OUT | typeof ABANDONED>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException('verb handler deadline passed', 'TimeoutError'));
      resolve(TIMED_OUT);
    }, options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS);
    timer.unref();
    onExternalAbort = () => {
      controller.abort(external?.reason);
      resolve(ABANDONED);
    };
    if (external?.aborted) onExternalAbort();
    else external?.addEventListener('abort', onExternalAbort, { once: true });
  });
  try {
    // Called inside the race so a synchronous throw is a rejection like any other.
    return await Promise.race([
      (async () => handler(request, { signal: controller.signal }))(),
      cutOff,
    ]);
  } finally {
    clearTimeout(timer);
    external?.removeEventListener('abort', onExternalAbort);
  }
}

/**
 * Turns one request line (without its newline) into one reply line. Never throws: malformed
 * input, unknown verbs, handler failures and handlers past their deadline all become
 * `{ ok: false, … }` replies.
 */
export async function dispatchRequestLine(
  line: Uint8Array,
  registry: VerbRegistry,
  options: DispatchOptions = {},
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
  // A null protocol is an absent one, as a null id is (clients that serialise "unset" as null).
  const protocol = parsed.protocol;
  if (protocol !== undefined && protocol !== null && protocol !== CONTROL_PROTOCOL_VERSION) {
    return errorReply(`${UNSUPPORTED_PROTOCOL_ERROR_PREFIX}${pythonRepr(protocol)}`, id, {
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
    const result = await runWithDeadline(handler, request.output, options);
    if (result === TIMED_OUT) {
      const timeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
      return errorReply(
        `${HANDLER_TIMEOUT_ERROR_PREFIX}${pythonRepr(verb)} did not answer within ${timeoutMs} ms`,
        id,
      );
    }
    if (result === ABANDONED) {
      return errorReply(`AbortError: verb ${pythonRepr(verb)} was abandoned by the caller`, id);
    }
    // A handler that returns nothing still answers `result: null`, never a reply without `result`.
    return encodeReply(
      withId({ ok: true, protocol: CONTROL_PROTOCOL_VERSION, result: result ?? null }, id),
    );
  } catch (error) {
    return errorReply(describeError(error), id);
  }
}
