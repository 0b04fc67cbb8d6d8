import { randomBytes } from 'node:crypto';
import { isProcessAlive } from './process-identity.js';
import type { StoreContext } from './store-context.js';

export const COMPRESSION_LEASE_TTL_SECONDS = 300;

interface LeaseRow {
  holder: string;
  expiresAt: number;
}

/** A holder string names its process (`pid=<n>`) so a dead holder can be recognised. */
export function newLeaseHolder(): string {
  return `pid=${process.pid} token=${randomBytes(6).toString('hex')}`;
}

function holderPid(holder: string): number | null {
  const match = /pid=(\d+)/.exec(holder);
  return match ? Number(match[1]) : null;
}

/**
 * Takes the compression lease of a session when it is free, expired, or held by a provably dead
 * process. Returns the holder string, or null while someone else holds it. Call inside a write
 * transaction.
 */
export function acquireCompressionLease(
  context: StoreContext,
  options: { sessionId: string; holder?: string; ttlSeconds?: number },
): string | null {
  const now = context.clock.now();
  const holder = options.holder ?? newLeaseHolder();
  const current = context
    .statement('SELECT holder, expires_at AS expiresAt FROM compression_locks WHERE session_id = ?')
    .get(options.sessionId) as LeaseRow | undefined;
  if (current && current.holder !== holder && current.expiresAt > now) {
    const pid = holderPid(current.holder);
    if (pid === null || isProcessAlive({ pid })) return null;
  }
  context
    .statement(
      `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at,
         expires_at = excluded.expires_at`,
    )
    .run(
      options.sessionId,
      holder,
      now,
      now + (options.ttlSeconds ?? COMPRESSION_LEASE_TTL_SECONDS),
    );
  return holder;
}

/** True while `holder` still holds a live (unexpired) lease on the session. */
export function holdsCompressionLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
): boolean {
  return (
    context
      .statement(
        'SELECT 1 FROM compression_locks WHERE session_id = ? AND holder = ? AND expires_at > ?',
      )
      .get(sessionId, holder, context.clock.now()) !== undefined
  );
}

export function releaseCompressionLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
): boolean {
  return (
    context
      .statement('DELETE FROM compression_locks WHERE session_id = ? AND holder = ?')
      .run(sessionId, holder).changes === 1
  );
}
