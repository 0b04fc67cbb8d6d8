import type { Transaction } from 'better-sqlite3';
import { enterFtsFailOpen } from './fts.js';
import { CHECKPOINT_EVERY_WRITES } from './limits.js';
import { normalizeStoreError } from './normalize-error.js';
import { isFtsIndexFailure, sqliteErrorMessage } from './sqlite-errors.js';
import type { StoreContext } from './store-context.js';
import type { StoreSettings } from './store-settings.js';
import { withWritePatience } from './write-patience.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface StoreWriterOptions {
  readonly context: StoreContext;
  readonly settings: StoreSettings;
  /** Throws `store_closed` once the store is closed. */
  readonly assertOpen: () => void;
  /** A PASSIVE checkpoint (run every `CHECKPOINT_EVERY_WRITES` writes). */
  readonly checkpoint: () => void;
  /** Runs after each committed write (the FTS catch-up's scheduling); must not throw. */
  readonly afterCommit?: () => void;
}

/**
 * The store's write path. Each write is one short BEGIN IMMEDIATE transaction per attempt,
 * retried on awaited timers while another process holds the lock (write patience). Writes run
 * one at a time (a queue): while the lock is held elsewhere only the head of the queue polls, so
 * the event loop never runs several attempts back to back. Patience counts from the call, queue
 * time included. A broken FTS index fails open instead of failing the write.
 */
export class StoreWriter {
  readonly #context: StoreContext;
  readonly #settings: StoreSettings;
  readonly #assertOpen: () => void;
  readonly #checkpoint: () => void;
  readonly #afterCommit: () => void;
  #queued = 0;
  #tail: Promise<void> = Promise.resolve();
  #writesSinceCheckpoint = 0;
  #commits = 0;
  /**
   * One transaction function for every write: better-sqlite3 builds four wrapper functions each
   * time `db.transaction()` is called (about 15 µs a write, measured); calling one with the
   * write's work as its argument costs nothing extra.
   */
  readonly #transaction: Transaction<(work: (context: StoreContext) => unknown) => unknown>;

  constructor(options: StoreWriterOptions) {
    this.#context = options.context;
    this.#settings = options.settings;
    this.#assertOpen = options.assertOpen;
    this.#checkpoint = options.checkpoint;
    this.#afterCommit = options.afterCommit ?? (() => undefined);
    this.#transaction = options.context.db.transaction((work) => work(options.context));
  }

  /** How many write transactions this store has committed (see `SessionStore.contentVersion`). */
  get commits(): number {
    return this.#commits;
  }

  /** Called by a checkpoint from elsewhere (the timer), so the count restarts. */
  checkpointed(): void {
    this.#writesSinceCheckpoint = 0;
  }

  /**
   * One write attempt now, outside the queue and without patience: SQLITE_BUSY is thrown while
   * another connection holds the lock. For the FTS catch-up, which is simply tried again later. It
   * runs between two of the queue's attempts, never inside one (both are synchronous), and is not
   * counted in `commits`: indexing changes no result the store returns (a search answers the same
   * before and after it), so a cache kept under `contentVersion()` stays valid.
   */
  attemptNow<T>(work: (context: StoreContext) => T): T {
    this.#assertOpen();
    this.#settings.fileIdentity.assertUnchanged();
    return this.#context.writeAttempt(() => this.#transaction.immediate(work) as T);
  }

  write<T>(
    work: (context: StoreContext) => T,
    patienceSeconds = this.#settings.writePatienceSeconds,
  ): Promise<T> {
    this.#assertOpen();
    const startedMs = this.#settings.clock.monotonicMs();
    const run = async (): Promise<T> => {
      try {
        return await this.#writeNow(work, patienceSeconds, startedMs);
      } catch (error) {
        throw normalizeStoreError(error);
      } finally {
        this.#queued -= 1;
      }
    };
    this.#queued += 1;
    // An idle queue starts at once, so an uncontended write costs no extra turn of the loop. A
    // queued write lets the event loop turn first, so a burst of writes released together (a
    // lock let go) is spread over several turns instead of running as one long task.
    const result = this.#queued === 1 ? run() : this.#tail.then(nextTurn).then(run);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  async #writeNow<T>(
    work: (context: StoreContext) => T,
    patienceSeconds: number,
    startedMs: number,
  ): Promise<T> {
    this.#assertOpen();
    const context = this.#context;
    const transaction = this.#transaction;
    const patience = {
      patienceSeconds,
      startedMs,
      clock: this.#settings.clock,
      sleep: this.#settings.sleep,
    };
    const attempt = () => {
      // Never write to a file that is no longer the one at this path (replaced or unlinked).
      this.#settings.fileIdentity.assertUnchanged();
      return context.writeAttempt(() => transaction.immediate(work) as T);
    };
    let result: T;
    try {
      result = await withWritePatience(attempt, patience);
    } catch (error) {
      // A broken search index must never cost a transcript write (or a delete): detach the
      // index (fail open), then run the same transaction again.
      if (!isFtsIndexFailure(error)) throw error;
      const reason = sqliteErrorMessage(error);
      await withWritePatience(
        () => context.writeAttempt(() => enterFtsFailOpen(context, reason)),
        patience,
      );
      this.#settings.logger.warn(
        `FTS index unusable (${reason}); search falls back to LIKE until rebuilt`,
      );
      result = await withWritePatience(attempt, patience);
    }
    this.#commits += 1;
    this.#writesSinceCheckpoint += 1;
    if (this.#writesSinceCheckpoint >= CHECKPOINT_EVERY_WRITES) this.#checkpoint();
    this.#afterCommit();
    return result;
  }
}
