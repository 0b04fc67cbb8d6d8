import { APIConnectionError, APIError, APIUserAbortError } from 'openai';

/** The longest `Retry-After` the agent waits out; a longer one moves on to the fallback chain. */
export const MAX_RETRY_AFTER_MS = 60_000;
export const RETRY_BASE_DELAY_MS = 500;
export const RETRY_MAX_DELAY_MS = 20_000;

export interface FailureClass {
  /** 429, 5xx, a connection reset or a timeout: worth another attempt. */
  readonly retryable: boolean;
  /** The caller aborted. */
  readonly aborted: boolean;
  readonly status: number | undefined;
  /** From `Retry-After` (seconds or an HTTP date), when the provider sent one. */
  readonly retryAfterMs: number | undefined;
  /** The provider's own message when it sent one, else a short description. */
  readonly message: string;
}

/** Parses `Retry-After`: delta seconds, or an HTTP date relative to `now`. */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message.trim() !== '') return body.message;
  return error.message;
}

export function classifyFailure(error: unknown, signal?: AbortSignal): FailureClass {
  if (signal?.aborted || error instanceof APIUserAbortError || isAbortError(error))
    return {
      retryable: false,
      aborted: true,
      status: undefined,
      retryAfterMs: undefined,
      message: 'aborted',
    };
  if (error instanceof APIConnectionError)
    return {
      retryable: true,
      aborted: false,
      status: undefined,
      retryAfterMs: undefined,
      message: connectionDetail(error),
    };
  if (error instanceof APIError) {
    const status = error.status;
    const retryAfterMs = parseRetryAfter(error.headers?.get('retry-after'));
    const retryable =
      status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    return { retryable, aborted: false, status, retryAfterMs, message: providerMessage(error) };
  }
  // A connection lost mid-body reaches us raw from the stream (fetch's `TypeError('terminated')`):
  // worth another attempt, like a failure before the response.
  const code = connectionCode(error);
  if (code !== undefined)
    return {
      retryable: true,
      aborted: false,
      status: undefined,
      retryAfterMs: undefined,
      message: `connection failed: ${code}`,
    };
  return {
    retryable: false,
    aborted: false,
    status: undefined,
    retryAfterMs: undefined,
    message: error instanceof Error ? error.message : String(error),
  };
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

function connectionDetail(error: APIConnectionError): string {
  const code = connectionCode(error.cause);
  return code ? `connection failed: ${code}` : error.message || 'connection failed';
}

/** Socket-level failures, by the `code` Node (or undici) gives them. */
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

/**
 * The socket error's code, wherever fetch nested it: both undici and the plain-http transport
 * wrap it as the `cause` of a `TypeError('fetch failed')` or `TypeError('terminated')`. undici's
 * `UND_ERR_SOCKET` (the server closed the connection) is what Node calls `ECONNRESET`, so both
 * transports report a dropped connection alike.
 */
function connectionCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code))
      return code === 'UND_ERR_SOCKET' ? 'ECONNRESET' : code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Delay before retry `attempt` (1-based): the provider's `Retry-After` when it sent one,
 * otherwise exponential backoff with full jitter between half and the whole step.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const step = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
