import { performance } from 'node:perf_hooks';

/**
 * Time as the supervisors see it. The defaults are the monotonic clock and unref'd timers; tests
 * pass a clock whose `sleep` returns at once so a backoff schedule collapses.
 */
export interface SupervisorClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Resolves after `ms`, or at once (resolving) when `signal` aborts. Never keeps the process alive. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Resolves after `ms` on an unref'd timer, or at once when `signal` aborts (never rejects). */
export function unrefSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    timer.unref();
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: SupervisorClock = {
  now: () => performance.now(),
  sleep: unrefSleep,
};

/** Where the supervisors log. Defaults to stderr; the gateway passes its own logger. */
export interface SupervisorLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

export const stderrLogger: SupervisorLogger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${message}\n`),
  error: (message, error) =>
    process.stderr.write(
      `${message}${error instanceof Error && error.stack !== undefined ? `\n${error.stack}` : ''}\n`,
    ),
};
