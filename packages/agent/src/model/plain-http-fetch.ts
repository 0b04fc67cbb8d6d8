import http from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { schemeOf } from './endpoint-url.js';

/**
 * How long an idle keep-alive socket is kept. Below the 5 s most local servers close idle
 * connections after (Node, uvicorn/vLLM, llama.cpp), so a reused socket is rarely one the server
 * is closing; a shorter `Keep-Alive: timeout=N` from the server wins (Node's agent reads it).
 */
export const PLAIN_HTTP_IDLE_TIMEOUT_MS = 4_000;

export interface PlainHttpFetchOptions {
  /** Idle keep-alive sockets are closed after this long (default `PLAIN_HTTP_IDLE_TIMEOUT_MS`). */
  readonly idleTimeoutMs?: number;
  /** The keep-alive pool to use (default: a pool of its own; `idleTimeoutMs` is then ignored). */
  readonly agent?: http.Agent;
}

export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** Framing and connection headers this transport manages itself. */
const MANAGED_HEADERS = new Set([
  'connection',
  'content-length',
  'keep-alive',
  'transfer-encoding',
]);

/**
 * A `fetch` for `http:` model servers (Ollama, vLLM, llama.cpp, LM Studio, anything on loopback)
 * built on `node:http` with a keep-alive agent. A streamed SDK call to a loopback server costs
 * about a fifth less with it than with Node's global fetch (undici), and the agent pays that on
 * every model call.
 *
 * Only plain `http:` URLs with a string, `Uint8Array`, `ArrayBuffer` or `URLSearchParams` body
 * (what the OpenAI SDK sends) go through `node:http`; anything else — `https:`, a `Request`
 * object, a `FormData`, `Blob` or stream body — is handed to `globalThis.fetch` unchanged. Remote
 * `https:` providers stay on undici: their round trip is tens of milliseconds, so the fraction
 * of one saved here is noise, while TLS settings, proxies and the rest are where a hand-made
 * transport would go wrong.
 *
 * It behaves like fetch where the SDK relies on it:
 * - a failure before the response (`ECONNREFUSED`, a reset) rejects with
 *   `TypeError('fetch failed', { cause })`, and a connection lost mid-body errors the body with
 *   `TypeError('terminated', { cause })` — undici's shapes, with the socket error (and its
 *   `code`) as `cause`;
 * - an abort (before the request, while waiting for headers, or mid-body) rejects or errors the
 *   body with the signal's reason: the SDK's own abort gives a `DOMException` named `AbortError`;
 * - cancelling the body destroys the connection, so a half-read response never returns to the pool;
 * - a `gzip`, `deflate` or `br` body is decoded, although no `Accept-Encoding` is sent (servers
 *   answer uncompressed then; the request body is never compressed).
 *
 * Where it differs: redirects are not followed (a 3xx is returned as it came; the model API
 * never redirects), no fetch defaults such as `sec-fetch-mode` or `accept-encoding` are added,
 * and fetch's blocked ports (6000, 6665–6669, …) are not blocked. Idle sockets are unref'd by
 * Node's agent, so a pooled connection never keeps a process alive.
 */
export function createPlainHttpFetch(options: PlainHttpFetchOptions = {}): FetchFunction {
  const agent = options.agent ?? createPlainHttpAgent(options.idleTimeoutMs);
  return (input, init = {}) => {
    const url = input instanceof Request ? undefined : parseUrl(String(input));
    const body = url?.protocol === 'http:' ? encodeBody(init.body) : undefined;
    // An https URL, an unparsable one (for fetch's own error) or a body we do not send.
    if (!url || body === undefined) return globalThis.fetch(input, init);
    return request(url, init, body, agent);
  };
}

/** The `fetch` for a route's base URL: `node:http` for plain http, the SDK's default otherwise. */
export function fetchForBaseUrl(baseUrl: string): FetchFunction | undefined {
  return isPlainHttpBaseUrl(baseUrl) ? sharedPlainHttpFetch() : undefined;
}

/** A base URL on plain `http:` (a local model server, usually). */
export function isPlainHttpBaseUrl(baseUrl: string): boolean {
  return schemeOf(baseUrl) === 'http';
}

/** `URL.parse` arrived in Node 20.18; the package supports 20.12. */
function parseUrl(text: string): URL | undefined {
  return URL.canParse(text) ? new URL(text) : undefined;
}

/**
 * A keep-alive pool whose idle sockets close after `idleTimeoutMs`. Node's agent unrefs a socket
 * while it sits idle in the pool, so a pooled connection never keeps a process alive.
 */
function createPlainHttpAgent(idleTimeoutMs = PLAIN_HTTP_IDLE_TIMEOUT_MS): http.Agent {
  return new http.Agent({ keepAlive: true, timeout: idleTimeoutMs });
}

let sharedAgent: http.Agent | undefined;
let sharedFetch: FetchFunction | undefined;

/**
 * One keep-alive pool per process, like undici's global dispatcher on the https side: the agent,
 * its delegated children and compression each build their own model client, and all of them —
 * SDK calls through `fetchForBaseUrl` and direct chat-completions calls alike — reuse the same
 * warm connections to the local server.
 */
export function sharedPlainHttpAgent(): http.Agent {
  sharedAgent ??= createPlainHttpAgent();
  return sharedAgent;
}

function sharedPlainHttpFetch(): FetchFunction {
  sharedFetch ??= createPlainHttpFetch({ agent: sharedPlainHttpAgent() });
  return sharedFetch;
}

interface EncodedBody {
  readonly bytes: Uint8Array | null;
  readonly contentType?: string;
}

/** The bytes to send, or `undefined` when this body is left to the global fetch. */
function encodeBody(body: RequestInit['body']): EncodedBody | undefined {
  if (body === undefined || body === null) return { bytes: null };
  if (typeof body === 'string')
    return { bytes: Buffer.from(body), contentType: 'text/plain;charset=UTF-8' };
  if (ArrayBuffer.isView(body))
    return { bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body) };
  if (body instanceof URLSearchParams)
    return {
      bytes: Buffer.from(body.toString()),
      contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
    };
  return undefined;
}

/** What Node itself reports for a response cut short: a reset `aborted`. */
function connectionLost(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function request(
  url: URL,
  init: RequestInit,
  body: EncodedBody,
  agent: http.Agent,
): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase();
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (body.bytes && (method === 'GET' || method === 'HEAD'))
    return Promise.reject(new TypeError('Request with GET/HEAD method cannot have body.'));

  const headers: Record<string, string> = {};
  const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
  given.forEach((value, name) => {
    if (!MANAGED_HEADERS.has(name)) headers[name] = value;
  });
  if (body.contentType && headers['content-type'] === undefined)
    headers['content-type'] = body.contentType;
  if (body.bytes) headers['content-length'] = String(body.bytes.byteLength);
  else if (method === 'POST' || method === 'PUT') headers['content-length'] = '0';

  return new Promise<Response>((resolve, reject) => {
    // Settles exactly once; whatever happens after (the destroy's own error) is ignored.
    let responded = false;
    const onAbort = () => {
      if (responded) return;
      responded = true;
      req.destroy();
      reject(abortReason(signal as AbortSignal));
    };
    const req = http.request(url, { method, headers, agent }, (res) => {
      if (responded) {
        res.destroy();
        return;
      }
      responded = true;
      signal?.removeEventListener('abort', onAbort);
      const hasBody = method !== 'HEAD' && !NULL_BODY_STATUSES.has(res.statusCode ?? 0);
      // Nothing to read: drain the (empty) message so its socket goes back to the pool.
      if (!hasBody) res.on('error', () => {}).resume();
      try {
        resolve(toResponse(res, url, hasBody, signal));
      } catch (error) {
        res.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    req.on('error', (error) => {
      if (responded) return;
      responded = true;
      signal?.removeEventListener('abort', onAbort);
      reject(new TypeError('fetch failed', { cause: error }));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body.bytes ?? undefined);
  });
}

function toResponse(
  res: http.IncomingMessage,
  url: URL,
  hasBody: boolean,
  signal: AbortSignal | undefined,
): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.append(raw[index] as string, raw[index + 1] as string);
  const init = { status, statusText: res.statusMessage ?? '', headers };
  const stream = hasBody ? bodyStream(res, signal) : null;
  let response: Response;
  try {
    response = new Response(stream, init);
  } catch (error) {
    // A reason phrase fetch will not carry (non-ASCII, say) is dropped rather than the response.
    if (!(error instanceof TypeError) || init.statusText === '') throw error;
    response = new Response(stream, { ...init, statusText: '' });
  }
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** A streaming decoder for a response's `content-encoding`, or `undefined` for none we decode. */
export function decoderFor(
  encoding: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  // Sync flushes let a compressed event stream decode chunk by chunk, as undici does.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(flush);
    case 'deflate':
      return zlib.createInflate(flush);
    case 'br':
      return zlib.createBrotliDecompress({
        flush: zlib.constants.BROTLI_OPERATION_FLUSH,
        finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
      });
    default:
      return undefined;
  }
}

/**
 * The response body as a web stream that pulls from the socket (backpressure pauses it), ends
 * with the response, errors with `TypeError('terminated')` when the connection drops first or
 * with the abort reason when the signal fires, and destroys the connection when cancelled.
 */
function bodyStream(
  res: http.IncomingMessage,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  const decoder = decoderFor(res.headers['content-encoding']);
  const source: Readable = decoder ? res.pipe(decoder) : res;
  let finished = false;
  let onAbort = () => {};
  const finish = () => {
    finished = true;
    signal?.removeEventListener('abort', onAbort);
  };
  const destroy = () => {
    res.destroy();
    decoder?.destroy();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: unknown) => {
        if (finished) return;
        finish();
        destroy();
        controller.error(error);
      };
      onAbort = () => fail(abortReason(signal as AbortSignal));
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      source.on('data', (chunk: Buffer) => {
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) source.pause();
      });
      source.on('end', () => {
        if (finished) return;
        finish();
        controller.close();
      });
      // The connection lost mid-body (Node gives `ECONNRESET` 'aborted'), or a decoding error.
      res.on('error', (error) => fail(new TypeError('terminated', { cause: error })));
      decoder?.on('error', (error) => fail(new TypeError('terminated', { cause: error })));
      // A response destroyed without an error must not pass for a complete body either.
      res.on('close', () => {
        if (!res.complete) fail(new TypeError('terminated', { cause: connectionLost() }));
      });
    },
    pull() {
      source.resume();
    },
    cancel() {
      if (finished) return;
      finish();
      destroy();
    },
  });
}
