/** Error codes of a peer or network hiccup that must never take the gateway down. */
export const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // A name that does not resolve: what a laptop offline gets for every host (the reference
  // counts its HTTP clients' connect errors, DNS failures included, as transient).
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** How deep the `cause` chain is searched (the reference's 12 levels). */
const MAX_CAUSE_DEPTH = 12;

/**
 * True for errors of the network kind anywhere in the cause chain: `ECONNRESET`, `EPIPE`, …,
 * undici's `UND_ERR_*`, or an error whose class name says it timed out or lost its connection.
 */
export function isTransientNetworkError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current; depth += 1) {
    if (typeof current !== 'object') return false;
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (
      typeof code === 'string' &&
      (TRANSIENT_NETWORK_CODES.has(code) || code.startsWith('UND_ERR_'))
    )
      return true;
    if (
      typeof name === 'string' &&
      /^(ConnectTimeoutError|SocketError|HeadersTimeoutError|BodyTimeoutError)$/.test(name)
    )
      return true;
    current = cause;
  }
  return false;
}
