import {
  FTS_CATCH_UP_BATCH_CHARS,
  FTS_CATCH_UP_BATCH_ROWS,
  FTS_INDEXED_THROUGH_KEY,
  FTS_STALE_KEY,
} from './limits.js';
import type { StoreContext } from './store-context.js';

/** Where the index stands: its watermark, the newest message, and whether it is detached. */
export interface FtsIndexState {
  /** `fts_indexed_through`; null when missing (a damaged index, detached at open). */
  readonly through: number | null;
  readonly newest: number;
  readonly stale: boolean;
}

/** One statement, so the three values come from one snapshot. */
const STATE_SQL = `SELECT
  (SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = '${FTS_INDEXED_THROUGH_KEY}') AS through,
  coalesce((SELECT max(id) FROM messages), 0) AS newest,
  EXISTS (SELECT 1 FROM state_meta WHERE key = '${FTS_STALE_KEY}') AS stale`;

export function readFtsIndexState(context: StoreContext): FtsIndexState {
  const row = context.statement(STATE_SQL).get() as {
    through: number | null;
    newest: number;
    stale: number;
  };
  return { through: row.through, newest: row.newest, stale: row.stale === 1 };
}

/** Rows above the watermark: the catch-up's work, and what a search matches with LIKE. */
export function pendingRows(state: FtsIndexState): number {
  if (state.stale || state.through === null) return 0;
  return Math.max(0, state.newest - state.through);
}

/**
 * The index's own bookkeeping disagrees with the watermark (a row above it is indexed, or the
 * watermark is gone): the message names `messages_fts`, so every path treats it as a broken index
 * and fails open (a rebuild resets both).
 */
export class FtsWatermarkError extends Error {
  constructor(detail: string) {
    super(`messages_fts watermark ${FTS_INDEXED_THROUGH_KEY}: ${detail}`);
    this.name = 'FtsWatermarkError';
  }
}

/**
 * One batch, inside the caller's write transaction: reads the watermark under the write lock (so
 * two processes never index a row twice), indexes the next rows above it — at most
 * `FTS_CATCH_UP_BATCH_ROWS` rows and `FTS_CATCH_UP_BATCH_CHARS` characters, at least one row —
 * and moves the watermark past them.
 */
export function indexPendingBatch(context: StoreContext): 'done' | 'pending' | 'stale' {
  const state = readFtsIndexState(context);
  if (state.stale) return 'stale';
  const through = state.through;
  if (through === null) throw new FtsWatermarkError('missing');
  if (state.newest <= through) return 'done';
  const indexedMax = context.statement('SELECT max(id) FROM messages_fts_docsize').pluck().get() as
    | number
    | null;
  if (indexedMax !== null && indexedMax > through) {
    throw new FtsWatermarkError(`row ${indexedMax} is indexed above the watermark ${through}`);
  }
  const batchEnd = context
    .statement(
      `SELECT max(id) FROM (
         SELECT id, row_number() OVER (ORDER BY id) AS position,
           sum(length(content)) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS characters
         FROM messages_fts_src WHERE id > ? ORDER BY id LIMIT ?)
       WHERE position = 1 OR characters <= ?`,
    )
    .pluck()
    .get(through, FTS_CATCH_UP_BATCH_ROWS, FTS_CATCH_UP_BATCH_CHARS) as number | null;
  if (batchEnd === null) return 'done';
  context
    .statement(
      'INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_src WHERE id > ? AND id <= ?',
    )
    .run(through, batchEnd);
  context
    .statement('UPDATE state_meta SET value = ? WHERE key = ?')
    .run(String(batchEnd), FTS_INDEXED_THROUGH_KEY);
  return batchEnd < state.newest ? 'pending' : 'done';
}
