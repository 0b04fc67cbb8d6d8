import { BOT_CHAT_TITLE } from './limits.js';
import type { StoreContext } from './store-context.js';
import { optionalNumber } from './validation.js';

/** Lineages idle this long are auto-archived by the maintenance sweep (the reference leaves it open). */
export const STALE_ARCHIVE_AFTER_SECONDS = 30 * 24 * 3600;

/**
 * Maintenance sweep: auto-archives idle conversations (whole lineages, marked `auto_archived` so a
 * later compression can revive them). Pinned lineages are spared, and so is the hidden canonical
 * Bot Chat: archived without an end reason it would count as a deliberate archive and give up its
 * title. Call inside a write transaction; returns the number of lineages archived.
 */
export function archiveStaleSessions(
  context: StoreContext,
  options: { olderThanSeconds?: number } = {},
): number {
  const olderThan =
    optionalNumber('olderThanSeconds', options.olderThanSeconds, { min: 0 }) ??
    STALE_ARCHIVE_AFTER_SECONDS;
  const cutoff = context.clock.now() - olderThan;
  const roots = context
    .statement(
      `SELECT r.id FROM sessions r
       WHERE r.lineage_root_id = r.id AND r.archived = 0 AND r.pinned = 0 AND r.lineage_active_at < ?
         AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.lineage_root_id = r.id AND c.hidden = 1 AND c.title = ?)`,
    )
    .pluck()
    .all(cutoff, BOT_CHAT_TITLE) as string[];
  const archive = context.statement(
    'UPDATE sessions SET archived = 1, auto_archived = 1 WHERE lineage_root_id = ?',
  );
  for (const id of roots) archive.run(id);
  return roots.length;
}
