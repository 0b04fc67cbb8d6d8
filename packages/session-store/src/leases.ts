import { randomUUID } from 'node:crypto';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { isProcessAlive } from './process-identity.js';
import type { StoreContext } from './store-context.js';

/** A lease table: one row per key with `holder`, `acquired_at` and `expires_at` (epoch seconds). */
export interface LeaseTable {
  readonly table: 'compression_locks' | 'session_turn_leases';
  readonly keyColumn: 'session_id' | 'conversation_id';
}

export interface LeaseRecord {
  readonly key: string;
  readonly holder: string;
  readonly acquiredAt: number;
  readonly expiresAt: number;
  /** Unexpired and not held by a provably dead process: nobody else can take it. */
  readonly active: boolean;
}

/** A holder string names its process (`pid=<n>`) so a dead holder can be recognised. */
export function newLeaseHolder(): string {
  // 48 random bits; randomUUID draws from a pooled buffer (a getrandom call per lease is not free).
  return `pid=${process.pid} token=${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

function holderPid(holder: string): number | null {
  const match = /pid=(\d+)/.exec(holder);
  return match ? Number(match[1]) : null;
}

/** Leases are shared between processes, so their times are wall-clock epoch seconds. */
export function validateLeaseOptions(options: { holder?: unknown; ttlSeconds?: unknown }): void {
  if (
    options.ttlSeconds !== undefined &&
    (typeof options.ttlSeconds !== 'number' ||
      !Number.isFinite(options.ttlSeconds) ||
      options.ttlSeconds <= 0)
  ) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('ttlSeconds', 'a finite number of seconds above 0'),
    });
  }
  if (
    options.holder !== undefined &&
    (typeof options.holder !== 'string' || options.holder.length === 0)
  ) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('holder', 'a non-empty string'),
    });
  }
}

function readRow(
  context: StoreContext,
  lease: LeaseTable,
  key: string,
): { holder: string; acquiredAt: number; expiresAt: number } | undefined {
  return context
    .statement(
      `SELECT holder, acquired_at AS acquiredAt, expires_at AS expiresAt FROM ${lease.table} WHERE ${lease.keyColumn} = ?`,
    )
    .get(key) as { holder: string; acquiredAt: number; expiresAt: number } | undefined;
}

function isActive(row: { holder: string; expiresAt: number }, now: number): boolean {
  if (row.expiresAt <= now) return false;
  const pid = holderPid(row.holder);
  return pid === null || isProcessAlive({ pid });
}

export function readLease(
  context: StoreContext,
  lease: LeaseTable,
  key: string,
): LeaseRecord | null {
  const row = readRow(context, lease, key);
  return row ? { key, ...row, active: isActive(row, context.clock.now()) } : null;
}

/**
 * Takes the lease when it is free, expired, or held by a provably dead process (re-taking one's
 * own lease extends it). Returns the holder, or null while someone else holds it. Call inside a
 * write transaction: the read and the upsert must be one atomic step across processes.
 */
export function acquireLease(
  context: StoreContext,
  lease: LeaseTable,
  options: { key: string; holder?: string; ttlSeconds: number },
): string | null {
  const now = context.clock.now();
  const holder = options.holder ?? newLeaseHolder();
  const current = readRow(context, lease, options.key);
  if (current && current.holder !== holder && isActive(current, now)) return null;
  context
    .statement(
      `INSERT INTO ${lease.table} (${lease.keyColumn}, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(${lease.keyColumn}) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at,
         expires_at = excluded.expires_at`,
    )
    .run(options.key, holder, now, now + options.ttlSeconds);
  return holder;
}

/** Extends a lease that `holder` still holds unexpired; false once it was lost or released. */
export function renewLease(
  context: StoreContext,
  lease: LeaseTable,
  options: { key: string; holder: string; ttlSeconds: number },
): boolean {
  const now = context.clock.now();
  return (
    context
      .statement(
        `UPDATE ${lease.table} SET expires_at = ? WHERE ${lease.keyColumn} = ? AND holder = ? AND expires_at > ?`,
      )
      .run(now + options.ttlSeconds, options.key, options.holder, now).changes === 1
  );
}

/** True while `holder` still holds an unexpired lease. */
export function holdsLease(
  context: StoreContext,
  lease: LeaseTable,
  key: string,
  holder: string,
): boolean {
  return (
    context
      .statement(
        `SELECT 1 FROM ${lease.table} WHERE ${lease.keyColumn} = ? AND holder = ? AND expires_at > ?`,
      )
      .get(key, holder, context.clock.now()) !== undefined
  );
}

export function releaseLease(
  context: StoreContext,
  lease: LeaseTable,
  key: string,
  holder: string,
): boolean {
  return (
    context
      .statement(`DELETE FROM ${lease.table} WHERE ${lease.keyColumn} = ? AND holder = ?`)
      .run(key, holder).changes === 1
  );
}
