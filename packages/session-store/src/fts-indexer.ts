import { enterFtsFailOpen } from './fts.js';
import {
  FtsWatermarkError,
  indexPendingBatch,
  pendingRows,
  readFtsIndexState,
} from './fts-watermark.js';
import { FTS_CATCH_UP_DELAY_MS, FTS_INLINE_CATCH_UP_ROWS } from './limits.js';
import { isBusyError, isFtsIndexFailure, sqliteErrorMessage } from './sqlite-errors.js';
import type { StoreContext } from './store-context.js';
import type { SessionStoreLogger } from './store-settings.js';

export type CatchUpOutcome = 'done' | 'pending' | 'busy' | 'stale' | 'failed';

export interface FtsIndexerOptions {
  readonly context: StoreContext;
  readonly logger: SessionStoreLogger;
  /**
   * One write attempt now, in the store's write transaction: no waiting, SQLITE_BUSY thrown while
   * another connection holds the lock.
   */
  readonly attempt: <T>(work: (context: StoreContext) => T) => T;
  readonly isClosed: () => boolean;
}

/**
 * Indexes committed messages into FTS in batches, after their commit. A write that leaves rows
 * pending schedules one catch-up `FTS_CATCH_UP_DELAY_MS` later (an unref'd timer that later writes
 * do not push back); a write that leaves `FTS_INLINE_CATCH_UP_ROWS` pending catches up before it
 * returns, so the lag stays bounded when timers are starved. Every catch-up is one attempt: while
 * another connection holds the lock it is simply tried again later, and it never throws.
 */
export class FtsIndexer {
  readonly #context: StoreContext;
  readonly #logger: SessionStoreLogger;
  readonly #attempt: FtsIndexerOptions['attempt'];
  readonly #isClosed: () => boolean;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;

  constructor(options: FtsIndexerOptions) {
    this.#context = options.context;
    this.#logger = options.logger;
    this.#attempt = options.attempt;
    this.#isClosed = options.isClosed;
  }

  /** Pending rows right now (0 while the index is detached). */
  pending(): number {
    return pendingRows(readFtsIndexState(this.#context));
  }

  /** After each committed write: schedule a catch-up, or run one now past the inline bound. */
  afterCommit(): void {
    const pending = this.pending();
    if (pending === 0) return;
    if (pending >= FTS_INLINE_CATCH_UP_ROWS && this.catchUp() === 'done') return;
    this.#schedule(FTS_CATCH_UP_DELAY_MS);
  }

  /** Catches up before a search when rows are pending (one attempt per batch, at most `batches`). */
  catchUpIfPending(batches = 1): CatchUpOutcome {
    if (this.pending() === 0) return 'done';
    return this.catchUp(batches);
  }

  /**
   * Up to `batches` catch-up transactions, one attempt each. A broken index met on the way is
   * detached (fail open) as a write that met it would be; anything else is logged and left for the
   * next try.
   */
  catchUp(batches = 1): CatchUpOutcome {
    let outcome: CatchUpOutcome = 'pending';
    for (let batch = 0; batch < batches && outcome === 'pending'; batch += 1) {
      outcome = this.#batch();
    }
    return outcome;
  }

  /** Stops the timer (the store is closing). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #batch(): CatchUpOutcome {
    if (this.#isClosed()) return 'failed';
    try {
      const outcome = this.#attempt((context) => indexPendingBatch(context));
      this.#failing = false;
      return outcome;
    } catch (error) {
      if (isBusyError(error)) return 'busy';
      if (isFtsIndexFailure(error) || error instanceof FtsWatermarkError) {
        const reason = sqliteErrorMessage(error);
        try {
          this.#attempt((context) => enterFtsFailOpen(context, reason));
          this.#logger.warn(
            `FTS index unusable (${reason}); search falls back to LIKE until rebuilt`,
          );
          return 'stale';
        } catch {
          // Busy: the next catch-up meets the same problem and tries again.
          return 'busy';
        }
      }
      if (!this.#failing) this.#logger.warn(`FTS catch-up failed: ${sqliteErrorMessage(error)}`);
      this.#failing = true;
      return 'failed';
    }
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#isClosed()) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#onTimer();
    }, delayMs);
    this.#timer.unref();
  }

  #onTimer(): void {
    if (this.#isClosed()) return;
    let outcome: CatchUpOutcome;
    try {
      outcome = this.catchUpIfPending();
    } catch (error) {
      // A read that failed (the store closing under us): the next write schedules again.
      this.#logger.warn(`FTS catch-up failed: ${sqliteErrorMessage(error)}`);
      return;
    }
    // More batches: go on at once, letting the event loop turn between them.
    if (outcome === 'pending') this.#schedule(0);
    else if (outcome === 'busy') this.#schedule(FTS_CATCH_UP_DELAY_MS);
  }
}
