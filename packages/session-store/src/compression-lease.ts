import {
  acquireLease,
  holdsLease,
  type LeaseTable,
  releaseLease,
  validateLeaseOptions,
} from './leases.js';
import { requireSession } from './sessions.js';
import type { StoreContext } from './store-context.js';

export { newLeaseHolder } from './leases.js';

export const COMPRESSION_LEASE_TTL_SECONDS = 300;

const COMPRESSION_LEASE: LeaseTable = { table: 'compression_locks', keyColumn: 'session_id' };

/**
 * Takes the compression lease of a session when it is free, expired, or held by a provably dead
 * process. Returns the holder string, or null while someone else holds it. Call inside a write
 * transaction.
 */
export function acquireCompressionLease(
  context: StoreContext,
  options: { sessionId: string; holder?: string; ttlSeconds?: number },
): string | null {
  validateLeaseOptions(options);
  // A lease on nothing would only wait for a session created later with that id.
  requireSession(context, options.sessionId);
  return acquireLease(context, COMPRESSION_LEASE, {
    key: options.sessionId,
    ...(options.holder === undefined ? {} : { holder: options.holder }),
    ttlSeconds: options.ttlSeconds ?? COMPRESSION_LEASE_TTL_SECONDS,
  });
}

/** True while `holder` still holds a live (unexpired) lease on the session. */
export function holdsCompressionLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
): boolean {
  return holdsLease(context, COMPRESSION_LEASE, sessionId, holder);
}

export function releaseCompressionLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
): boolean {
  return releaseLease(context, COMPRESSION_LEASE, sessionId, holder);
}
