import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The rebuild runs one long BEGIN IMMEDIATE transaction; better-sqlite3 is synchronous, so it
 * runs in a worker thread with its own connection. The worker body is plain JavaScript evaluated
 * from a string: that loads the same way from `src/` (tests, TypeScript) and from `dist/`, with no
 * second bundle entry. better-sqlite3 is resolved here and its path handed to the worker.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlitePath);
const db = new Database(workerData.databasePath, { timeout: workerData.busyTimeoutMs });
try {
  db.pragma('foreign_keys = ON');
  db.exec('BEGIN IMMEDIATE');
  try {
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts_%'").pluck().all();
    for (const name of triggers) db.exec('DROP TRIGGER IF EXISTS "' + name + '"');
    try {
      db.exec('DROP TABLE IF EXISTS messages_fts');
    } catch (error) {
      // fts5 reads its config record before it can drop itself, so an index with an unreadable
      // format ("invalid fts5 file format") cannot be dropped: give it a readable version first.
      db.unsafeMode(true);
      db.exec("INSERT OR REPLACE INTO messages_fts_config(k, v) VALUES ('version', 4)");
      db.unsafeMode(false);
      db.exec('DROP TABLE IF EXISTS messages_fts');
    }
    db.exec('DROP VIEW IF EXISTS messages_fts_src');
    for (const statement of workerData.statements) db.exec(statement);
    const clear = db.prepare('DELETE FROM state_meta WHERE key = ?');
    for (const key of workerData.clearKeys) clear.run(key);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
  parentPort.postMessage({ ok: true });
} catch (error) {
  parentPort.postMessage({ ok: false, message: String(error && error.message || error) });
} finally {
  db.close();
}
`;

export interface RebuildInWorkerOptions {
  readonly databasePath: string;
  /** The FTS migration's statements (the single definition of the FTS objects). */
  readonly statements: readonly string[];
  /** state_meta keys cleared in the same transaction as the rebuild. */
  readonly clearKeys: readonly string[];
  readonly busyTimeoutMs: number;
}

export function rebuildFtsInWorker(options: RebuildInWorkerOptions): Promise<void> {
  const betterSqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        ...options,
        statements: [...options.statements],
        clearKeys: [...options.clearKeys],
        betterSqlitePath,
      },
    });
    let settled = false;
    worker.once('message', (message: { ok: boolean; message?: string }) => {
      settled = true;
      if (message.ok) resolve();
      else reject(new Error(message.message ?? 'FTS rebuild failed'));
    });
    worker.once('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`FTS rebuild worker exited with code ${code}`));
      settled = true;
    });
  });
}
