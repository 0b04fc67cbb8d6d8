import type { Database, Statement } from 'better-sqlite3';
import type { Clock, Sleep } from './clock.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { isBusyError } from './sqlite-errors.js';

export interface WritePatienceOptions {
  readonly patienceSeconds: number;
  readonly clock: Clock;
  readonly sleep: Sleep;
  readonly random?: () => number;
  /** When the caller started waiting (monotonic ms); defaults to now. */
  readonly startedMs?: number;
}

/**
 * The first retries come quickly (1, 2, 4 ms) so a lock that is only being released (another
 * process committing) costs almost nothing; after them the jitter below spreads competing writers.
 */
export const QUICK_RETRY_DELAYS_MS = [1, 2, 4] as const;

/**
 * Runs `attempt` (one short synchronous transaction) until it stops failing with SQLITE_BUSY or
 * the patience runs out. The wait between attempts is an awaited timer, never a synchronous sleep,
 * so a held lock in another process never blocks this event loop. After a few quick retries,
 * jitter spreads competing writers: 20–150 ms during the first 2 s, 250–1000 ms after.
 */
export async function withWritePatience<T>(
  attempt: () => T,
  options: WritePatienceOptions,
): Promise<T> {
  const random = options.random ?? Math.random;
  const started = options.startedMs ?? options.clock.monotonicMs();
  for (let retry = 0; ; retry += 1) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusyError(error)) throw error;
      const elapsed = options.clock.monotonicMs() - started;
      if (elapsed >= options.patienceSeconds * 1000) {
        throw new SessionStoreError({
          code: 'database_locked',
          message: ERROR_MESSAGES.databaseLocked(options.patienceSeconds),
          cause: error,
        });
      }
      const quick = QUICK_RETRY_DELAYS_MS[retry];
      if (quick !== undefined) {
        await options.sleep(quick);
        continue;
      }
      const [low, high] = elapsed < 2000 ? [20, 150] : [250, 1000];
      await options.sleep(low + random() * (high - low));
    }
  }
}

const busyTimeoutStatements = new WeakMap<Database, Map<number, Statement>>();

function setBusyTimeout(database: Database, milliseconds: number): void {
  let statements = busyTimeoutStatements.get(database);
  if (!statements) {
    statements = new Map();
    busyTimeoutStatements.set(database, statements);
  }
  let statement = statements.get(milliseconds);
  if (!statement) {
    statement = database.prepare(`PRAGMA busy_timeout = ${Math.trunc(milliseconds)}`);
    statements.set(milliseconds, statement);
  }
  statement.get();
}

/**
 * Runs one write attempt with the short attempt busy timeout, then restores the connection's
 * read timeout. SQLite's own busy wait blocks the event loop, so an attempt may only wait a few
 * milliseconds for another process's lock; `withWritePatience` waits out the rest on a timer.
 */
export function runWriteAttempt<T>(
  database: Database,
  timeouts: { attemptMs: number; readMs: number },
  attempt: () => T,
): T {
  setBusyTimeout(database, timeouts.attemptMs);
  try {
    return attempt();
  } finally {
    setBusyTimeout(database, timeouts.readMs);
  }
}
