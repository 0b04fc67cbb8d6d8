import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { readLease } from './leases.js';
import type { StoreContext } from './store-context.js';
import { TURN_LEASE } from './turn-lease.js';

/** What `deleteSession` / `deleteLineage` do when a turn runs in the conversation. */
export interface DeleteSessionOptions {
  /**
   * `'refuse'` (default): a live turn lease on the conversation (unexpired, its `pid=` holder
   * alive) refuses the delete with `session_busy` and nothing is deleted — checked inside the
   * delete's own write transaction, so a turn another process starts a moment before cannot
   * have its conversation deleted under it. `'delete'`: delete anyway (the lease goes with it).
   */
  readonly whileTurnRuns?: 'refuse' | 'delete';
  /** The caller's own turn lease holder: a turn's holder may delete its own conversation. */
  readonly turnLeaseHolder?: string;
}

/**
 * Call inside the delete's write transaction, before anything is deleted: throws `session_busy`
 * when a live turn lease (not the caller's) covers the conversation of `sessionId`. An unknown
 * session passes (the delete answers that it deleted nothing).
 */
export function refuseDeleteWhileTurnRuns(
  context: StoreContext,
  sessionId: string,
  options: DeleteSessionOptions = {},
): void {
  if (options.whileTurnRuns === 'delete') return;
  const conversationId = context
    .statement('SELECT lineage_root_id FROM sessions WHERE id = ?')
    .pluck()
    .get(sessionId) as string | undefined;
  if (conversationId === undefined) return;
  const lease = readLease(context, TURN_LEASE, conversationId);
  if (!lease?.active || lease.holder === options.turnLeaseHolder) return;
  throw new SessionStoreError({
    code: 'session_busy',
    // The pid only: the holder's token is what releases the lease, so it stays private.
    message: ERROR_MESSAGES.sessionBusy(sessionId, /pid=(\d+)/.exec(lease.holder)?.[1] ?? null),
  });
}

export function validateDeleteOptions(options: DeleteSessionOptions): void {
  if (
    options.whileTurnRuns !== undefined &&
    options.whileTurnRuns !== 'refuse' &&
    options.whileTurnRuns !== 'delete'
  ) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('whileTurnRuns', "'refuse' or 'delete'"),
    });
  }
}
