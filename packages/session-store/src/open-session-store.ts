import { chmodSync, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { debuglog } from 'node:util';
import { getHermesHome } from '@hermes/config';
import { type Clock, realSleep, type Sleep, systemClock } from './clock.js';
import { type ForeignHolderScanner, scanForeignHolders } from './foreign-holders.js';
import { dropFtsTriggers, isFtsStale } from './fts.js';
import {
  CHECKPOINT_INTERVAL_MS,
  FTS_REBUILD_LOCK_TIMEOUT_MS,
  FTS_RETRY_COOLDOWN_MS,
  WRITE_PATIENCE_SECONDS,
  WRITER_BUSY_TIMEOUT_MS,
} from './limits.js';
import { applyMigrations } from './migrations.js';
import {
  applyConnectionPragmas,
  applyJournalMode,
  type JournalMode,
  openConnection,
} from './open-database.js';
import { SessionStore } from './session-store.js';
import { StoreContext } from './store-context.js';
import type { SessionStoreLogger } from './store-settings.js';
import { ensureTitleUniqueIndex } from './titles.js';
import { withWritePatience } from './write-patience.js';

const debug = debuglog('hermes-session-store');

export interface OpenSessionStoreOptions {
  /** Database file; default `$HERMES_HOME/state.db`. */
  readonly path?: string;
  /** `wal` (default) or `delete`; an existing WAL database is never downgraded. */
  readonly journalMode?: JournalMode;
  /** Overrides filesystem detection (WAL is avoided on virtiofs and 9p). */
  readonly filesystemType?: string | null;
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
  const filePath = path.resolve(options.path ?? path.join(getHermesHome(), 'state.db'));
  await mkdir(path.dirname(filePath), { recursive: true, mode: 0o700 });
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? realSleep;
  const busyTimeoutMs = options.busyTimeoutMs ?? WRITER_BUSY_TIMEOUT_MS;
  const patience = {
    patienceSeconds: options.writePatienceSeconds ?? WRITE_PATIENCE_SECONDS,
    clock,
    sleep,
  };
  const database = openConnection({ filePath, busyTimeoutMs });
  let journalMode: JournalMode;
  let context: StoreContext;
  let stale: boolean;
  try {
    journalMode = await withWritePatience(
      () =>
        applyJournalMode(database, {
          requested: options.journalMode ?? 'wal',
          filePath,
          ...(options.filesystemType === undefined
            ? {}
            : { filesystemType: options.filesystemType }),
        }),
      patience,
    );
    applyConnectionPragmas(database);
    await withWritePatience(() => applyMigrations(database), patience);
    chmodDatabaseFiles(filePath);
    context = new StoreContext(database, clock);
    await withWritePatience(
      () => database.transaction(() => ensureTitleUniqueIndex(context)).immediate(),
      patience,
    );
    stale = isFtsStale(context);
    if (stale) {
      // Stay detached until the rebuild: a half-broken index must not fail transcript writes.
      await withWritePatience(
        () => database.transaction(() => dropFtsTriggers(context)).immediate(),
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
      busyTimeoutMs,
      writePatienceSeconds: patience.patienceSeconds,
      ftsRetryCooldownMs: options.ftsRetryCooldownMs ?? FTS_RETRY_COOLDOWN_MS,
      rebuildLockTimeoutMs: options.rebuildLockTimeoutMs ?? FTS_REBUILD_LOCK_TIMEOUT_MS,
      scanner: options.foreignHolderScanner ?? scanForeignHolders,
      clock,
      sleep,
      logger: options.logger ?? { warn: (message) => debug(message) },
    },
    options.checkpointIntervalMs ?? CHECKPOINT_INTERVAL_MS,
  );
  if (stale && options.recoverFtsOnOpen !== false) store.startFtsRecovery();
  return store;
}
