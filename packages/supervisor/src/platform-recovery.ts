import { type SupervisorLogger, stderrLogger } from './clock.js';
import { messages } from './constants.js';
import type { FailedPlatformQueue } from './failed-platform-queue.js';

/** `exit` (default): a lost platform ends the gateway for the service manager; `stay_alive`: keep running. */
export type OnAllAdaptersDown = 'exit' | 'stay_alive';

export interface PlatformLostEvent {
  readonly platform: string;
  /** `<platform> adapter lost without reconnection queue`. */
  readonly exitReason: string;
}

export interface PlatformRecoveryOptions<TConfig> {
  readonly queue: FailedPlatformQueue<TConfig>;
  /** Usually `keeper.ensureRunning`. */
  readonly ensureWatcherRunning: () => void;
  /**
   * The owner's decision for a retryable platform that was lost without entering the queue: exit
   * with failure so the service manager restarts the gateway (the default policy), or stay alive.
   */
  readonly onPlatformLost: (event: PlatformLostEvent) => void;
  readonly onAllAdaptersDown?: OnAllAdaptersDown;
  readonly logger?: SupervisorLogger;
}

export interface FatalPlatform<TConfig> {
  readonly platform: string;
  readonly retryable: boolean;
  /** The platform's config; without it nothing can be reconnected. */
  readonly config: TConfig | undefined;
}

export interface StrandedCheck {
  readonly platform: string;
  readonly retryable: boolean;
  /** The platform has a live adapter installed. */
  readonly connected: boolean;
  readonly shuttingDown: boolean;
}

export interface PlatformRecovery<TConfig> {
  /**
   * Queues a platform after a fatal adapter error. Synchronous on purpose: callers run it before
   * any disconnect, so the platform can never fall between "removed" and "queued". Returns true
   * when it was newly queued.
   */
  queueRetryableFatal(fatal: FatalPlatform<TConfig>): boolean;
  /**
   * The stranded check run after fatal-error handling: a retryable platform that is neither
   * connected nor queued (and no shutdown is under way) is handed to the owner's decision — or,
   * with `stay_alive`, the watcher is kept alive. Returns true when the platform was stranded.
   */
  checkStranded(check: StrandedCheck): boolean;
}

export function createPlatformRecovery<TConfig>(
  options: PlatformRecoveryOptions<TConfig>,
): PlatformRecovery<TConfig> {
  const logger = options.logger ?? stderrLogger;
  return {
    queueRetryableFatal(fatal) {
      if (!fatal.retryable || fatal.config === undefined) return false;
      if (options.queue.has(fatal.platform)) {
        // Going fatal again while queued is exactly when the watcher may have died after
        // exhausting its budget.
        options.ensureWatcherRunning();
        return false;
      }
      options.queue.enqueue(fatal.platform, fatal.config);
      logger.info(messages.platformQueued(fatal.platform));
      options.ensureWatcherRunning();
      return true;
    },
    checkStranded(check) {
      if (!check.retryable || check.connected || check.shuttingDown) return false;
      if (options.queue.has(check.platform)) return false;
      if (options.onAllAdaptersDown === 'stay_alive') {
        logger.warn(messages.platformLostStayingAlive(check.platform));
        options.ensureWatcherRunning();
        return true;
      }
      logger.error(messages.platformLost(check.platform));
      options.onPlatformLost({
        platform: check.platform,
        exitReason: `${check.platform} adapter lost without reconnection queue`,
      });
      return true;
    },
  };
}
