import * as v from 'valibot';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { describeHolders, type ForeignHolder } from './foreign-holders.js';
import { enterFtsFailOpen, isFtsStale, readMeta, writeMeta } from './fts.js';
import { rebuildFtsInWorker } from './fts-rebuild-worker.js';
import { FTS_REBUILD_DEFERRAL_KEY, FTS_STALE_KEY } from './limits.js';
import { ftsMigrationStatements } from './migrations.js';
import { acquireRebuildLock } from './rebuild-lock.js';
import type { StoreContext } from './store-context.js';
import type { StoreSettings } from './store-settings.js';
import { withWritePatience } from './write-patience.js';

// Written by whichever process deferred last; a damaged record just restarts the count.
const DeferralSchema = v.object({ firstSeen: v.number(), attempts: v.number() });

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface FtsMaintenanceOptions {
  readonly context: StoreContext;
  readonly settings: StoreSettings;
  /** The store's patient write path. */
  readonly write: <T>(work: (context: StoreContext) => T) => Promise<T>;
  readonly isClosed: () => boolean;
}

/** Rebuild, deferral and retry of the FTS index for one store. */
export class FtsMaintenance {
  readonly #context: StoreContext;
  readonly #settings: StoreSettings;
  readonly #write: FtsMaintenanceOptions['write'];
  readonly #isClosed: () => boolean;
  #rebuilding: Promise<number> | undefined;
  #lastFtsAttemptMs: number | undefined;

  constructor(options: FtsMaintenanceOptions) {
    this.#context = options.context;
    this.#settings = options.settings;
    this.#write = options.write;
    this.#isClosed = options.isClosed;
  }

  /** The rebuild in progress, if any (awaited by `close()`). */
  get inProgress(): Promise<number> | undefined {
    return this.#rebuilding;
  }

  /** Other processes holding this database or its WAL open (fail closed: a sentinel on doubt). */
  findForeignHolders(): Promise<ForeignHolder[]> {
    return this.#settings.scanner({ databasePath: this.#settings.filePath });
  }

  /**
   * Rebuilds the FTS index in a worker thread. Returns 1 when rebuilt and 0 when deferred:
   * another process holds the database (a rebuild would lock it out for the duration) or the
   * rebuild lock is busy. A failed rebuild leaves the index detached and stale, and throws.
   */
  rebuild(): Promise<number> {
    this.#rebuilding ??= this.#rebuild().finally(() => {
      this.#rebuilding = undefined;
    });
    return this.#rebuilding;
  }

  async #rebuild(): Promise<number> {
    this.#lastFtsAttemptMs = this.#settings.clock.monotonicMs();
    let holders: ForeignHolder[];
    try {
      holders = await this.findForeignHolders();
    } catch (error) {
      holders = [{ pid: -1, reason: `holder scan failed: ${(error as Error).message}` }];
    }
    if (holders.length > 0) {
      const description = describeHolders(holders);
      this.#settings.logger.warn(ERROR_MESSAGES.ftsRebuildSkipped(description));
      await this.#recordDeferral(holders);
      return 0;
    }
    const lock = await acquireRebuildLock({
      lockPath: `${this.#settings.filePath}.fts_rebuild.lock`,
      timeoutMs: this.#settings.rebuildLockTimeoutMs,
      clock: this.#settings.clock,
      sleep: this.#settings.sleep,
    });
    if (!lock) return 0;
    try {
      await rebuildFtsInWorker({
        databasePath: this.#settings.filePath,
        statements: ftsMigrationStatements(),
        clearKeys: [FTS_STALE_KEY, FTS_REBUILD_DEFERRAL_KEY],
        busyTimeoutMs: Math.max(
          this.#settings.busyTimeoutMs,
          this.#settings.writePatienceSeconds * 1000,
        ),
      });
      return 1;
    } catch (error) {
      // The worker rolled back; make sure the index stays detached and flagged.
      if (!this.#isClosed()) {
        const reason = `rebuild failed: ${(error as Error).message}`;
        await withWritePatience(
          () => this.#context.writeAttempt(() => enterFtsFailOpen(this.#context, reason)),
          {
            patienceSeconds: this.#settings.writePatienceSeconds,
            clock: this.#settings.clock,
            sleep: this.#settings.sleep,
          },
        ).catch(() => undefined);
      }
      throw new SessionStoreError({
        code: 'fts_rebuild_failed',
        message: `FTS rebuild failed: ${(error as Error).message}`,
        cause: error,
      });
    } finally {
      await lock.release();
    }
  }

  async #recordDeferral(holders: readonly ForeignHolder[]): Promise<void> {
    const now = this.#settings.clock.now();
    await this.#write((context) => {
      const previous = readMeta(context, FTS_REBUILD_DEFERRAL_KEY);
      const parsed = v.safeParse(DeferralSchema, parseJson(previous));
      const firstSeen = parsed.success ? parsed.output.firstSeen : now;
      const attempts = parsed.success ? parsed.output.attempts : 0;
      writeMeta(
        context,
        FTS_REBUILD_DEFERRAL_KEY,
        JSON.stringify({
          firstSeen,
          lastSeen: now,
          attempts: attempts + 1,
          holderPids: holders.map((holder) => holder.pid),
        }),
      );
    });
  }

  /** Deferred recovery for housekeeping loops: only when stale, at most once per cooldown (300 s). */
  async retryDeferred(): Promise<number> {
    if (!isFtsStale(this.#context)) return 0;
    const last = this.#lastFtsAttemptMs;
    if (
      last !== undefined &&
      this.#settings.clock.monotonicMs() - last < this.#settings.ftsRetryCooldownMs
    )
      return 0;
    return this.rebuild().catch(() => 0);
  }
}
