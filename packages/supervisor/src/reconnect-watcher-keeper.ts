import { type SupervisorClock, type SupervisorLogger, stderrLogger, systemClock } from './clock.js';
import {
  MAX_SLOW_WATCHER_RESPAWNS,
  messages,
  RECONNECT_WATCHER_NAME,
  RECONNECT_WATCHER_SLOW_RETRY_S,
} from './constants.js';
import { type SupervisedFactory, type SupervisedTask, spawnSupervised } from './supervised-task.js';

export interface ReconnectWatcherKeeperOptions {
  /** The watcher body (usually `createReconnectWatcher(...)`). */
  readonly watcher: SupervisedFactory;
  /** Platforms still queued; the keeper's decisions depend only on this list. */
  readonly queuedPlatforms: () => readonly string[];
  /** Whether the gateway still runs. */
  readonly isRunning: () => boolean;
  /** Replaces the default give-up handling (empty queue ⇒ stay down; else the slow tier). */
  readonly onGiveUp?: (name: string) => void;
  /** Sees every watcher lifetime. */
  readonly onSpawn?: (task: SupervisedTask) => void;
  readonly clock?: SupervisorClock;
  readonly logger?: SupervisorLogger;
  /** Supervised backoff override (tests collapse it). */
  readonly backoffS?: (attempt: number) => number;
  readonly slowRetryS?: number;
  readonly maxSlowRespawns?: number;
}

export interface ReconnectWatcherKeeper {
  /** Spawns the first supervised watcher chain (idempotent, like `ensureRunning`). */
  start(): SupervisedTask | undefined;
  /**
   * Makes sure a watcher is alive or about to be: spawns a fresh supervised chain when the tracked
   * one is dead. A no-op (same task) while a watcher runs or a supervised respawn is pending.
   * Returns true when it spawned.
   */
  ensureRunning(): boolean;
  /** The latest watcher lifetime. */
  readonly task: SupervisedTask | undefined;
  /** Watcher lifetimes started so far (every chain, every respawn). */
  readonly spawnCount: number;
  /** True once the slow tier is exhausted and the loud error was logged. */
  readonly abandoned: boolean;
  /** Cancels the watcher and any pending respawn. */
  stop(): void;
}

/**
 * Keeps the reconnect watcher alive without ever becoming a restart loop. Each chain is a
 * supervised task (1 + 5 lifetimes); when a chain gives up with platforms still queued, a slow tier
 * respawns a fresh chain every 300 s at most 6 times, standing down if the queue drains or a watcher
 * is alive — at most (1 + 5) × (1 + 6) = 42 lifetimes in a silent crash loop, then one loud error.
 */
export function createReconnectWatcherKeeper(
  options: ReconnectWatcherKeeperOptions,
): ReconnectWatcherKeeper {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  const slowRetryMs = (options.slowRetryS ?? RECONNECT_WATCHER_SLOW_RETRY_S) * 1000;
  const maxSlow = options.maxSlowRespawns ?? MAX_SLOW_WATCHER_RESPAWNS;
  const lifetime = new AbortController();
  let current: SupervisedTask | undefined;
  let chain = 0;
  let spawnCount = 0;
  let abandoned = false;

  const isAlive = (task: SupervisedTask | undefined) =>
    task !== undefined && (task.state === 'running' || task.state === 'restarting');

  const spawnChain = (onChainGiveUp: () => void): SupervisedTask => {
    chain += 1;
    const thisChain = chain;
    return spawnSupervised(options.watcher, {
      name: RECONNECT_WATCHER_NAME,
      isRunning: options.isRunning,
      signal: lifetime.signal,
      clock,
      logger,
      ...(options.backoffS === undefined ? {} : { backoffS: options.backoffS }),
      onSpawn: (task) => {
        spawnCount += 1;
        current = task;
        try {
          options.onSpawn?.(task);
        } catch {
          // an observer must not break supervision
        }
      },
      onGiveUp: (name) => {
        // A chain replaced by a newer one (a fresh enqueue) no longer speaks for the watcher.
        if (thisChain !== chain) return;
        if (options.onGiveUp !== undefined) options.onGiveUp(name);
        else onChainGiveUp();
      },
    });
  };

  const scheduleSlowRespawn = (attempt: number) => {
    if (attempt >= maxSlow) {
      abandoned = true;
      logger.error(messages.watcherAbandoned(attempt, options.queuedPlatforms()));
      return;
    }
    void clock.sleep(slowRetryMs, lifetime.signal).then(() => {
      if (lifetime.signal.aborted || !options.isRunning()) return;
      const queued = options.queuedPlatforms();
      if (queued.length === 0 || isAlive(current)) return;
      logger.warn(messages.watcherSlowRespawn(queued.length, attempt + 1, maxSlow));
      spawnChain(() => onGiveUp(attempt + 1));
    });
  };

  const onGiveUp = (slowAttempt: number) => {
    if (!options.isRunning()) return;
    if (options.queuedPlatforms().length === 0) {
      logger.warn(messages.watcherExhaustedEmpty);
      return;
    }
    scheduleSlowRespawn(slowAttempt);
  };

  const ensureRunning = () => {
    if (!options.isRunning() || lifetime.signal.aborted || isAlive(current)) return false;
    if (current !== undefined) logger.warn(messages.watcherDead(current.done));
    abandoned = false;
    spawnChain(() => onGiveUp(0));
    return true;
  };

  return {
    start() {
      ensureRunning();
      return current;
    },
    ensureRunning,
    get task() {
      return current;
    },
    get spawnCount() {
      return spawnCount;
    },
    get abandoned() {
      return abandoned;
    },
    stop() {
      lifetime.abort();
      current?.abort();
    },
  };
}
