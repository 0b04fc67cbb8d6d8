import { type SessionStore, SessionStoreError } from '@hermes/session-store';
import type { ActiveTurns } from './active-turns.js';

/** Where a conversation's running turn is: nowhere, in this gateway, or in another process. */
export type TurnPlace = 'idle' | 'here' | 'elsewhere';

/**
 * Whether a session's conversation (its whole compression lineage) is running a turn, here or in
 * any process sharing the profile's `state.db` (the CLI, the TUI bridge, another gateway). A turn
 * holds the store's turn lease — the same lease the agent's admission takes, so whatever chat
 * refuses with `session_busy` is busy here too; a lease that expired or whose `pid=` holder died
 * does not count (the next turn takes it over). This process's own turns are also checked: one
 * is registered a moment before its lease is taken.
 */
export function turnPlace(input: {
  readonly turns: ActiveTurns;
  readonly profile: string;
  readonly store: SessionStore;
  readonly sessionId: string;
}): TurnPlace {
  const session = input.store.getSession(input.sessionId);
  if (!session) return 'idle';
  if (input.turns.isRunning(input.profile, session.lineageRootId)) return 'here';
  try {
    const lease = input.store.getTurnLease(session.id);
    if (!lease?.active) return 'idle';
    // This process's own lease without a registered turn (a completion being delivered).
    return /(?:^|\s)pid=(\d+)(?:\s|$)/.exec(lease.holder)?.[1] === String(process.pid)
      ? 'here'
      : 'elsewhere';
  } catch (error) {
    // Deleted between the two reads: nothing runs on a session that is gone.
    if (SessionStoreError.isInstance(error) && error.code === 'session_not_found') return 'idle';
    throw error;
  }
}
