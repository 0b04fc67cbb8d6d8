import { type SupervisorClock, systemClock } from './clock.js';
import {
  RECONNECT_ATTENTION_AFTER_S,
  RECONNECT_BACKOFF_BASE_S,
  RECONNECT_BACKOFF_CAP_S,
} from './constants.js';

/** Seconds before retry `attempt` (1-based): 30, 60, 120, 240, 300, 300 … forever. */
export function reconnectBackoffS(attempt: number): number {
  return Math.min(
    RECONNECT_BACKOFF_BASE_S * 2 ** (Math.max(1, attempt) - 1),
    RECONNECT_BACKOFF_CAP_S,
  );
}

export interface FailedPlatformEntry<TConfig> {
  readonly platform: string;
  /** The platform config to reconnect with. */
  readonly config: TConfig;
  /** Attempts so far. */
  attempts: number;
  /** Monotonic ms of the next attempt. */
  nextRetry: number;
  /** Monotonic ms the platform entered the queue (continuous failure starts here). */
  queuedAt: number | undefined;
  /** Wall-clock ISO time of the first failure (display only). */
  readonly firstFailureAt: string;
  lastError: string | undefined;
  paused: boolean;
  pauseReason: string | undefined;
  /** NEEDS_ATTENTION already raised for this stretch of failure. */
  attentionFlagged: boolean;
}

export interface EnqueueOptions {
  /** Attempts already made (startup failures count 1; runtime fatals 0). */
  readonly attempts?: number;
  /** Seconds until the first retry (startup failures 30; runtime fatals 0). */
  readonly delayS?: number;
  /** Stamp `queuedAt` now (default true). */
  readonly stampQueuedAt?: boolean;
}

export interface FailedPlatformQueueOptions {
  readonly clock?: SupervisorClock;
  /** Continuous failure (s) before NEEDS_ATTENTION; ≤ 0 disables (default 7200). */
  readonly attentionAfterS?: number;
  /** Wall clock for display fields (default `Date.now`). */
  readonly wallClock?: () => number;
}

/**
 * Platforms waiting for a background reconnect. Entries keep their schedule: queueing a platform
 * that is already queued changes nothing, so a re-fatal cannot reset its backoff or attempts.
 * Failures retry forever at the 300 s cap; only a manual pause stops them.
 */
export class FailedPlatformQueue<TConfig = unknown> {
  readonly #entries = new Map<string, FailedPlatformEntry<TConfig>>();
  readonly #clock: SupervisorClock;
  readonly #wallClock: () => number;
  readonly attentionAfterS: number;

  constructor(options: FailedPlatformQueueOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#wallClock = options.wallClock ?? Date.now;
    this.attentionAfterS = options.attentionAfterS ?? RECONNECT_ATTENTION_AFTER_S;
  }

  get size(): number {
    return this.#entries.size;
  }

  has(platform: string): boolean {
    return this.#entries.has(platform);
  }

  get(platform: string): FailedPlatformEntry<TConfig> | undefined {
    return this.#entries.get(platform);
  }

  /** Queued platform names, in queueing order. */
  platforms(): string[] {
    return [...this.#entries.keys()];
  }

  entries(): FailedPlatformEntry<TConfig>[] {
    return [...this.#entries.values()];
  }

  /** Queues `platform`; returns false (and changes nothing) when it is already queued. */
  enqueue(platform: string, config: TConfig, options: EnqueueOptions = {}): boolean {
    if (this.#entries.has(platform)) return false;
    const now = this.#clock.now();
    this.#entries.set(platform, {
      platform,
      config,
      attempts: options.attempts ?? 0,
      nextRetry: now + (options.delayS ?? 0) * 1000,
      queuedAt: options.stampQueuedAt === false ? undefined : now,
      firstFailureAt: new Date(this.#wallClock()).toISOString(),
      lastError: undefined,
      paused: false,
      pauseReason: undefined,
      attentionFlagged: false,
    });
    return true;
  }

  remove(platform: string): boolean {
    return this.#entries.delete(platform);
  }

  /** True when the platform is queued, not paused, and its retry time has come. */
  isDue(platform: string): boolean {
    const entry = this.#entries.get(platform);
    return entry !== undefined && !entry.paused && this.#clock.now() >= entry.nextRetry;
  }

  /** Records a failed attempt: attempts = `attempt`, next retry after the backoff. */
  recordFailure(
    platform: string,
    attempt: number,
    error: string,
  ): FailedPlatformEntry<TConfig> | undefined {
    const entry = this.#entries.get(platform);
    if (entry === undefined) return undefined;
    entry.attempts = attempt;
    entry.lastError = error;
    entry.nextRetry = this.#clock.now() + reconnectBackoffS(attempt) * 1000;
    return entry;
  }

  /**
   * Raises NEEDS_ATTENTION once per stretch of continuous failure. Returns the hours failed when it
   * was raised by this call. A missing `queuedAt` is stamped now (no flag).
   */
  checkAttention(platform: string): number | undefined {
    const entry = this.#entries.get(platform);
    if (entry === undefined || this.attentionAfterS <= 0) return undefined;
    const now = this.#clock.now();
    if (entry.queuedAt === undefined) {
      entry.queuedAt = now;
      return undefined;
    }
    const queuedS = (now - entry.queuedAt) / 1000;
    if (entry.attentionFlagged || queuedS < this.attentionAfterS) return undefined;
    entry.attentionFlagged = true;
    return queuedS / 3600;
  }

  /** Manual pause (`/platform pause`): idempotent, the first reason is kept. */
  pause(platform: string, reason: string): boolean {
    const entry = this.#entries.get(platform);
    if (entry === undefined) return false;
    if (!entry.paused) {
      entry.paused = true;
      entry.pauseReason = reason;
    }
    return true;
  }

  /** Clears a pause, resets attempts and makes the platform due now. */
  resume(platform: string): boolean {
    const entry = this.#entries.get(platform);
    if (entry === undefined) return false;
    entry.paused = false;
    entry.pauseReason = undefined;
    entry.attempts = 0;
    entry.nextRetry = this.#clock.now();
    return true;
  }
}
