import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SessionStoreError } from './errors.js';
import { FTS_STALE_KEY } from './limits.js';

/** What `checkStateDbIntegrity` found. */
export interface StateDbIntegrity {
  /** SQLite's `quick_check` found nothing wrong. */
  readonly ok: boolean;
  /** The problems `quick_check` reported (at most `maxProblems`), or why the file is unreadable. */
  readonly problems: readonly string[];
  /** `PRAGMA user_version`: the schema version the file was migrated to. */
  readonly schemaVersion: number | null;
  readonly journalMode: string | null;
  /** The full-text index is marked stale (search falls back to a plain scan until rebuilt). */
  readonly ftsStale: boolean;
}

export interface CheckStateDbIntegrityOptions {
  /** How many problems to collect (default 20). */
  readonly maxProblems?: number;
  /** Give up after this long (default 120 000 ms); the worker is stopped. */
  readonly timeoutMs?: number;
}

/*
 * Plain JavaScript evaluated in a worker (as the FTS rebuild does): `quick_check` reads every
 * page, which takes seconds on a large file, and better-sqlite3 is synchronous. The connection is
 * read-only and never migrates, heals or checkpoints anything.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlitePath);
let db;
try {
  db = new Database(workerData.databasePath, { readonly: true, fileMustExist: true, timeout: 1000 });
  const problems = db.prepare('PRAGMA quick_check(' + workerData.maxProblems + ')').pluck().all();
  const schemaVersion = db.pragma('user_version', { simple: true });
  const journalMode = db.pragma('journal_mode', { simple: true });
  let ftsStale = false;
  try {
    const value = db.prepare('SELECT value FROM state_meta WHERE key = ?').pluck().get(workerData.ftsStaleKey);
    ftsStale = value !== undefined && value !== null && value !== '0' && value !== 0;
  } catch (error) {
    // A file without state_meta predates it: nothing is marked stale.
  }
  parentPort.postMessage({ ok: true, problems, schemaVersion, journalMode, ftsStale });
} catch (error) {
  parentPort.postMessage({ ok: false, code: error && error.code, message: String(error && error.message || error) });
} finally {
  if (db) db.close();
}
`;

const UNREADABLE_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT']);

/**
 * Checks a `state.db` without changing it (`PRAGMA quick_check` on a read-only connection in a
 * worker thread, so the event loop never waits): integrity, schema version, journal mode and the
 * FTS stale flag. A file that is not readable SQLite is reported (`ok: false`), not thrown; a
 * missing file or another failure throws `SessionStoreError` (`database_error`).
 */
export function checkStateDbIntegrity(
  databasePath: string,
  options: CheckStateDbIntegrityOptions = {},
): Promise<StateDbIntegrity> {
  const maxProblems = Math.max(1, Math.min(1000, Math.trunc(options.maxProblems ?? 20)));
  const timeoutMs = options.timeoutMs ?? 120_000;
  const betterSqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { databasePath, maxProblems, betterSqlitePath, ftsStaleKey: FTS_STALE_KEY },
    });
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      action();
    };
    const timer = setTimeout(() => {
      settle(() =>
        reject(
          new SessionStoreError({
            code: 'database_error',
            message: `the integrity check of ${databasePath} did not finish within ${timeoutMs} ms`,
          }),
        ),
      );
      void worker.terminate();
    }, timeoutMs);
    timer.unref();
    worker.once(
      'message',
      (message: {
        ok: boolean;
        code?: string;
        message?: string;
        problems?: string[];
        schemaVersion?: number;
        journalMode?: string;
        ftsStale?: boolean;
      }) => {
        if (message.ok) {
          const problems = (message.problems ?? []).filter((line) => line !== 'ok');
          settle(() =>
            resolve({
              ok: problems.length === 0,
              problems,
              schemaVersion: message.schemaVersion ?? null,
              journalMode: message.journalMode ?? null,
              ftsStale: message.ftsStale === true,
            }),
          );
        } else if (message.code && UNREADABLE_CODES.has(message.code)) {
          settle(() =>
            resolve({
              ok: false,
              problems: [`${message.message ?? 'unreadable'} (${message.code})`],
              schemaVersion: null,
              journalMode: null,
              ftsStale: false,
            }),
          );
        } else {
          settle(() =>
            reject(
              new SessionStoreError({
                code: 'database_error',
                message: `${databasePath} cannot be checked: ${message.message ?? 'unknown error'}${message.code ? ` (${message.code})` : ''}`,
              }),
            ),
          );
        }
      },
    );
    worker.once('error', (error) =>
      settle(() =>
        reject(
          new SessionStoreError({
            code: 'database_error',
            message: `the integrity check of ${databasePath} failed: ${error.message}`,
            cause: error,
          }),
        ),
      ),
    );
    worker.once('exit', (code) =>
      settle(() =>
        reject(
          new SessionStoreError({
            code: 'database_error',
            message: `the integrity check worker exited with code ${code}`,
          }),
        ),
      ),
    );
  });
}
