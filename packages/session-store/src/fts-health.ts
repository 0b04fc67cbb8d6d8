import { FTS_INDEXED_THROUGH_KEY } from './limits.js';
import { sqliteErrorMessage } from './sqlite-errors.js';
import type { StoreContext } from './store-context.js';

const FTS_OBJECTS = [
  ['table', 'messages_fts'],
  ['view', 'messages_fts_src'],
  ['trigger', 'messages_fts_after_insert'],
  ['trigger', 'messages_fts_after_delete'],
  ['trigger', 'messages_fts_after_update'],
] as const;

/**
 * A cheap check of the FTS index (well under a millisecond): its objects exist, a MATCH loads
 * the index's config and structure record (which catches "invalid file format" and a wrecked
 * structure), a scan reads one row through the content view, and the watermark
 * (`fts_indexed_through`) is present with no indexed row above it. Deep damage in a leaf is found
 * later, by the first query or write that reaches it, and fails open then. Returns the problem,
 * or null when healthy.
 */
export function ftsProblem(
  context: StoreContext,
  options: { expectTriggers: boolean },
): string | null {
  const present = new Set(
    (
      context.db
        .prepare(
          "SELECT type || ' ' || name FROM sqlite_master WHERE name LIKE 'messages_fts%' AND type IN ('table', 'view', 'trigger')",
        )
        .pluck()
        .all() as string[]
    ).map(String),
  );
  for (const [type, name] of FTS_OBJECTS) {
    if (type === 'trigger' && !options.expectTriggers) continue;
    if (!present.has(`${type} ${name}`)) return `missing FTS ${type} ${name}`;
  }
  try {
    context.db
      .prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH \'"healthcheck"\' LIMIT 1')
      .all();
    context.db.prepare('SELECT rowid, content FROM messages_fts LIMIT 1').all();
    // One statement, so a catch-up committed by another process cannot fall between the reads.
    const watermark = context.db
      .prepare(
        `SELECT (SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?) AS through,
           (SELECT max(id) FROM messages_fts_docsize) AS indexed`,
      )
      .get(FTS_INDEXED_THROUGH_KEY) as { through: number | null; indexed: number | null };
    if (watermark.through === null) return `missing FTS watermark ${FTS_INDEXED_THROUGH_KEY}`;
    if (watermark.indexed !== null && watermark.indexed > watermark.through) {
      return `FTS row ${watermark.indexed} indexed above the watermark ${watermark.through}`;
    }
  } catch (error) {
    return sqliteErrorMessage(error);
  }
  return null;
}
