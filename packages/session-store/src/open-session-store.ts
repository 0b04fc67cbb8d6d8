import { chmodSync, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { debuglog } from 'node:util';
import { getHermesHome } from '@hermes/config';
import type { Database } from 'better-sqlite3';
import { type Clock, realSleep, type Sleep, systemClock } from './clock.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { DatabaseFileIdentity } from './file-identity.js';
import { type ForeignHolderScanner, scanForeignHolders } from './foreign-holders.js';
import { dropFtsTriggers, enterFtsFailOpen, isFtsStale } from './fts.js';
import { ftsProblem } from './fts-health.js';
import {
  CHECKPOINT_INTERVAL_MS,
  FTS_REBUILD_LOCK_TIMEOUT_MS,
  FTS_RETRY_COOLDOWN_MS,
  READ_BUSY_TIMEOUT_MS,
  WRITE_ATTEMPT_BUSY_TIMEOUT_MS,
  WRITE_PATIENCE_SECONDS,
} from './limits.js';
import { applyMigrations } from './migrations.js';
import { normalizeStoreError } from './normalize-error.js';
import {
  applyConnectionPragmas,
  applyJournalMode,
  type JournalMode,
  openConnection,
  revertToRollbackJournal,
  WalUnusableError,
} from './open-database.js';
import { SessionStore } from './session-store.js';
import { type BusyTimeouts, StoreContext } from './store-context.js';
import type { SessionStoreLogger } from './store-settings.js';
import { ensureTitleUniqueIndex } from './titles.js';
import { optionalInteger, optionalNumber } from './validation.js';
import { runWriteAttempt, type WritePatienceOptions, withWritePatience } from './write-patience.js';

const debug = debuglog('hermes-session-store');

export interface OpenSessionStoreOptions {
  /** Database file; default `$HERMES_HOME/state.db`. */
  readonly path?: string;
  /** `wal` (default) or `delete`; an existing WAL database is never downgraded. */
  readonly journalMode?: JournalMode;
  /** Overrides filesystem detection (WAL is avoided on virtiofs and 9p). */
  readonly filesystemType?: string | null;
  /**
   * How long one write attempt may wait inside SQLite for another process's lock (default 0).
   * That wait blocks the event loop; write patience waits on timers instead.
   */
  readonly busyTimeoutMs?: number;
  readonly writePatienceSeconds?: number;
  /** Passive WAL checkpoint period (unref'd timer); 0 disables the timer. */
  readonly checkpointIntervalMs?: number;
  /** Start the FTS rebuild at open when the index is stale (default true). */
  readonly recoverFtsOnOpen?: boolean;
  readonly ftsRetryCooldownMs?: number;
  readonly rebuildLockTimeoutMs?: number;
  readonly foreignHolderScanner?: ForeignHolderScanner;
  readonly clock?: Clock;
  readonly sleep?: Sleep;
  readonly logger?: SessionStoreLogger;
}

interface ConnectOptions {
  readonly filePath: string;
  readonly requested: JournalMode;
  readonly filesystemType: string | null | undefined;
  readonly busyTimeouts: BusyTimeouts;
  readonly patience: WritePatienceOptions;
  readonly logger: SessionStoreLogger;
}

/**
 * Opens the writer connection in the requested journal mode. Where WAL cannot work at this path
 * (its `-shm` index cannot be opened or mapped), a header already switched to WAL is put back to
 * the rollback journal and the store runs in DELETE mode, with a warning.
 */
async function connectWithJournalMode(
  options: ConnectOptions,
): Promise<{ database: Database; journalMode: JournalMode }> {
  const connect = async (requested: JournalMode) => {
    const database = openConnection({
      filePath: options.filePath,
      busyTimeoutMs: options.busyTimeouts.readMs,
    });
    try {
      const journalMode = await withWritePatience(
        () =>
          runWriteAttempt(database, options.busyTimeouts, () =>
            applyJournalMode(database, {
              requested,
              filePath: options.filePath,
              ...(options.filesystemType === undefined
                ? {}
                : { filesystemType: options.filesystemType }),
            }),
          ),
        options.patience,
      );
      return { database, journalMode };
    } catch (error) {
      database.close();
      throw error;
    }
  };
  try {
    return await connect(options.requested);
  } catch (error) {
    if (!(error instanceof WalUnusableError)) throw error;
    try {
      revertToRollbackJournal(options.filePath);
    } catch (revertError) {
      throw new SessionStoreError({
        code: 'database_error',
        message: `${error.message} (${options.filePath}), and it could not be switched to the rollback journal: ${(revertError as Error).message}`,
        cause: revertError,
      });
    }
    options.logger.warn(
      `WAL cannot be used for ${options.filePath} (${error.reason}); using the rollback journal (DELETE)`,
    );
    return connect('delete');
  }
}

function chmodDatabaseFiles(filePath: string): void {
  for (const file of [filePath, `${filePath}-wal`, `${filePath}-shm`]) {
    try {
      if (existsSync(file)) chmodSync(file, 0o600);
    } catch {
      // Another user's sidecar on a shared volume: not ours to change.
    }
  }
}

/**
 * Opens (creating if needed) a state.db: checks the file is SQLite, applies the journal mode
 * and pragmas, runs pending migrations, heals the title index, and — when the FTS index was left
 * stale — starts a background rebuild guarded against foreign holders.
 */
export async function openSessionStore(
  options: OpenSessionStoreOptions = {},
): Promise<SessionStore> {
  try {
    return await open(validateOpenOptions(options));
  } catch (error) {
    throw normalizeStoreError(error);
  }
}

function validateOpenOptions(options: OpenSessionStoreOptions): OpenSessionStoreOptions {
  optionalInteger('busyTimeoutMs', options.busyTimeoutMs, { min: 0, max: 60_000 });
  optionalNumber('writePatienceSeconds', options.writePatienceSeconds, { min: 0 });
  optionalInteger('checkpointIntervalMs', options.checkpointIntervalMs, { min: 0 });
  optionalInteger('ftsRetryCooldownMs', options.ftsRetryCooldownMs, { min: 0 });
  optionalInteger('rebuildLockTimeoutMs', options.rebuildLockTimeoutMs, { min: 0 });
  if (options.journalMode !== undefined && !['wal', 'delete'].includes(options.journalMode)) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('journalMode', "'wal' or 'delete'"),
    });
  }
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path === '')) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('path', 'a non-empty file path'),
    });
  }
  return options;
}

async function open(options: OpenSessionStoreOptions): Promise<SessionStore> {
  const filePath = path.resolve(options.path ?? path.join(getHermesHome(), 'state.db'));
  await mkdir(path.dirname(filePath), { recursive: true, mode: 0o700 });
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? { warn: (message: string) => debug(message) };
  const sleep = options.sleep ?? realSleep;
  const busyTimeouts = {
    attemptMs: options.busyTimeoutMs ?? WRITE_ATTEMPT_BUSY_TIMEOUT_MS,
    readMs: READ_BUSY_TIMEOUT_MS,
  };
  const patience = {
    patienceSeconds: options.writePatienceSeconds ?? WRITE_PATIENCE_SECONDS,
    clock,
    sleep,
  };
  const { database, journalMode } = await connectWithJournalMode({
    filePath,
    requested: options.journalMode ?? 'wal',
    filesystemType: options.filesystemType,
    busyTimeouts,
    patience,
    logger,
  });
  // Every step that may wait for another process's lock is a short attempt plus awaited retries.
  const attempt = <T>(work: () => T) => runWriteAttempt(database, busyTimeouts, work);
  let context: StoreContext;
  let stale: boolean;
  try {
    applyConnectionPragmas(database);
    await withWritePatience(() => attempt(() => applyMigrations(database)), patience);
    chmodDatabaseFiles(filePath);
    context = new StoreContext(database, clock, busyTimeouts);
    await withWritePatience(
      () =>
        context.writeAttempt(() =>
          database.transaction(() => ensureTitleUniqueIndex(context)).immediate(),
        ),
      patience,
    );
    stale = isFtsStale(context);
    const problem = stale ? null : ftsProblem(context, { expectTriggers: true });
    if (problem !== null) {
      // A broken index found at open (a missing table, an unreadable format, a wrecked
      // structure): detach it now so no write meets it, and rebuild in the background.
      await withWritePatience(
        () => context.writeAttempt(() => enterFtsFailOpen(context, `found at open: ${problem}`)),
        patience,
      );
      logger.warn(
        `FTS index unusable at open (${problem}); search falls back to LIKE until rebuilt`,
      );
      stale = true;
    }
    if (stale) {
      // Stay detached until the rebuild: a half-broken index must not fail transcript writes.
      await withWritePatience(
        () =>
          context.writeAttempt(() =>
            database.transaction(() => dropFtsTriggers(context)).immediate(),
          ),
        patience,
      );
    }
  } catch (error) {
    database.close();
    throw error;
  }
  const store = new SessionStore(
    context,
    {
      filePath,
      journalMode,
      busyTimeoutMs: busyTimeouts.attemptMs,
      writePatienceSeconds: patience.patienceSeconds,
      ftsRetryCooldownMs: options.ftsRetryCooldownMs ?? FTS_RETRY_COOLDOWN_MS,
      rebuildLockTimeoutMs: options.rebuildLockTimeoutMs ?? FTS_REBUILD_LOCK_TIMEOUT_MS,
      scanner: options.foreignHolderScanner ?? scanForeignHolders,
      clock,
      sleep,
      logger,
      fileIdentity: new DatabaseFileIdentity(filePath, { wal: journalMode === 'wal' }),
    },
    options.checkpointIntervalMs ?? CHECKPOINT_INTERVAL_MS,
  );
  if (stale && options.recoverFtsOnOpen !== false) store.startFtsRecovery();
  if (!stale) await store.catchUpFtsAtOpen();
  return store;
}
