import { type SupervisorClock, type SupervisorLogger, stderrLogger, systemClock } from './clock.js';
import {
  messages,
  RECONNECT_WATCHER_IDLE_S,
  RECONNECT_WATCHER_INITIAL_DELAY_S,
  RECONNECT_WATCHER_PASS_GAP_S,
} from './constants.js';
import type { FailedPlatformEntry, FailedPlatformQueue } from './failed-platform-queue.js';

/**
 * What one reconnect attempt came to: `connected` (installed; leaves the queue), `retry` (a
 * retryable failure; backs off), `drop` (non-retryable, or nothing to reconnect with; leaves the
 * queue — the owner has recorded why).
 */
export type ReconnectResult =
  | { readonly status: 'connected' }
  | { readonly status: 'retry'; readonly error: string }
  | { readonly status: 'drop'; readonly reason: string };

export interface ReconnectAttempt {
  /** 1-based number of this attempt. */
  readonly attempt: number;
  readonly signal: AbortSignal;
}

export type ReconnectPlatform<TConfig> = (
  entry: Readonly<FailedPlatformEntry<TConfig>>,
  attempt: ReconnectAttempt,
) => Promise<ReconnectResult>;

export interface ReconnectWatcherOptions<TConfig> {
  readonly queue: FailedPlatformQueue<TConfig>;
  /** Builds and connects a fresh adapter (with `is_reconnect` semantics) for a queued platform. */
  readonly reconnect: ReconnectPlatform<TConfig>;
  /** The watcher returns (cleanly) once this is false. */
  readonly isRunning: () => boolean;
  /** Called once when a platform is flagged NEEDS_ATTENTION (a signal only; retries continue). */
  readonly onAttention?: (entry: Readonly<FailedPlatformEntry<TConfig>>, hours: number) => void;
  readonly clock?: SupervisorClock;
  readonly logger?: SupervisorLogger;
  readonly initialDelayS?: number;
  readonly idleS?: number;
  readonly passGapS?: number;
}

/**
 * The reconnect watcher's body, for `spawnSupervised`: after an initial delay it drains the
 * failed-platform queue — idling in 1 s steps while it is empty, otherwise one pass over a copy of
 * the queue and a pause. A failed attempt never ends the watcher; an unexpected throw does (and
 * supervision restarts it).
 */
export function createReconnectWatcher<TConfig>(
  options: ReconnectWatcherOptions<TConfig>,
): (signal: AbortSignal) => Promise<void> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  const { queue } = options;

  const reconnectOne = async (platform: string, signal: AbortSignal) => {
    const entry = queue.get(platform);
    if (entry === undefined || entry.paused) return;
    const hours = queue.checkAttention(platform);
    if (hours !== undefined) {
      logger.warn(messages.needsAttention(platform, hours, entry.attempts));
      options.onAttention?.(entry, hours);
    }
    if (!queue.isDue(platform)) return;
    const attempt = entry.attempts + 1;
    logger.info(messages.reconnecting(platform, attempt));
    let result: ReconnectResult;
    try {
      result = await options.reconnect(entry, { attempt, signal });
    } catch (error) {
      queue.recordFailure(
        platform,
        attempt,
        error instanceof Error ? error.message : String(error),
      );
      return;
    }
    if (result.status === 'retry') queue.recordFailure(platform, attempt, result.error);
    // Only the entry this attempt served: a platform that connected and failed again at once was
    // queued afresh by its owner, and that new entry is the watcher's next job, not garbage.
    else if (queue.get(platform) === entry) queue.remove(platform);
  };

  return async (signal) => {
    const live = () => options.isRunning() && !signal.aborted;
    await clock.sleep((options.initialDelayS ?? RECONNECT_WATCHER_INITIAL_DELAY_S) * 1000, signal);
    while (live()) {
      if (queue.size === 0) {
        const idleSteps = options.idleS ?? RECONNECT_WATCHER_IDLE_S;
        for (let step = 0; step < idleSteps && live() && queue.size === 0; step += 1) {
          await clock.sleep(1000, signal);
        }
        continue;
      }
      for (const platform of queue.platforms()) {
        if (!live()) return;
        await reconnectOne(platform, signal);
      }
      await clock.sleep((options.passGapS ?? RECONNECT_WATCHER_PASS_GAP_S) * 1000, signal);
    }
  };
}
