import { isRecoverableEndReason, RECOVERABLE_END_REASONS_SQL } from './end-reasons.js';
import { BOT_CHAT_TITLE } from './limits.js';
import { getCompressionTip, setLineageArchived } from './lineage.js';
import { latestPreview } from './preview.js';
import { getSession } from './sessions.js';
import type { StoreContext } from './store-context.js';
import { getSessionByTitle } from './titles.js';

/**
 * Brings back an archived chat that machinery ended by accident. Recoverability is judged at the
 * compression tip (a compressed lineage's root always ends with `compression`). The tip's end
 * stamp is cleared by compare-and-swap on the observed state, so a concurrent boundary (for
 * example `session_reset`) that lands first wins and the chat stays archived. Deliberate archives
 * (no end reason, or a boundary reason) are left untouched. Call inside a write transaction.
 */
export function unarchiveRecoverableSession(context: StoreContext, id: string): boolean {
  const row = getSession(context, id);
  if (row?.archived !== 1) return false;
  const tip = getSession(context, getCompressionTip(context, id));
  if (!tip || !isRecoverableEndReason(tip.endReason)) return false;
  const cleared = context
    .statement(
      `UPDATE sessions SET ended_at = NULL, end_reason = NULL
       WHERE id = ? AND end_reason = ? AND ended_at IS ? AND end_reason IN (${RECOVERABLE_END_REASONS_SQL})`,
    )
    .run(tip.id, tip.endReason, tip.endedAt).changes;
  if (cleared !== 1) return false;
  setLineageArchived(context, id, false);
  return true;
}

export interface CanonicalSessionSummary {
  readonly id: string;
  /** The compression tip: the session a resume continues. */
  readonly resolvedId: string;
  readonly rootTitle: string | null;
  readonly title: string | null;
  readonly preview: string | null;
  readonly startedAt: number;
  readonly lastActive: number;
  readonly messageCount: number;
}

export interface CanonicalSessionOptions {
  /** Sources whose canonical chat is not shown (null result). */
  readonly deniedSources?: readonly string[];
}

/**
 * The profile's canonical Bot Chat for a profiles listing. Read-mostly and idempotent: the only
 * write is a one-time resurrection of a recoverable archive, which a second call finds done.
 * Only proven compression tips are resolved, never an unmarked child. Call inside a write
 * transaction (the resurrection must be atomic with the read that justified it).
 */
export function canonicalSession(
  context: StoreContext,
  options: CanonicalSessionOptions = {},
): CanonicalSessionSummary | null {
  let row = getSessionByTitle(context, BOT_CHAT_TITLE, { includeHidden: true });
  if (!row || options.deniedSources?.includes(row.source)) return null;
  if (row.archived === 1) {
    if (!unarchiveRecoverableSession(context, row.id)) return null;
    row = getSession(context, row.id); // Re-fetch: the flags and end stamp just changed.
    if (!row) return null;
  }
  const tip = getSession(context, getCompressionTip(context, row.id)) ?? row;
  return {
    id: row.id,
    resolvedId: tip.id,
    rootTitle: row.title,
    title: tip.title ?? row.title,
    preview: latestPreview(context, tip.id),
    startedAt: row.startedAt,
    lastActive: row.lineageActiveAt ?? tip.lastActivityAt ?? tip.startedAt,
    messageCount: tip.messageCount,
  };
}
