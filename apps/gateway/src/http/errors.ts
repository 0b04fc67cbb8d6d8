import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { RequestError } from '@hono/node-server';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The OpenAI error `type` for each status the gateway answers with. */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * An expected refusal with an HTTP status and a stable `code`. Routes throw it; the app's error
 * handler renders `{ error: { message, type, param, code } }` (the OpenAI shape).
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly param: string | null;
  readonly details: Record<string, unknown> | undefined;

  constructor(options: {
    status: ContentfulStatusCode;
    code: string;
    message: string;
    param?: string | null;
    details?: Record<string, unknown>;
  }) {
    super(options.message);
    this.status = options.status;
    this.code = options.code;
    this.param = options.param ?? null;
    this.details = options.details;
  }

  static isInstance(value: unknown): value is HttpError {
    return value instanceof HttpError;
  }
}

export function errorBody(error: {
  status: number;
  code: string;
  message: string;
  param?: string | null;
  details?: Record<string, unknown> | undefined;
}) {
  return {
    error: {
      message: error.message,
      type: errorTypeForStatus(error.status),
      param: error.param ?? null,
      code: error.code,
      ...(error.details ?? {}),
    },
  };
}

/**
 * What a stream reports for an error met after its `200` went out: an `HttpError` as it is,
 * anything else logged (with `label`) and reported as a plain 500 that leaks nothing.
 */
export function streamedFailure(
  error: unknown,
  log: { error(object: object, message: string): void },
  label: string,
  fields: Record<string, unknown> = {},
): HttpError {
  if (HttpError.isInstance(error)) return error;
  log.error({ err: error, ...fields }, label);
  return new HttpError({ status: 500, code: 'internal_error', message: 'Internal server error' });
}

export function renderHttpError(context: Context, error: HttpError): Response {
  return context.json(errorBody(error), error.status);
}

/** Refuses an HTTP upgrade on its raw socket with the error's status and OpenAI-shaped body. */
export function refuseUpgrade(socket: Duplex, error: HttpError): void {
  const body = JSON.stringify(errorBody(error));
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The answer Node is writing on a socket, if any (`ServerResponse` keeps it there). */
interface AnswerInFlight {
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  /** The request it answers; `complete` once its whole body was read. */
  readonly req?: { readonly complete: boolean };
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * Node's own refusal of a request it cannot parse (a bad request line or header bytes, broken
 * framing, headers over its limit), in the OpenAI shape (or the body `render` makes of it: the
 * webhook listener's `{"error": …}`) instead of Node's bare status line, and the connection is
 * closed. Bytes that cannot be parsed after a valid request on a keep-alive connection do not
 * cost that request its answer: the refusal follows once the answer in flight is written (it
 * would corrupt that answer if written sooner); if that answer is cut short, the connection just
 * closes. Bytes that break the request being answered (its body's framing) are refused at once,
 * or close the connection if its answer has begun.
 */
export function refuseUnparsableRequest(
  error: Error & { code?: string },
  socket: Duplex & { _httpMessage?: AnswerInFlight | null },
  render: (refusal: HttpError) => unknown = errorBody,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const inFlight = socket._httpMessage;
  if (inFlight && !inFlight.writableFinished && inFlight.req?.complete) {
    // The bytes came after a whole request: refuse them once its answer is out.
    let settled = false;
    const after = (finished: boolean) => () => {
      if (settled) return;
      settled = true;
      if (finished && socket.writable) refuseUnparsableRequest(error, socket, render);
      else socket.destroy();
    };
    inFlight.once('finish', after(true));
    inFlight.once('close', after(false));
    return;
  }
  if (inFlight?.headersSent) {
    // The request being answered is itself broken (its body's framing) and its answer is under
    // way: a refusal now would corrupt it.
    socket.destroy();
    return;
  }
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HttpError({
          status: 431,
          code: 'request_header_fields_too_large',
          message: 'Request headers are too large',
        })
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HttpError({
            status: 408,
            code: 'request_timeout',
            message: 'The request did not arrive in time',
          })
        : new HttpError({
            status: 400,
            code: 'invalid_request',
            message: `Malformed HTTP request${error.code ? ` (${error.code})` : ''}`,
          });
  const body = JSON.stringify(render(refusal));
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/** Shorthands for the refusals every route shares. */
export const httpErrors = {
  invalidJson: (message = 'Request body must be valid JSON') =>
    new HttpError({ status: 400, code: 'invalid_json', message }),
  invalidRequest: (message: string, param: string | null = null) =>
    new HttpError({ status: 400, code: 'invalid_request', message, param }),
  sessionNotFound: (id: string) =>
    new HttpError({
      status: 404,
      code: 'session_not_found',
      message: `Session not found: ${id}`,
      param: 'session_id',
    }),
  sessionDbUnavailable: (message = 'Session database unavailable') =>
    new HttpError({ status: 503, code: 'session_db_unavailable', message }),
  draining: () =>
    new HttpError({
      status: 503,
      code: 'gateway_draining',
      message: 'The gateway is shutting down and accepts no new turns; retry after it restarts',
    }),
};

/**
 * The answer to a request `@hono/node-server` could not hand to the app — a `Host` header that
 * names no host, a backslash in the path (its `RequestError`) — or to a failure past the app's
 * own error handler: the OpenAI shape, where the adapter alone would send an empty body.
 */
export function adapterErrorResponse(
  error: unknown,
  log: { error(object: object, message: string): void },
): Response {
  const failure =
    error instanceof RequestError
      ? new HttpError({
          status: 400,
          code: 'invalid_request',
          message: `Malformed request: ${error.message}`,
        })
      : streamedFailure(error, log, 'request failed in the HTTP adapter');
  return new Response(JSON.stringify(errorBody(failure)), {
    status: failure.status,
    headers: { 'content-type': 'application/json' },
  });
}
