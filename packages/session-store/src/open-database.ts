import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { JOURNAL_SIZE_LIMIT_BYTES, WAL_AUTOCHECKPOINT_PAGES } from './limits.js';
import { isBusyError, isNotADatabaseError, sqliteErrorMessage } from './sqlite-errors.js';

export type JournalMode = 'wal' | 'delete';

const SQLITE_HEADER = 'SQLite format 3\u0000';
const WAL_FALLBACK_PATTERN = /locking protocol|not authorized|disk i\/o error/i;
const NO_WAL_FILESYSTEMS = new Set(['virtiofs', '9p']);

/**
 * Errors that say WAL's shared-memory index cannot be used at this path: the reference's
 * "locking protocol" / "not authorized" / "disk i/o error", and what SQLite reports when the
 * `-shm` file cannot be opened, mapped or written (a directory, FIFO or device in its place, a
 * file system without shared mmap).
 */
export function isWalUnusableError(error: unknown): boolean {
  if (isBusyError(error)) return false;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return (
    WAL_FALLBACK_PATTERN.test(sqliteErrorMessage(error)) ||
    code.startsWith('SQLITE_IOERR_SHM') ||
    code === 'SQLITE_CANTOPEN' ||
    code.startsWith('SQLITE_READONLY')
  );
}

/** WAL was switched on (or found on) but cannot work here; the opener reverts to DELETE. */
export class WalUnusableError extends Error {
  constructor(readonly reason: string) {
    super(`WAL cannot be used here: ${reason}`);
    this.name = 'WalUnusableError';
  }
}

/** A read and a write-lock round trip: the first use of the WAL index (`-shm`), for real. */
function verifyWal(database: Database): void {
  try {
    database.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
    try {
      database.exec('BEGIN IMMEDIATE');
      database.exec('ROLLBACK');
    } catch (error) {
      if (!isBusyError(error)) throw error; // Another writer: the index works.
    }
  } catch (error) {
    if (isWalUnusableError(error)) throw new WalUnusableError(sqliteErrorMessage(error));
    throw error;
  }
}

/**
 * Puts a database whose header says WAL back into the rollback journal without touching `-shm`:
 * a connection in exclusive locking mode keeps the WAL index in its own memory. It needs the
 * database to itself, so it never downgrades a database other processes are using.
 */
export function revertToRollbackJournal(filePath: string): void {
  const database = new BetterSqlite3(filePath, { timeout: 0 });
  try {
    database.pragma('locking_mode = EXCLUSIVE');
    database.pragma('journal_mode = DELETE');
  } finally {
    database.close();
  }
}

/**
 * Refuses a file that exists but is not SQLite, before SQLite touches it: SQLite would otherwise
 * report an opaque error on first use, and nothing here may overwrite or "repair" the file.
 */
export function assertSqliteFile(filePath: string): void {
  let size: number;
  try {
    size = statSync(filePath).size;
  } catch {
    return; // Absent: SQLite creates it.
  }
  if (size === 0) return;
  const header = Buffer.alloc(16);
  const descriptor = openSync(filePath, 'r');
  try {
    readSync(descriptor, header, 0, 16, 0);
  } finally {
    closeSync(descriptor);
  }
  if (size < 100 || header.toString('latin1') !== SQLITE_HEADER) {
    throw new SessionStoreError({
      code: 'database_corrupt',
      message: ERROR_MESSAGES.notSqlite(filePath, 'the file header is not a SQLite header'),
    });
  }
}

/** SQLite 3.7.0 – 3.51.2 carry the WAL-reset bug; those builds stay out of WAL. */
export function isWalResetAffected(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  const packed = major * 1_000_000 + minor * 1_000 + patch;
  return packed >= 3_007_000 && packed <= 3_051_002;
}

/** The filesystem type of the mount holding `filePath` (Linux; null elsewhere or on failure). */
export function filesystemTypeOf(filePath: string): string | null {
  try {
    const mounts = readFileSync('/proc/mounts', 'utf8').split('\n');
    let best: { point: string; type: string } | null = null;
    const target = path.resolve(filePath);
    for (const line of mounts) {
      const [, point, type] = line.split(' ');
      if (!point || !type) continue;
      const prefix = point.endsWith('/') ? point : `${point}/`;
      if (
        (target === point || target.startsWith(prefix)) &&
        (!best || point.length > best.point.length)
      ) {
        best = { point, type };
      }
    }
    return best?.type ?? null;
  } catch {
    return null;
  }
}

export interface JournalModeOptions {
  readonly requested: JournalMode;
  readonly filePath: string;
  readonly filesystemType?: string | null;
}

/**
 * WAL with the reference's fallbacks: keep a database that is already WAL (others may be
 * attached), use DELETE on filesystems and SQLite builds where WAL is unsafe, and fall back to
 * DELETE when enabling WAL fails with a known "WAL impossible here" error.
 */
export function applyJournalMode(database: Database, options: JournalModeOptions): JournalMode {
  const current = String(database.pragma('journal_mode', { simple: true })).toLowerCase();
  if (current === 'wal') {
    verifyWal(database);
    return 'wal';
  }
  const version = String(database.prepare('SELECT sqlite_version() AS v').pluck().get());
  const filesystemType = options.filesystemType ?? filesystemTypeOf(options.filePath);
  const walUnsafe =
    isWalResetAffected(version) ||
    (filesystemType !== null && NO_WAL_FILESYSTEMS.has(filesystemType));
  if (options.requested === 'delete' || walUnsafe) {
    database.pragma('journal_mode = DELETE');
    return 'delete';
  }
  let mode: string;
  try {
    mode = String(database.pragma('journal_mode = WAL', { simple: true })).toLowerCase();
  } catch (error) {
    if (!WAL_FALLBACK_PATTERN.test(sqliteErrorMessage(error))) throw error;
    database.pragma('journal_mode = DELETE');
    return 'delete';
  }
  if (mode !== 'wal') return 'delete';
  // Switching only rewrote the header; the WAL index is first used now. Where it cannot work
  // the header already says WAL, so the opener reverts it (revertToRollbackJournal).
  verifyWal(database);
  return 'wal';
}

export interface OpenConnectionOptions {
  readonly filePath: string;
  readonly busyTimeoutMs: number;
  readonly readonly?: boolean;
}

/** Opens a connection and proves the file is readable SQLite; never rewrites a bad file. */
export function openConnection(options: OpenConnectionOptions): Database {
  assertSqliteFile(options.filePath);
  const database = new BetterSqlite3(options.filePath, {
    timeout: options.busyTimeoutMs,
    readonly: options.readonly ?? false,
  });
  try {
    // Reading the whole schema forces SQLite to parse the header and every schema page.
    database.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
  } catch (error) {
    database.close();
    if (isWalUnusableError(error) && !isNotADatabaseError(error)) {
      // A WAL database whose index cannot be opened at this path (see applyJournalMode).
      throw new WalUnusableError(sqliteErrorMessage(error));
    }
    if (isNotADatabaseError(error)) {
      throw new SessionStoreError({
        code: 'database_corrupt',
        message: ERROR_MESSAGES.notSqlite(options.filePath, sqliteErrorMessage(error)),
        cause: error,
      });
    }
    throw error;
  }
  return database;
}

/**
 * The pragmas that decide how a commit and a checkpoint sync: NORMAL in WAL mode (a commit is
 * not fsynced; a checkpoint syncs the WAL, then the database); FULL with `checkpoint_fullfsync`
 * on macOS, where fsync alone does not reach the disk. Every connection that checkpoints uses
 * them (the writer and the background checkpoint).
 */
export function syncPragmas(): string[] {
  return process.platform === 'darwin'
    ? ['synchronous = FULL', 'checkpoint_fullfsync = ON']
    : ['synchronous = NORMAL'];
}

export function applyConnectionPragmas(database: Database): void {
  for (const pragma of syncPragmas()) database.pragma(pragma);
  database.pragma('foreign_keys = ON');
  database.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  database.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
}
