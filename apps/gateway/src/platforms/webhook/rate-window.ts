/**
 * A fixed-window rate limit per key: at most `limit` hits per `windowMs` window, the window
 * starting at the first hit. Monotonic time.
 */
export class FixedRateWindow {
  readonly #windows = new Map<string, { startedAt: number; count: number }>();
  readonly #windowMs: number;
  readonly #now: () => number;

  constructor(options: { windowMs?: number; now?: () => number } = {}) {
    this.#windowMs = options.windowMs ?? 60_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Counts a hit; false when `key` is over `limit` in its current window. */
  hit(key: string, limit: number): boolean {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= this.#windowMs) {
      window = { startedAt: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= limit) return false;
    window.count += 1;
    return true;
  }
}
