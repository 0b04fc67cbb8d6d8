import { RECOVERABLE_END_REASONS_SQL, RESET_END_REASONS_SQL } from './end-reasons.js';
import type { SessionRecord } from './records.js';
import { readSession, SESSION_VALUES } from './row-readers.js';
import type { StoreContext } from './store-context.js';

export interface GatewayPeer {
  readonly sessionKey: string;
  readonly source: string;
  /** The full peer tuple, used as a fallback when no row carries the session key. */
  readonly chatId?: string | null;
  readonly chatType?: string | null;
  readonly threadId?: string | null;
  readonly userId?: string | null;
}

/**
 * The session a messaging peer should continue: live (or recoverably ended) rows of that peer,
 * fenced by any later reset boundary so a stale row is never resumed after the user started
 * afresh; rows with messages first, then the most recent activity. Without a keyed row, the full
 * peer tuple is matched (rows with messages only), behind the same fence.
 */
export function findLatestGatewaySessionForPeer(
  context: StoreContext,
  peer: GatewayPeer,
): SessionRecord | undefined {
  const byKey = readSession(
    context,
    `SELECT ${SESSION_VALUES} FROM sessions s
       WHERE s.session_key = @sessionKey AND s.source = @source
         AND (s.ended_at IS NULL OR s.end_reason IN (${RECOVERABLE_END_REASONS_SQL}))
         AND NOT EXISTS (
           SELECT 1 FROM sessions later
           WHERE later.session_key = s.session_key AND later.source = s.source
             AND later.started_at > s.started_at AND later.end_reason IN (${RESET_END_REASONS_SQL}))
       ORDER BY (s.message_count > 0) DESC, coalesce(s.last_activity_at, s.started_at) DESC LIMIT 1`,
    { sessionKey: peer.sessionKey, source: peer.source },
  );
  if (byKey || peer.chatId === undefined) return byKey;
  // The tuple fallback is fenced too: a later reset of this peer (by its key or by its tuple)
  // means the user moved past every earlier row, whichever way that row was found.
  return readSession(
    context,
    `SELECT ${SESSION_VALUES} FROM sessions s
       WHERE s.source = @source AND s.chat_id IS @chatId AND s.chat_type IS @chatType AND s.thread_id IS @threadId
         AND s.user_id IS @userId AND s.message_count > 0
         AND (s.ended_at IS NULL OR s.end_reason IN (${RECOVERABLE_END_REASONS_SQL}))
         AND NOT EXISTS (
           SELECT 1 FROM sessions later
           WHERE later.source = s.source AND later.started_at > s.started_at
             AND later.end_reason IN (${RESET_END_REASONS_SQL})
             AND (later.session_key = @sessionKey
               OR (later.chat_id IS s.chat_id AND later.chat_type IS s.chat_type
                 AND later.thread_id IS s.thread_id AND later.user_id IS s.user_id)))
       ORDER BY coalesce(s.last_activity_at, s.started_at) DESC LIMIT 1`,
    {
      sessionKey: peer.sessionKey,
      source: peer.source,
      chatId: peer.chatId ?? null,
      chatType: peer.chatType ?? null,
      threadId: peer.threadId ?? null,
      userId: peer.userId ?? null,
    },
  );
}
