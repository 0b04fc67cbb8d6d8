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
import type { VerbHandler, VerbHandlerContext, VerbRegistry } from './verb-registry.js';
import { type ControlRequest, ControlRequestSchema, MAX_VERB_NAME_LENGTH } from './wire-schema.js';

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

/** How deep `isPlainJson` looks before it leaves a value to the replacer. */
const PLAIN_JSON_MAX_DEPTH = 32;

/**
 * True when `value` is made only of strings, finite or not numbers, booleans, null, undefined,
 * arrays and plain objects (nesting at most `PLAIN_JSON_MAX_DEPTH`): values `jsonReplacer` passes
 * through untouched, so `JSON.stringify` without it gives the same text. The replacer costs more
 * than the whole rest of a dispatch (V8 leaves its fast path for any replacer function), and
 * nearly every reply is plain. Anything else — a bigint, a symbol, a function, a class instance,
 * an object with `toJSON`, deep or cyclic nesting — answers false and goes through the replacer.
 */
function isPlainJson(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'undefined':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= PLAIN_JSON_MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (const item of value) if (!isPlainJson(item, depth + 1)) return false;
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      if ('toJSON' in value) return false;
      for (const key in value) {
        if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Serialises one reply as a line. Unserialisable results and oversize replies become the two
 * fixed last-resort bodies, which carry neither `protocol` nor `id`.
 */
export function encodeReply(body: Record<string, unknown>): string {
  let text: string | undefined;
  try {
    text = isPlainJson(body) ? JSON.stringify(body) : JSON.stringify(body, jsonReplacer);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    return `${JSON.stringify({ ok: false, error: RESPONSE_SERIALIZATION_FAILED_ERROR })}\n`;
  }
  const line = `${text}\n`;
  // A string's UTF-8 form takes at most three bytes per UTF-16 unit: most lines need no count.
  if (
    line.length * 3 > MAX_RESPONSE_LINE_BYTES &&
    Buffer.byteLength(line, 'utf8') > MAX_RESPONSE_LINE_BYTES
  ) {
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
 * The common request — a registered verb name and no `payload` (the protocol was checked before)
 * — which `ControlRequestSchema` accepts as it is: the schema is skipped for it (about 1 µs). Any
 * other request goes through the schema, which says what is wrong with it.
 */
function isPlainRequest(parsed: Record<string, unknown>): parsed is ControlRequest {
  const verb = parsed.verb;
  return (
    typeof verb === 'string' &&
    verb.length >= 1 &&
    verb.length <= MAX_VERB_NAME_LENGTH &&
    parsed.payload === undefined
  );
}

export interface DispatchOptions {
  /** How long the handler may take (default 10 s); then the reply is a `TimeoutError`. */
  readonly handlerTimeoutMs?: number;
  /** Cuts the handler loose early (its own signal is aborted, the reply is an `AbortError`). */
  readonly signal?: AbortSignal;
}

/**
 * A slot the dispatcher fills, while a handler runs, with the function that cuts it loose. The
 * server ties it to the connection's close. (An `AbortSignal` listener would do the same, but
 * adding and removing one costs several microseconds — a tenth of a whole `identify` exchange.)
 */
export interface AbandonSlot {
  abandon?: (() => void) | undefined;
}

const TIMED_OUT = Symbol('timed out');
const ABANDONED = Symbol('abandoned');

/**
 * The context a handler gets. Its `signal` is made on first read: an `AbortController` and its
 * signal cost about 9 µs to create on Node 20, as much as the rest of an `identify` dispatch, and
 * most handlers never look at it. A signal read after the cut-off comes back already aborted.
 */
class LazyAbortContext implements VerbHandlerContext {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * Runs `handler` against its deadline. A handler that never settles cannot hold the caller: at
 * the deadline its signal is aborted and `TIMED_OUT` returned; when the caller abandons it first
 * (the connection went away), `ABANDONED`. What the handler settles to later is dropped. (One
 * hand-made promise rather than `Promise.race`: this is on every request's path.)
 */
function runWithDeadline(
  handler: VerbHandler,
  request: ControlRequest,
  handlerTimeoutMs: number,
  slot: AbandonSlot | undefined,
): Promise<unknown> {
  const context = new LazyAbortContext();
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (slot !== undefined) slot.abandon = undefined;
      finish();
    };
    const timer = setTimeout(() => {
      context.abort(new DOMException('verb handler deadline passed', 'TimeoutError'));
      settle(() => resolve(TIMED_OUT));
    }, handlerTimeoutMs);
    timer.unref();
    if (slot !== undefined) {
      slot.abandon = () => {
        context.abort(new DOMException('the caller went away', 'AbortError'));
        settle(() => resolve(ABANDONED));
      };
    }
    let outcome: unknown;
    try {
      outcome = handler(request, context);
    } catch (error) {
      settle(() => reject(error));
      return;
    }
    Promise.resolve(outcome).then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
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
  const { signal } = options;
  const timeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  if (signal === undefined) return dispatchWithSlot(line, registry, timeoutMs, undefined);
  const slot: AbandonSlot = {};
  // Runs synchronously up to the handler, so the slot is filled once this returns.
  const pending = dispatchWithSlot(line, registry, timeoutMs, slot);
  const onAbort = () => slot.abandon?.();
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await pending;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * `dispatchRequestLine` for the server: `slot` receives the function that abandons the running
 * handler. Runs synchronously until the handler is called.
 */
export async function dispatchWithSlot(
  line: Uint8Array,
  registry: VerbRegistry,
  handlerTimeoutMs: number,
  slot: AbandonSlot | undefined,
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
  let request: ControlRequest;
  if (isPlainRequest(parsed)) {
    request = parsed;
  } else {
    const checked = v.safeParse(ControlRequestSchema, parsed);
    if (!checked.success) {
      const issue = checked.issues[0];
      const field = issue.path?.map((item) => String(item.key)).join('.') ?? 'request';
      return errorReply(`TypeError: invalid request field "${field}": ${issue.message}`, id);
    }
    request = checked.output;
  }
  try {
    const result = await runWithDeadline(handler, request, handlerTimeoutMs, slot);
    if (result === TIMED_OUT) {
      return errorReply(
        `${HANDLER_TIMEOUT_ERROR_PREFIX}${pythonRepr(verb)} did not answer within ${handlerTimeoutMs} ms`,
        id,
      );
    }
    if (result === ABANDONED) {
      return errorReply(`AbortError: verb ${pythonRepr(verb)} was abandoned by the caller`, id);
    }
    // A handler that returns nothing still answers `result: null`, never a reply without `result`.
    // One literal per shape (the same keys, in the same order, as `withId` gives): spreading a
    // reply to add its `id` costs about 2 µs per request on Node 20.
    return encodeReply(
      id === null || id === undefined
        ? { ok: true, protocol: CONTROL_PROTOCOL_VERSION, result: result ?? null }
        : { ok: true, protocol: CONTROL_PROTOCOL_VERSION, result: result ?? null, id },
    );
  } catch (error) {
    return errorReply(describeError(error), id);
  }
}
