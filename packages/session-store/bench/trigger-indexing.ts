// The previous FTS definition, for baselines: 0001_fts.sql's triggers index every message inside
// its own write transaction. Not part of the package.
import BetterSqlite3 from 'better-sqlite3';
import { FTS_INDEXED_THROUGH_KEY } from '../src/index.js';
import { loadMigrations } from '../src/migrations.js';

/** Puts back 0001_fts.sql's triggers and pins the watermark above every id. */
export function restoreTriggerIndexing(databasePath: string): void {
  const fts = loadMigrations().find((migration) => migration.tag === '0001_fts');
  if (!fts) throw new Error('0001_fts missing');
  const raw = new BetterSqlite3(databasePath);
  try {
    raw.exec('BEGIN IMMEDIATE');
    for (const name of ['insert', 'delete', 'update'])
      raw.exec(`DROP TRIGGER messages_fts_after_${name}`);
    for (const statement of fts.statements)
      if (statement.startsWith('CREATE TRIGGER')) raw.exec(statement);
    raw
      .prepare('UPDATE state_meta SET value = ? WHERE key = ?')
      .run(String(Number.MAX_SAFE_INTEGER), FTS_INDEXED_THROUGH_KEY);
    raw.exec('COMMIT');
  } finally {
    raw.close();
  }
}
