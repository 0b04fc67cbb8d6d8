/**
 * Delivery ids seen recently (a TTL set with a size cap, oldest evicted first): a sender's retry of
 * a delivery it already made is answered `duplicate` instead of running twice.
 */
export class IdempotencyCache {
  readonly #seen = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? 3_600_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  has(key: string): boolean {
    const at = this.#seen.get(key);
    if (at === undefined) return false;
    if (this.#now() - at >= this.#ttlMs) {
      this.#seen.delete(key);
      return false;
    }
    return true;
  }

  /** Forgets `key` (a delivery that was not taken after all). */
  delete(key: string): void {
    this.#seen.delete(key);
  }

  /** Remembers `key`; false when it was already there (a duplicate). */
  add(key: string): boolean {
    if (this.has(key)) return false;
    this.#seen.set(key, this.#now());
    while (this.#seen.size > this.#maxEntries) {
      const oldest = this.#seen.keys().next().value;
      if (oldest === undefined) break;
      this.#seen.delete(oldest);
    }
    return true;
  }
}
