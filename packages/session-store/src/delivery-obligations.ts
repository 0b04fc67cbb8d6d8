import { createHash } from 'node:crypto';
import {
  OBLIGATION_MAX_ATTEMPTS,
  OBLIGATION_RETENTION_ROWS,
  OBLIGATION_RETENTION_SECONDS,
  OBLIGATION_RETRY_BACKOFF_SECONDS,
  OBLIGATION_STALE_SECONDS,
} from './limits.js';
import {
  currentProcessIdentity,
  isProcessAlive,
  type ProcessIdentity,
} from './process-identity.js';
import type { DeliveryObligation } from './records.js';
import type { StoreContext } from './store-context.js';

export const OBLIGATION_STATE = {
  pending: 'pending',
  attempting: 'attempting',
  delivered: 'delivered',
  failed: 'failed',
  abandoned: 'abandoned',
} as const;
export type ObligationState = (typeof OBLIGATION_STATE)[keyof typeof OBLIGATION_STATE];

/** Prefixed to a redelivered reply whose first send may have reached the chat. */
export const RECOVERED_MARKER =
  '♻️ Recovered reply — the gateway restarted during delivery, so this may be a duplicate:';

export const FLOOD_CONTROL_DEFAULT_SECONDS = 60;
export const FLOOD_CONTROL_CAP_SECONDS = 15 * 60;
export const FLOOD_CONTROL_SLACK_SECONDS = 2;

export type { DeliveryObligation } from './records.js';

export interface RecordObligationInput {
  readonly sessionKey: string;
  /** Identifies the reply within the session (for example the assistant message id). */
  readonly messageRef: string;
  readonly platform: string;
  readonly chatId: string;
  readonly threadId?: string | null;
  readonly content: string;
}

/** First 24 hex characters of sha256 over the key parts, NUL-separated so parts cannot run together. */
export function obligationIdFor(
  input: Pick<RecordObligationInput, 'sessionKey' | 'messageRef' | 'content'>,
): string {
  return createHash('sha256')
    .update(`${input.sessionKey}\u0000${input.messageRef}\u0000${input.content}`)
    .digest('hex')
    .slice(0, 24);
}

const COLUMNS = `obligation_id AS obligationId, session_key AS sessionKey, platform, chat_id AS chatId,
  thread_id AS threadId, content, state, attempts, needs_marker AS needsMarker, owner_pid AS ownerPid,
  owner_started_at AS ownerStartedAt, delivery_fence AS deliveryFence, last_error AS lastError,
  not_before AS notBefore, created_at AS createdAt, updated_at AS updatedAt`;

/** Durable before visible: call (and await) this before the reply is sent. Idempotent. */
export function recordObligation(
  context: StoreContext,
  input: RecordObligationInput,
  owner: ProcessIdentity = currentProcessIdentity(),
): { obligationId: string; created: boolean } {
  const obligationId = obligationIdFor(input);
  const now = context.clock.now();
  const result = context
    .statement(
      `INSERT OR IGNORE INTO delivery_obligations (obligation_id, session_key, platform, chat_id, thread_id, content,
         state, owner_pid, owner_started_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
    )
    .run(
      obligationId,
      input.sessionKey,
      input.platform,
      input.chatId,
      input.threadId ?? null,
      input.content,
      owner.pid,
      owner.startTicks,
      now,
      now,
    );
  return { obligationId, created: result.changes === 1 };
}

export function getObligation(
  context: StoreContext,
  obligationId: string,
): DeliveryObligation | undefined {
  return context
    .statement(`SELECT ${COLUMNS} FROM delivery_obligations WHERE obligation_id = ?`)
    .get(obligationId) as DeliveryObligation | undefined;
}

const OWNED_BY_SELF = 'owner_pid = ? AND owner_started_at IS ?';

/** Marks this owner's obligation delivered; false when another process has claimed it since. */
export function markObligationDelivered(
  context: StoreContext,
  obligationId: string,
  owner: ProcessIdentity = currentProcessIdentity(),
): boolean {
  return (
    context
      .statement(
        `UPDATE delivery_obligations SET state = 'delivered', updated_at = ?, last_error = NULL
         WHERE obligation_id = ? AND state IN ('pending', 'attempting') AND ${OWNED_BY_SELF}`,
      )
      .run(context.clock.now(), obligationId, owner.pid, owner.startTicks).changes === 1
  );
}

/**
 * Puts the send on record right before it leaves: this owner's `pending` row becomes `attempting`
 * and the attempt is counted. A process that dies between the send and `completeObligation`
 * leaves the row `attempting`, so the next start's claim marks the resend
 * (`needsRecoveredMarker`) instead of sending a possible duplicate unmarked. A row already
 * `attempting` (claimed at startup, which counted its attempt) is left as it is. False when the
 * row is not this owner's to send: unknown, settled, or owned by another process. Waiting out
 * `notBefore` is the caller's part.
 */
export function markObligationAttempting(
  context: StoreContext,
  obligationId: string,
  owner: ProcessIdentity = currentProcessIdentity(),
): boolean {
  // SET expressions read the row as it was, so the attempt counts only on pending -> attempting.
  return (
    context
      .statement(
        `UPDATE delivery_obligations
           SET attempts = attempts + (state = 'pending'), state = 'attempting', updated_at = ?
         WHERE obligation_id = ? AND state IN ('pending', 'attempting') AND ${OWNED_BY_SELF}`,
      )
      .run(context.clock.now(), obligationId, owner.pid, owner.startTicks).changes === 1
  );
}

/** Counts a failed send: back off (30 s, then 120 s; flood control honoured), or give up after 3. */
export function markObligationFailed(
  context: StoreContext,
  obligationId: string,
  error: string,
  owner: ProcessIdentity = currentProcessIdentity(),
): ObligationState | null {
  const row = getObligation(context, obligationId);
  if (!row || row.ownerPid !== owner.pid || row.ownerStartedAt !== owner.startTicks) return null;
  if (row.state !== 'pending' && row.state !== 'attempting') return null;
  const attempts = row.attempts + (row.state === 'attempting' ? 0 : 1);
  const now = context.clock.now();
  const flood = /^flood_control:(\d+(?:\.\d+)?)/.exec(error);
  let state: ObligationState = attempts >= OBLIGATION_MAX_ATTEMPTS ? 'failed' : 'pending';
  let wait =
    OBLIGATION_RETRY_BACKOFF_SECONDS[
      Math.min(attempts, OBLIGATION_RETRY_BACKOFF_SECONDS.length) - 1
    ] ?? 30;
  if (flood) {
    state = 'pending'; // Rate limiting is the platform's pace, not a failed attempt.
    const seconds = Number(flood[1]) || FLOOD_CONTROL_DEFAULT_SECONDS;
    wait = Math.min(seconds, FLOOD_CONTROL_CAP_SECONDS) + FLOOD_CONTROL_SLACK_SECONDS;
  }
  context
    .statement(
      `UPDATE delivery_obligations SET state = ?, attempts = ?, last_error = ?, not_before = ?, updated_at = ?
       WHERE obligation_id = ?`,
    )
    .run(state, attempts, error, state === 'pending' ? now + wait : null, now, obligationId);
  return state;
}

/** Hands an attempting obligation back without counting an attempt (for example on shutdown). */
export function releaseObligation(
  context: StoreContext,
  obligationId: string,
  owner: ProcessIdentity = currentProcessIdentity(),
): boolean {
  return (
    context
      .statement(
        `UPDATE delivery_obligations SET state = 'pending', updated_at = ?
         WHERE obligation_id = ? AND state = 'attempting' AND ${OWNED_BY_SELF}`,
      )
      .run(context.clock.now(), obligationId, owner.pid, owner.startTicks).changes === 1
  );
}

export interface ClaimPendingOptions {
  /** Only these platforms (connected adapters); all when omitted. */
  readonly platforms?: readonly string[];
  readonly owner?: ProcessIdentity;
  /** Liveness probe for recorded owners (defaults to a signal-0 + start-time check). */
  readonly isOwnerAlive?: (owner: { pid: number; startTicks: string | null }) => boolean;
}

export interface ClaimedObligation extends DeliveryObligation {
  /** The first send may have reached the chat: prefix RECOVERED_MARKER. */
  readonly needsRecoveredMarker: boolean;
  /** Still inside a flood-control wait: send at `notBefore`, not now. */
  readonly adopted: boolean;
}

/**
 * Startup claim, inside the caller's write transaction: every unfinished obligation whose owner
 * is dead is claimed (compare-and-swap on the fence, so two starting processes cannot both take
 * one), and `resume_pending` is cleared for the claimed sessions before anything is sent — the
 * resume scheduler must not re-run a turn whose reply is about to be redelivered.
 */
export function claimPendingObligations(
  context: StoreContext,
  options: ClaimPendingOptions = {},
): ClaimedObligation[] {
  const owner = options.owner ?? currentProcessIdentity();
  const alive = options.isOwnerAlive ?? isProcessAlive;
  const now = context.clock.now();
  context
    .statement(
      `UPDATE delivery_obligations SET state = 'abandoned', updated_at = ?
       WHERE state IN ('pending', 'attempting') AND created_at < ?`,
    )
    .run(now, now - OBLIGATION_STALE_SECONDS);
  const candidates = context
    .statement(
      `SELECT ${COLUMNS} FROM delivery_obligations WHERE state IN ('pending', 'attempting') ORDER BY created_at, rowid`,
    )
    .all() as DeliveryObligation[];
  const claimed: ClaimedObligation[] = [];
  for (const row of candidates) {
    if (options.platforms && !options.platforms.includes(row.platform)) continue;
    const mine = row.ownerPid === owner.pid && row.ownerStartedAt === owner.startTicks;
    if (
      mine ||
      (row.ownerPid !== null && alive({ pid: row.ownerPid, startTicks: row.ownerStartedAt }))
    )
      continue;
    const needsMarker = row.state === 'attempting' || row.attempts > 0 || row.needsMarker === 1;
    const changed = context
      .statement(
        `UPDATE delivery_obligations SET state = 'attempting', attempts = attempts + 1, needs_marker = ?,
           owner_pid = ?, owner_started_at = ?, delivery_fence = delivery_fence + 1, updated_at = ?
         WHERE obligation_id = ? AND delivery_fence = ?`,
      )
      .run(
        needsMarker ? 1 : 0,
        owner.pid,
        owner.startTicks,
        now,
        row.obligationId,
        row.deliveryFence,
      ).changes;
    if (changed !== 1) continue;
    const adopted = row.notBefore !== null && row.notBefore > now;
    claimed.push({
      ...row,
      state: 'attempting',
      attempts: row.attempts + 1,
      needsMarker: needsMarker ? 1 : 0,
      ownerPid: owner.pid,
      ownerStartedAt: owner.startTicks,
      deliveryFence: row.deliveryFence + 1,
      needsRecoveredMarker: needsMarker,
      adopted,
    });
  }
  const clearResume = context.statement(
    'UPDATE sessions SET resume_pending = 0, resume_reason = NULL WHERE session_key = ? AND resume_pending = 1',
  );
  for (const sessionKey of new Set(claimed.map((row) => row.sessionKey)))
    clearResume.run(sessionKey);
  return claimed;
}

/** Retention: settled rows older than 7 days go, and at most 500 settled rows are kept. */
export function pruneObligations(context: StoreContext): number {
  const now = context.clock.now();
  const byAge = context
    .statement(
      `DELETE FROM delivery_obligations WHERE state IN ('delivered', 'failed', 'abandoned') AND updated_at < ?`,
    )
    .run(now - OBLIGATION_RETENTION_SECONDS).changes;
  const byCount = context
    .statement(
      `DELETE FROM delivery_obligations WHERE obligation_id IN (
         SELECT obligation_id FROM delivery_obligations WHERE state IN ('delivered', 'failed', 'abandoned')
         ORDER BY updated_at DESC LIMIT -1 OFFSET ?)`,
    )
    .run(OBLIGATION_RETENTION_ROWS).changes;
  return byAge + byCount;
}
