import { DEFAULT_RATE_LIMIT_MAX_REQUESTS, DEFAULT_RATE_LIMIT_WINDOW_SECONDS } from './constants.js';

export interface ArtifactRateLimiterOptions {
  /** Requests one key may make per window. Default 30. */
  readonly maxRequests?: number;
  /** Window length in seconds. Default 60. */
  readonly windowSeconds?: number;
  /** Monotonic clock in milliseconds. Default `performance.now()`. */
  readonly now?: () => number;
}

/**
 * A sliding-window limiter per key (e.g. `upload:<principal>`): a request is allowed when fewer
 * than `maxRequests` were allowed for that key within the last `windowSeconds`.
 */
export class ArtifactRateLimiter {
  readonly maxRequests: number;
  readonly windowSeconds: number;
  readonly #now: () => number;
  readonly #hits = new Map<string, number[]>();

  constructor(options: ArtifactRateLimiterOptions = {}) {
    this.maxRequests = Math.max(
      1,
      Math.floor(
        Number.isFinite(options.maxRequests)
          ? (options.maxRequests as number)
          : DEFAULT_RATE_LIMIT_MAX_REQUESTS,
      ),
    );
    this.windowSeconds =
      typeof options.windowSeconds === 'number' &&
      Number.isFinite(options.windowSeconds) &&
      options.windowSeconds > 0
        ? options.windowSeconds
        : DEFAULT_RATE_LIMIT_WINDOW_SECONDS;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Records a request for `key` and says whether it is allowed. An empty or non-string key is
   * always refused: a request that cannot be attributed is not served.
   */
  allow(key: unknown): boolean {
    if (typeof key !== 'string' || key === '') return false;
    const now = this.#now();
    const windowStart = now - this.windowSeconds * 1000;
    const recent = (this.#hits.get(key) ?? []).filter((time) => time > windowStart);
    if (recent.length >= this.maxRequests) {
      this.#hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.#hits.set(key, recent);
    this.#forgetIdleKeys(windowStart);
    return true;
  }

  /** Forgets the history of `key`, or of every key when called without one. */
  reset(key?: string): void {
    if (key === undefined) this.#hits.clear();
    else this.#hits.delete(key);
  }

  /** Keeps memory bounded by the number of keys active within one window. */
  #forgetIdleKeys(windowStart: number): void {
    for (const [key, times] of this.#hits) {
      const newest = times[times.length - 1];
      if (newest === undefined || newest <= windowStart) this.#hits.delete(key);
    }
  }
}
