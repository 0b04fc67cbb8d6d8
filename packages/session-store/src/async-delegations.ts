import { toSqlList } from './end-reasons.js';
import { ERROR_MESSAGES } from './errors.js';
import {
  DELEGATION_CLAIM_LEASE_SECONDS,
  DELEGATION_MAX_DELIVERY_ATTEMPTS,
  DELEGATION_RESTORE_MAX_AGE_SECONDS,
  DELEGATION_RETENTION_ROWS,
  DELEGATION_RETENTION_SECONDS,
} from './limits.js';
import {
  currentProcessIdentity,
  isProcessAlive,
  type ProcessIdentity,
} from './process-identity.js';
import type { AsyncDelegationRecord } from './records.js';
import type { StoreContext } from './store-context.js';
import { optionalNumber } from './validation.js';

/** Live states; anything else is terminal (`completed`, `failed`, `interrupted`, `stalled`, `unknown`, …). */
export const LIVE_DELEGATION_STATES = ['running', 'stalling', 'finalizing'] as const;
export const DELEGATION_UNKNOWN_STATE = 'unknown';

export const DELEGATION_DELIVERY_STATE = {
  pending: 'pending',
  claimed: 'claimed',
  delivered: 'delivered',
  dropped: 'dropped',
  pendingRecovery: 'pending_recovery',
} as const;

export const DELEGATION_OWNER_EXITED_MESSAGE = ERROR_MESSAGES.delegationOwnerExited;

export type { AsyncDelegationRecord } from './records.js';

const LIVE_SQL = toSqlList(LIVE_DELEGATION_STATES);
/**
 * The compare-and-swap every owner-changing write uses: the row is still live and still has the
 * owner the caller read (parameters: delegation id, owner pid, owner start ticks).
 */
const LIVE_ROW_OF_OWNER = `delegation_id = ? AND state IN (${LIVE_SQL}) AND owner_pid = ? AND owner_started_at IS ?`;
const COLUMNS = `delegation_id AS delegationId, session_key AS sessionKey, origin_ui_session_id AS originUiSessionId,
  parent_session_id AS parentSessionId, state, delivery_state AS deliveryState, owner_pid AS ownerPid,
  owner_started_at AS ownerStartedAt, task_json AS taskJson, result_json AS resultJson, error,
  dispatched_at AS dispatchedAt, completed_at AS completedAt, delivery_attempts AS deliveryAttempts,
  claim_expires_at AS claimExpiresAt, not_before AS notBefore, settled_at AS settledAt`;

export interface RecordDelegationStartInput {
  readonly delegationId: string;
  readonly sessionKey?: string | null;
  readonly originUiSessionId?: string | null;
  readonly parentSessionId?: string | null;
  /** Goal(s), context, toolsets … — whatever the runner needs to render the completion. */
  readonly task: unknown;
  readonly owner?: ProcessIdentity;
}

/** Durable before visible: the `running` row exists before the child starts. */
export function recordDelegationStart(
  context: StoreContext,
  input: RecordDelegationStartInput,
): void {
  const owner = input.owner ?? currentProcessIdentity();
  context
    .statement(
      `INSERT INTO async_delegations (delegation_id, session_key, origin_ui_session_id, parent_session_id, state,
         delivery_state, owner_pid, owner_started_at, task_json, dispatched_at)
       VALUES (?, ?, ?, ?, 'running', 'pending', ?, ?, ?, ?)`,
    )
    .run(
      input.delegationId,
      input.sessionKey ?? null,
      input.originUiSessionId ?? null,
      input.parentSessionId ?? null,
      owner.pid,
      owner.startTicks,
      JSON.stringify(input.task ?? null),
      context.clock.now(),
    );
}

export function getDelegation(
  context: StoreContext,
  delegationId: string,
): AsyncDelegationRecord | undefined {
  return context
    .statement(`SELECT ${COLUMNS} FROM async_delegations WHERE delegation_id = ?`)
    .get(delegationId) as AsyncDelegationRecord | undefined;
}

export interface RecordDelegationTerminalInput {
  readonly delegationId: string;
  readonly status: string;
  readonly result?: unknown;
  readonly error?: string | null;
  readonly owner?: ProcessIdentity;
}

/**
 * Persists the terminal result by compare-and-swap on the owner: a process that lost ownership
 * (or a late runner after recovery stamped `unknown`) cannot overwrite the recorded outcome.
 */
export function recordDelegationTerminal(
  context: StoreContext,
  input: RecordDelegationTerminalInput,
): boolean {
  const owner = input.owner ?? currentProcessIdentity();
  return (
    context
      .statement(
        `UPDATE async_delegations SET state = ?, result_json = ?, error = ?, completed_at = ?, delivery_state = 'pending'
         WHERE ${LIVE_ROW_OF_OWNER}`,
      )
      .run(
        input.status,
        JSON.stringify(input.result ?? null),
        input.error ?? null,
        context.clock.now(),
        input.delegationId,
        owner.pid,
        owner.startTicks,
      ).changes === 1
  );
}

/** The owner a row is handed to when its process lets go of it on purpose (no live process). */
export const RELEASED_DELEGATION_OWNER: ProcessIdentity = Object.freeze({
  pid: 0,
  startTicks: null,
});

export interface TransferDelegationOwnerInput {
  readonly delegationId: string;
  /** The owner the caller read: the row changes hands only while it still has this owner. */
  readonly from: ProcessIdentity;
  /** The new owner (default this process; `RELEASED_DELEGATION_OWNER` lets go of the row). */
  readonly to?: ProcessIdentity;
  /** A replacement task record (for example with a resume count); absent: unchanged. */
  readonly task?: unknown;
}

/**
 * Hands a live row to another owner by compare-and-swap on the current one: of several processes
 * taking over the same dead owner's row, exactly one succeeds. The row goes back to `running`.
 */
export function transferDelegationOwner(
  context: StoreContext,
  input: TransferDelegationOwnerInput,
): boolean {
  const to = input.to ?? currentProcessIdentity();
  return (
    context
      .statement(
        `UPDATE async_delegations SET owner_pid = ?, owner_started_at = ?, state = 'running',
           task_json = COALESCE(?, task_json)
         WHERE ${LIVE_ROW_OF_OWNER}`,
      )
      .run(
        to.pid,
        to.startTicks,
        input.task === undefined ? null : JSON.stringify(input.task),
        input.delegationId,
        input.from.pid,
        input.from.startTicks,
      ).changes === 1
  );
}

/** Rows still running (live states), oldest first. */
export function listLiveDelegations(context: StoreContext): AsyncDelegationRecord[] {
  return context
    .statement(
      `SELECT ${COLUMNS} FROM async_delegations WHERE state IN (${LIVE_SQL}) ORDER BY dispatched_at`,
    )
    .all() as AsyncDelegationRecord[];
}

/** Live-state transitions by the owner (running → stalling → finalizing). */
export function updateDelegationLiveState(
  context: StoreContext,
  delegationId: string,
  state: (typeof LIVE_DELEGATION_STATES)[number],
): boolean {
  return (
    context
      .statement(
        `UPDATE async_delegations SET state = ? WHERE delegation_id = ? AND state IN (${LIVE_SQL})`,
      )
      .run(state, delegationId).changes === 1
  );
}

export interface DelegationClaim {
  readonly delegation: AsyncDelegationRecord;
  readonly leaseExpiresAt: number;
}

/**
 * Claims a finished delegation's completion for delivery (a 300 s lease). An expired lease may be
 * re-claimed; after 8 attempts the row moves to `pending_recovery` instead of looping forever.
 * Without an id, the oldest deliverable completion is claimed.
 */
export function claimCompletionDelivery(
  context: StoreContext,
  delegationId?: string,
): DelegationClaim | null {
  const now = context.clock.now();
  const deliverable = `state NOT IN (${LIVE_SQL})
    AND (delivery_state = 'pending' OR (delivery_state = 'claimed' AND claim_expires_at <= @now))
    AND (not_before IS NULL OR not_before <= @now)`;
  for (;;) {
    const row = (
      delegationId === undefined
        ? context
            .statement(
              `SELECT ${COLUMNS} FROM async_delegations WHERE ${deliverable} ORDER BY completed_at LIMIT 1`,
            )
            .get({ now })
        : context
            .statement(
              `SELECT ${COLUMNS} FROM async_delegations WHERE delegation_id = @id AND ${deliverable}`,
            )
            .get({ now, id: delegationId })
    ) as AsyncDelegationRecord | undefined;
    if (!row) return null;
    if (row.deliveryAttempts >= DELEGATION_MAX_DELIVERY_ATTEMPTS) {
      context
        .statement(
          `UPDATE async_delegations SET delivery_state = 'pending_recovery', claim_expires_at = NULL WHERE delegation_id = ?`,
        )
        .run(row.delegationId);
      if (delegationId !== undefined) return null;
      continue;
    }
    const leaseExpiresAt = now + DELEGATION_CLAIM_LEASE_SECONDS;
    context
      .statement(
        `UPDATE async_delegations SET delivery_state = 'claimed', claim_expires_at = ?, delivery_attempts = delivery_attempts + 1
         WHERE delegation_id = ?`,
      )
      .run(leaseExpiresAt, row.delegationId);
    return {
      delegation: {
        ...row,
        deliveryState: 'claimed',
        claimExpiresAt: leaseExpiresAt,
        deliveryAttempts: row.deliveryAttempts + 1,
      },
      leaseExpiresAt,
    };
  }
}

function settle(
  context: StoreContext,
  delegationId: string,
  state: 'delivered' | 'dropped',
): boolean {
  return (
    context
      .statement(
        `UPDATE async_delegations SET delivery_state = ?, settled_at = ?, claim_expires_at = NULL
         WHERE delegation_id = ? AND delivery_state IN ('pending', 'claimed', 'pending_recovery')`,
      )
      .run(state, context.clock.now(), delegationId).changes === 1
  );
}

export function completeDelegationDelivery(context: StoreContext, delegationId: string): boolean {
  return settle(context, delegationId, 'delivered');
}

export function dropDelegationDelivery(context: StoreContext, delegationId: string): boolean {
  return settle(context, delegationId, 'dropped');
}

/** Gives the claim back at once (the attempt still counts). */
export function releaseDelegationDelivery(context: StoreContext, delegationId: string): boolean {
  return (
    context
      .statement(
        `UPDATE async_delegations SET delivery_state = 'pending', claim_expires_at = NULL
         WHERE delegation_id = ? AND delivery_state = 'claimed'`,
      )
      .run(delegationId).changes === 1
  );
}

/** Gives the claim back with a not-before time (for example while the session is mid-turn). */
export function deferDelegationDelivery(
  context: StoreContext,
  delegationId: string,
  delaySeconds: number,
): boolean {
  return (
    context
      .statement(
        `UPDATE async_delegations SET delivery_state = 'pending', claim_expires_at = NULL, not_before = ?
         WHERE delegation_id = ? AND delivery_state = 'claimed'`,
      )
      .run(
        context.clock.now() + (optionalNumber('delaySeconds', delaySeconds, { min: 0 }) ?? 0),
        delegationId,
      ).changes === 1
  );
}

export interface DelegationRecovery {
  /** `running` rows whose owner died, now stamped `unknown`. */
  readonly orphaned: string[];
  /** Completions still owed, to be re-enqueued with `restored: true`. */
  readonly restored: (AsyncDelegationRecord & { restored: true })[];
  /** Completions older than 48 h, dropped instead of restored. */
  readonly dropped: string[];
}

/** Startup recovery, inside the caller's write transaction. */
export function recoverDelegations(
  context: StoreContext,
  options: { isOwnerAlive?: (owner: { pid: number; startTicks: string | null }) => boolean } = {},
): DelegationRecovery {
  const alive = options.isOwnerAlive ?? isProcessAlive;
  const now = context.clock.now();
  const live = context
    .statement(`SELECT ${COLUMNS} FROM async_delegations WHERE state IN (${LIVE_SQL})`)
    .all() as AsyncDelegationRecord[];
  const orphaned: string[] = [];
  for (const row of live) {
    if (alive({ pid: row.ownerPid, startTicks: row.ownerStartedAt })) continue;
    const changed = context
      .statement(
        `UPDATE async_delegations SET state = '${DELEGATION_UNKNOWN_STATE}', error = ?, result_json = ?, completed_at = ?,
           delivery_state = 'pending'
         WHERE ${LIVE_ROW_OF_OWNER}`,
      )
      .run(
        DELEGATION_OWNER_EXITED_MESSAGE,
        JSON.stringify({
          status: DELEGATION_UNKNOWN_STATE,
          error: DELEGATION_OWNER_EXITED_MESSAGE,
        }),
        now,
        row.delegationId,
        row.ownerPid,
        row.ownerStartedAt,
      ).changes;
    if (changed === 1) orphaned.push(row.delegationId);
  }
  const owed = context
    .statement(
      `SELECT ${COLUMNS} FROM async_delegations WHERE state NOT IN (${LIVE_SQL})
       AND (delivery_state = 'pending' OR (delivery_state = 'claimed' AND claim_expires_at <= ?)) ORDER BY completed_at`,
    )
    .all(now) as AsyncDelegationRecord[];
  const restored: (AsyncDelegationRecord & { restored: true })[] = [];
  const dropped: string[] = [];
  for (const row of owed) {
    if ((row.completedAt ?? row.dispatchedAt) < now - DELEGATION_RESTORE_MAX_AGE_SECONDS) {
      if (dropDelegationDelivery(context, row.delegationId)) dropped.push(row.delegationId);
    } else {
      restored.push({ ...row, restored: true });
    }
  }
  return { orphaned, restored, dropped };
}

/** Retention: settled rows older than 7 days go, and at most 50 settled rows are kept. */
export function pruneDelegations(context: StoreContext): number {
  const now = context.clock.now();
  const byAge = context
    .statement(`DELETE FROM async_delegations WHERE settled_at IS NOT NULL AND settled_at < ?`)
    .run(now - DELEGATION_RETENTION_SECONDS).changes;
  const byCount = context
    .statement(
      `DELETE FROM async_delegations WHERE delegation_id IN (
         SELECT delegation_id FROM async_delegations WHERE settled_at IS NOT NULL
         ORDER BY settled_at DESC LIMIT -1 OFFSET ?)`,
    )
    .run(DELEGATION_RETENTION_ROWS).changes;
  return byAge + byCount;
}
