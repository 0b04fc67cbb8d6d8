import http from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import type OpenAI from 'openai';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';
import {
  applyChatCompletion,
  buildChatCompletionsBody,
  chatCompletionsJson,
  createChatChunkReader,
  type TransportCallbacks,
  type TransportRequest,
} from './chat-completions-transport.js';
import type { ModelTurn } from './chat-message.js';
import { EventStreamDecoder } from './event-stream-decoder.js';
import type { ModelRoute } from './model-route.js';
import { decoderFor } from './plain-http-fetch.js';

/** Where a route's chat-completions requests go, and the headers the SDK would send with them. */
export interface DirectEndpoint {
  readonly requestOptions: http.RequestOptions;
  readonly headers: Readonly<Record<string, string>>;
  /** How long to wait for the response headers (the SDK's `timeout`: not the body). */
  readonly timeoutMs: number;
}

/**
 * The endpoint of a plain-`http:` route, taken from the SDK client itself: its `buildRequest`
 * gives the URL and every header it would send (`Authorization`, `User-Agent`, the
 * `X-Stainless-*` set, `OpenAI-Organization` and the rest read from the environment), so the
 * wire request cannot drift from the SDK's when either changes.
 */
export async function directEndpoint(
  client: OpenAI,
  route: ModelRoute,
  agent: http.Agent,
): Promise<DirectEndpoint> {
  const { req, url, timeout } = await client.buildRequest({
    method: 'post',
    path: '/chat/completions',
    body: '{}',
    headers: { 'content-type': 'application/json' },
    ...(route.timeoutS ? { timeout: route.timeoutS * 1000 } : {}),
  });
  const headers: Record<string, string> = {};
  new Headers(req.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => {
    headers[name] = value;
  });
  const requestOptions = { ...urlToHttpOptions(new URL(url)), method: 'POST', agent };
  return { requestOptions, headers, timeoutMs: timeout };
}

/**
 * Runs one chat-completions call straight over `node:http` — the request the SDK would send, and
 * the same `ModelTurn` from the reply — without the SDK's fetch, `Response`, web-stream and
 * async-iterator layers: 0.25–0.5 ms a call less against a local server
 * (`bench/model-transport.bench.ts`).
 *
 * Failures take the shapes the SDK gives them, so retries classify them alike: a non-2xx answer
 * is `APIError.generate(status, body, text, headers)`; a failure before the response is an
 * `APIConnectionError` whose cause is fetch's `TypeError('fetch failed')` around the socket error
 * (`APIConnectionTimeoutError` when the headers do not come within `timeoutMs`); a connection lost
 * mid-body is fetch's `TypeError('terminated')` around it; an `error` object in a stream event is
 * an `APIError` without status; an abort is `APIUserAbortError` and closes the connection.
 */
export function runDirectChatCompletions(
  endpoint: DirectEndpoint,
  request: TransportRequest,
  turn: ModelTurn,
  callbacks: TransportCallbacks,
): Promise<void> {
  const json = chatCompletionsJson(buildChatCompletionsBody(request), request.tools);
  const { signal } = callbacks;
  if (signal?.aborted) return Promise.reject(new APIUserAbortError());
  const body = Buffer.from(json);

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let response: http.IncomingMessage | undefined;
    let decoder: Transform | undefined;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) {
        resolve();
        return;
      }
      // A response read to its end leaves its connection in the pool; anything else closes it.
      if (!response?.complete) {
        outgoing.destroy();
        decoder?.destroy();
      }
      reject(error);
    };
    const onAbort = () => settle(new APIUserAbortError());
    const timer = setTimeout(() => {
      if (!response) settle(new APIConnectionTimeoutError());
    }, endpoint.timeoutMs);

    const headers = { ...endpoint.headers, 'content-length': String(body.byteLength) };
    const outgoing = http.request({ ...endpoint.requestOptions, headers }, (incoming) => {
      response = incoming;
      onResponse(incoming);
    });
    outgoing.on('error', (error) => settle(response ? bodyLost(error) : connectionFailed(error)));
    signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.end(body);

    // A connection lost mid-body: fetch's `TypeError('terminated')`, which the SDK passes on —
    // except under an error answer, whose text the SDK then takes from the error's message.
    let bodyLost = (cause: unknown): unknown => terminated(cause);

    const onResponse = (incoming: http.IncomingMessage) => {
      clearTimeout(timer);
      if (settled) {
        incoming.destroy();
        return;
      }
      incoming.on('error', (error) => settle(bodyLost(error)));
      // A response destroyed without an error must not pass for a complete body either.
      incoming.on('close', () => {
        if (!incoming.complete) settle(bodyLost(connectionLost()));
      });
      decoder = decoderFor(incoming.headers['content-encoding']);
      decoder?.on('error', (error) => settle(bodyLost(error)));
      const source: Readable = decoder ? incoming.pipe(decoder) : incoming;
      const status = incoming.statusCode ?? 0;
      if (status < 200 || status > 299) {
        bodyLost = () => statusError(status, 'terminated', incoming);
        readText(source, (text) => settle(statusError(status, text, incoming)));
        return;
      }
      if (request.stream) {
        // fetch gives these no body, and the SDK refuses to iterate it.
        if (status === 204 || status === 205) {
          source.resume();
          settle(new OpenAIError('Attempted to iterate over a response with no body'));
          return;
        }
        readEvents(source, incoming);
        return;
      }
      // What the SDK's response parser makes of each kind of answer.
      if (status === 204) {
        source.resume();
        complete(null);
        return;
      }
      const mediaType = incoming.headers['content-type']?.split(';')[0]?.trim();
      const isJson = mediaType?.includes('application/json') || mediaType?.endsWith('+json');
      if (isJson && incoming.headers['content-length'] === '0') {
        source.resume();
        complete(undefined);
        return;
      }
      readText(source, (text) => {
        try {
          complete(isJson ? JSON.parse(text) : text);
        } catch (error) {
          settle(error);
        }
      });
    };

    const complete = (completion: unknown) => {
      if (settled) return;
      try {
        applyChatCompletion(completion, turn);
      } catch (error) {
        settle(error);
        return;
      }
      settle();
    };

    const readText = (source: Readable, onText: (text: string) => void) => {
      const chunks: Buffer[] = [];
      source.on('data', (chunk: Buffer) => chunks.push(chunk));
      source.on('end', () => {
        if (!settled) onText(utf8Text(chunks));
      });
    };

    const readEvents = (source: Readable, incoming: http.IncomingMessage) => {
      const reader = createChatChunkReader(turn, callbacks);
      // Events after `[DONE]` are read (so the connection returns to the pool) but not used.
      let done = false;
      const events = new EventStreamDecoder(({ event, data }) => {
        // A callback that aborted stops the events still queued in this chunk.
        if (done || settled) return;
        if (data.startsWith('[DONE]')) {
          done = true;
          return;
        }
        const chunk = JSON.parse(data) as { error?: unknown } | null;
        // Assistants-API events, which the SDK passes through without looking for an error.
        if (event?.startsWith('thread.')) return;
        if (chunk?.error)
          throw new APIError(undefined, chunk.error, undefined, headersOf(incoming));
        reader.chunk(chunk);
      });
      source.on('data', (chunk: Buffer) => {
        if (settled) return;
        try {
          events.push(chunk);
        } catch (error) {
          settle(error);
        }
      });
      source.on('end', () => {
        if (settled) return;
        events.end();
        try {
          reader.end();
        } catch (error) {
          settle(error);
          return;
        }
        settle();
      });
    };
  });
}

/** The SDK's error for a non-2xx answer, built from the body as the SDK reads it. */
function statusError(status: number, text: string, incoming: http.IncomingMessage): APIError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return APIError.generate(
    status,
    json as object | undefined,
    json ? undefined : text,
    headersOf(incoming),
  );
}

/** What the SDK throws for a failure before the response (it wraps fetch's error). */
function connectionFailed(cause: Error): APIConnectionError {
  const failure = new TypeError('fetch failed', { cause });
  // The SDK's own test for a timeout among connection errors (`ETIMEDOUT`, say).
  if (/timed? ?out/i.test(String(failure) + String(cause))) return new APIConnectionTimeoutError();
  return new APIConnectionError({ cause: failure });
}

/** fetch's error for a body cut short, with the socket error as its cause. */
function terminated(cause: unknown): TypeError {
  return new TypeError('terminated', { cause });
}

/** What Node itself reports for a response cut short: a reset `aborted`. */
function connectionLost(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

function headersOf(incoming: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2)
    headers.append(raw[index] as string, raw[index + 1] as string);
  return headers;
}

/** A body as fetch's `text()` decodes it: UTF-8, a leading byte-order mark dropped. */
function utf8Text(chunks: readonly Buffer[]): string {
  const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString(
    'utf8',
  );
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
