import BetterSqlite3 from 'better-sqlite3';
import { FTS_INDEXED_THROUGH_KEY } from '../src/index.js';

export interface FtsIndexReport {
  /** fts5's 'integrity-check' against the content (rank 1): 'ok' or the error it raised. */
  readonly integrity: string;
  /** The watermark, `fts_indexed_through`. */
  readonly through: number | null;
  readonly newest: number;
  /** Rows in the index (fts5's docsize table: one row per indexed message). */
  readonly indexedRows: number;
  readonly messages: number;
}

/**
 * The index as a separate connection sees it. fts5's plain 'integrity-check' of an
 * external-content table checks only the index's own structure (it passes with rows indexed
 * twice, or deleted that never were); with rank 1 it also re-reads every row of the content view
 * and compares, so it fails while any row is pending — call it once nothing is.
 */
export function ftsIndexReport(databasePath: string): FtsIndexReport {
  const raw = new BetterSqlite3(databasePath);
  try {
    let integrity = 'ok';
    try {
      raw.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)");
    } catch (error) {
      integrity = `${(error as { code?: string }).code}: ${(error as Error).message}`;
    }
    const row = raw
      .prepare(
        `SELECT (SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?) AS through,
           coalesce((SELECT max(id) FROM messages), 0) AS newest,
           (SELECT count(*) FROM messages_fts_docsize) AS indexedRows,
           (SELECT count(*) FROM messages) AS messages`,
      )
      .get(FTS_INDEXED_THROUGH_KEY) as Omit<FtsIndexReport, 'integrity'>;
    return { integrity, ...row };
  } finally {
    raw.close();
  }
}

/** The watermark alone (read-only). */
export function indexedThrough(databasePath: string): number | null {
  const raw = new BetterSqlite3(databasePath, { readonly: true });
  try {
    return (
      (raw
        .prepare('SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?')
        .pluck()
        .get(FTS_INDEXED_THROUGH_KEY) as number | undefined) ?? null
    );
  } finally {
    raw.close();
  }
}
