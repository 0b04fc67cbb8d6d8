import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as v from 'valibot';
import {
  CONTROL_PROTOCOL_VERSION,
  DEFAULT_CONTROL_TIMEOUT_MS,
  IDENTIFY_VERB,
  MAX_RESPONSE_LINE_BYTES,
  STATUS_VERB,
} from './constants.js';
import {
  type ClientSocketPathOptions,
  directSocketPath,
  isTrustedSocket,
  resolvePointerTarget,
  windowsPipeName,
} from './socket-path.js';
import {
  type IdentifyResult,
  IdentifyResultSchema,
  type StatusResult,
  StatusResultSchema,
} from './wire-schema.js';

/** How often a busy Windows pipe is retried. */
const PIPE_BUSY_RETRY_MS = 50;

export interface QueryOptions extends ClientSocketPathOptions {
  /** One deadline covering resolve, connect, send and read (default 2 s). */
  readonly timeoutMs?: number;
  /** Arguments for verbs that take them. */
  readonly payload?: Readonly<Record<string, unknown>>;
  /**
   * Aborting it makes the query reject with `signal.reason` (an `AbortError` `DOMException`
   * unless the caller gave another) and drops the connection at once; an already-aborted signal
   * rejects before anything is connected. The only way the query rejects.
   */
  readonly signal?: AbortSignal;
}

type Exchange = { kind: 'reply'; line: string } | { kind: 'failed' } | { kind: 'pipe_busy' };

/**
 * One connection: connect, send, read one line. Its own timer enforces `deadline`, so once the
 * target is known nothing else has to race it. Aborting `signal` rejects with its reason and
 * destroys the socket at once; an aborted signal rejects before anything is connected.
 */
function exchangeOnce(
  target: string,
  request: string,
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = net.connect(target);
    const settle = (report: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      report();
    };
    const onAbort = () => settle(() => reject(signal?.reason));
    const finish = (outcome: Exchange) => settle(() => resolve(outcome));
    const timer = setTimeout(
      () => finish({ kind: 'failed' }),
      Math.max(0, deadline - performance.now()),
    );
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.indexOf(10);
      const partSize = newline === -1 ? chunk.byteLength : newline;
      size += partSize;
      if (size > MAX_RESPONSE_LINE_BYTES) return finish({ kind: 'failed' });
      // The usual reply arrives in one chunk: decode it in place instead of copying it first.
      if (newline !== -1 && chunks.length === 0) {
        return finish({ kind: 'reply', line: chunk.toString('utf8', 0, newline) });
      }
      chunks.push(newline === -1 ? chunk : chunk.subarray(0, newline));
      if (newline !== -1) finish({ kind: 'reply', line: Buffer.concat(chunks).toString('utf8') });
    });
    socket.once('end', () => {
      finish(
        size > 0
          ? { kind: 'reply', line: Buffer.concat(chunks).toString('utf8') }
          : { kind: 'failed' },
      );
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const windowsPipe = process.platform === 'win32' && target.startsWith('\\\\.\\pipe\\');
      finish(windowsPipe && error.code !== 'ENOENT' ? { kind: 'pipe_busy' } : { kind: 'failed' });
    });
  });
}

/**
 * Resolves `null` at `deadline` unless `work` settles first, and rejects with the signal's reason
 * the moment `signal` aborts. `work` is left to finish on its own: it holds no connection (the
 * exchange it may start later sees the aborted signal and never connects).
 */
async function beforeDeadline<T>(
  work: Promise<T | null>,
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const expired = new Promise<null>((resolve, reject) => {
    timer = setTimeout(() => resolve(null), Math.max(0, deadline - performance.now()));
    timer.unref();
    if (signal === undefined) return;
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // Once the race is decided a later rejection of `work` (its aborted exchange) is nobody's.
  work.catch(() => {});
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `result` object of a well-formed `ok: true` reply line, else `null`. What
 * `ControlSuccessReplySchema` asks of a success reply (`ok: true`, `protocol: 1`) is checked
 * directly: every other line — an error reply, or anything malformed — answers `null` whatever
 * the schema would say about it, so running the schema (about 1 µs) changed nothing.
 */
function resultOf(exchange: Exchange): Record<string, unknown> | null {
  if (exchange.kind !== 'reply') return null;
  const reply: unknown = JSON.parse(exchange.line);
  if (!isJsonObject(reply) || reply.ok !== true || reply.protocol !== CONTROL_PROTOCOL_VERSION) {
    return null;
  }
  return isJsonObject(reply.result) ? reply.result : null;
}

// Request lines of verbs asked without a payload: the same text every time.
const plainRequestLines = new Map<string, string>();
const MAX_CACHED_REQUEST_LINES = 64;

/** The request line (with its newline) asking `verb`, with `payload` when given. */
function requestLine(verb: string, payload: Readonly<Record<string, unknown>> | undefined): string {
  if (payload === undefined) {
    const cached = plainRequestLines.get(verb);
    if (cached !== undefined) return cached;
  }
  const body: Record<string, unknown> = { verb, id: 1, protocol: CONTROL_PROTOCOL_VERSION };
  if (payload !== undefined) body.payload = payload;
  const line = `${JSON.stringify(body)}\n`;
  if (payload === undefined && plainRequestLines.size < MAX_CACHED_REQUEST_LINES) {
    plainRequestLines.set(verb, line);
  }
  return line;
}

/**
 * Asks the gateway of `home` one verb and returns its `result` object, or `null` on any failure:
 * no socket, an untrusted socket, refused, timeout, garbage, oversize, `ok: false`, or a result
 * that is not a JSON object. Never takes longer than its timeout, and rejects only when
 * `options.signal` aborts (with the signal's reason, at once, leaving no connection, timer or
 * listener behind). A home that is not an absolute path (e.g. an empty `HERMES_HOME`) is refused
 * with `null` rather than resolved against the working directory, where some other process's
 * socket could answer.
 */
export async function queryControlSocket(
  home: string,
  verb: string,
  options: QueryOptions = {},
): Promise<Record<string, unknown> | null> {
  const { signal } = options;
  signal?.throwIfAborted();
  const deadline = performance.now() + (options.timeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS);
  const platformPath = (options.platform ?? process.platform) === 'win32' ? path.win32 : path.posix;
  if (typeof home !== 'string' || !platformPath.isAbsolute(home)) return null;
  try {
    const request = requestLine(verb, options.payload);
    if ((options.platform ?? process.platform) !== 'win32') {
      // The common case: the node is checked before connecting (synchronously, see
      // `isTrustedSocket`), so an untrusted socket never receives a connection, let alone a
      // request; and until the exchange nothing waits, so its timer alone keeps the deadline.
      const direct = directSocketPath(home);
      if (isTrustedSocket(direct, options.onRejected)) {
        return resultOf(await exchangeOnce(direct, request, deadline, signal));
      }
    }
    // The other paths wait on the file system first (the pointer file; the home's real path for
    // the pipe name), which the exchange's timer does not cover: a stalled file system must not
    // hang us past the deadline.
    return await beforeDeadline(indirectQuery(home, request, deadline, options), deadline, signal);
  } catch {
    // Whatever failed, a query whose signal aborted reports the abort.
    if (signal?.aborted) throw signal.reason;
    return null;
  }
}

/** Through the pointer file on POSIX, through the named pipe (retrying while busy) on Windows. */
async function indirectQuery(
  home: string,
  request: string,
  deadline: number,
  options: QueryOptions,
): Promise<Record<string, unknown> | null> {
  if ((options.platform ?? process.platform) !== 'win32') {
    const target = await resolvePointerTarget(home, options);
    return target === null
      ? null
      : resultOf(await exchangeOnce(target, request, deadline, options.signal));
  }
  const pipe = await windowsPipeName(home);
  let exchange = await exchangeOnce(pipe, request, deadline, options.signal);
  while (exchange.kind === 'pipe_busy' && performance.now() + PIPE_BUSY_RETRY_MS < deadline) {
    await sleep(PIPE_BUSY_RETRY_MS, undefined, { ref: false, signal: options.signal });
    exchange = await exchangeOnce(pipe, request, deadline, options.signal);
  }
  return resultOf(exchange);
}

/** `identify`, validated; `null` when nothing trustworthy answers. */
export async function identifyGateway(
  home: string,
  options: QueryOptions = {},
): Promise<IdentifyResult | null> {
  const result = await queryControlSocket(home, IDENTIFY_VERB, options);
  const parsed = v.safeParse(IdentifyResultSchema, result);
  return parsed.success ? parsed.output : null;
}

/** `status`, validated; `null` when nothing trustworthy answers. */
export async function queryGatewayStatus(
  home: string,
  options: QueryOptions = {},
): Promise<StatusResult | null> {
  const result = await queryControlSocket(home, STATUS_VERB, options);
  const parsed = v.safeParse(StatusResultSchema, result);
  return parsed.success ? parsed.output : null;
}
