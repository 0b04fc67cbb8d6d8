import { isRecoverableEndReason, RECOVERABLE_END_REASONS_SQL } from './end-reasons.js';
import { BOT_CHAT_TITLE } from './limits.js';
import { getCompressionTip, setLineageArchived } from './lineage.js';
import { latestPreview } from './preview.js';
import { getSession } from './sessions.js';
import type { StoreContext } from './store-context.js';
import { getSessionByTitle } from './titles.js';

/** The state a resurrection was decided on, observed without the write lock. */
export interface ObservedResurrection {
  /** The archived row asked about (its whole lineage is unarchived). */
  readonly id: string;
  /** Its compression tip and the tip's recoverable end stamp, as observed. */
  readonly tipId: string;
  readonly endReason: string;
  readonly endedAt: number | null;
}

/**
 * Decides, from a read, whether an archived chat can be brought back: recoverability is judged
 * at the compression tip (a compressed lineage's root always ends with `compression`). Null when
 * there is nothing to do — not archived, or a deliberate archive (no end reason, or a boundary
 * such as `session_reset`), which stays archived.
 */
export function observeResurrection(
  context: StoreContext,
  id: string,
): ObservedResurrection | null {
  const row = getSession(context, id);
  if (row?.archived !== 1) return null;
  const tip = getSession(context, getCompressionTip(context, id));
  if (!tip?.endReason || !isRecoverableEndReason(tip.endReason)) return null;
  return { id, tipId: tip.id, endReason: tip.endReason, endedAt: tip.endedAt };
}

/**
 * Brings the observed chat back: clears the tip's end stamp by compare-and-swap on the observed
 * state, then unarchives the lineage. The observation was made without the write lock, so another
 * process may have changed the tip since — a boundary (`session_reset`) that landed first makes
 * the swap fail and the chat stays archived. Call inside a write transaction.
 */
export function applyResurrection(context: StoreContext, observed: ObservedResurrection): boolean {
  const cleared = context
    .statement(
      `UPDATE sessions SET ended_at = NULL, end_reason = NULL
       WHERE id = ? AND end_reason = ? AND ended_at IS ? AND end_reason IN (${RECOVERABLE_END_REASONS_SQL})`,
    )
    .run(observed.tipId, observed.endReason, observed.endedAt).changes;
  if (cleared !== 1) return false;
  setLineageArchived(context, observed.id, false);
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

export type CanonicalLookup =
  | { readonly kind: 'absent' }
  | { readonly kind: 'found'; readonly summary: CanonicalSessionSummary }
  | { readonly kind: 'resurrect'; readonly observed: ObservedResurrection };

/**
 * The profile's canonical Bot Chat for a profiles listing, read without the write lock. Only
 * proven compression tips are resolved, never an unmarked child. An archived canonical chat that
 * machinery reaped comes back as `resurrect` (the caller writes, then looks again); a deliberate
 * archive or a denied source is `absent`.
 */
export function lookUpCanonicalSession(
  context: StoreContext,
  options: CanonicalSessionOptions = {},
): CanonicalLookup {
  const row = getSessionByTitle(context, BOT_CHAT_TITLE, { includeHidden: true });
  if (!row || options.deniedSources?.includes(row.source)) return { kind: 'absent' };
  if (row.archived === 1) {
    const observed = observeResurrection(context, row.id);
    return observed ? { kind: 'resurrect', observed } : { kind: 'absent' };
  }
  const tip = getSession(context, getCompressionTip(context, row.id)) ?? row;
  return {
    kind: 'found',
    summary: {
      id: row.id,
      resolvedId: tip.id,
      rootTitle: row.title,
      title: tip.title ?? row.title,
      preview: latestPreview(context, tip.id),
      startedAt: row.startedAt,
      lastActive: row.lineageActiveAt ?? tip.lastActivityAt ?? tip.startedAt,
      messageCount: tip.messageCount,
    },
  };
}
