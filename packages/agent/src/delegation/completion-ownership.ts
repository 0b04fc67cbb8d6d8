import type { SessionStore } from '@hermes/session-store';
import type { AsyncDelegationEvent } from './completion-event.js';

/** A conversation a surface holds open. */
export interface CompletionTarget {
  /** Its session (any id of its compression lineage). */
  readonly sessionId?: string | undefined;
  /** The surface's route to it (gateway chat key, or the session id for the CLI). */
  readonly sessionKey?: string | undefined;
  /** The front-end session (TUI / desktop `sid`). */
  readonly uiSessionId?: string | undefined;
}

/**
 * Whether a completion belongs to a conversation (positive ownership, §6.10): its
 * `origin_ui_session_id` is the target's UI session, or its session key is the target's key, or
 * its session key / origin / parent session is in the target session's compression lineage (a
 * conversation that was compressed after it delegated still owns the result).
 */
export function ownsCompletion(
  event: AsyncDelegationEvent,
  target: CompletionTarget,
  store?: SessionStore,
): boolean {
  if (target.uiSessionId && event.origin_ui_session_id === target.uiSessionId) return true;
  const keys = [event.session_key, event.origin_session_id, event.parent_session_id].filter(
    (key): key is string => typeof key === 'string' && key !== '',
  );
  if (keys.length === 0) return false;
  if (target.sessionKey && event.session_key === target.sessionKey) return true;
  if (!target.sessionId) return false;
  if (keys.includes(target.sessionId)) return true;
  if (!store) return false;
  const session = store.getSession(target.sessionId);
  if (!session) return false;
  if (session.sessionKey && event.session_key === session.sessionKey) return true;
  for (const key of keys) {
    const other = store.getSession(key);
    if (other && other.lineageRootId === session.lineageRootId) return true;
  }
  return false;
}
