import { type SupervisorClock, type SupervisorLogger, stderrLogger, systemClock } from './clock.js';
import { messages, RELAY_DISABLED_CODE } from './constants.js';
import { FailedPlatformQueue } from './failed-platform-queue.js';
import {
  type AdapterFatalError,
  ConnectTimeoutError,
  connectWithTimeout,
  type PlatformAdapter,
} from './platform-adapter.js';
import { createPlatformRecovery, type OnAllAdaptersDown } from './platform-recovery.js';
import { createReconnectWatcher, type ReconnectResult } from './reconnect-watcher.js';
import {
  createReconnectWatcherKeeper,
  type ReconnectWatcherKeeper,
} from './reconnect-watcher-keeper.js';
import type { SupervisedTask } from './supervised-task.js';

/** Default connect budget (s) per platform (`HERMES_GATEWAY_PLATFORM_CONNECT_TIMEOUT`). */
export const DEFAULT_PLATFORM_CONNECT_TIMEOUT_S = 30;
/** Default disconnect budget (s) (`HERMES_GATEWAY_ADAPTER_DISCONNECT_TIMEOUT`). */
export const DEFAULT_ADAPTER_DISCONNECT_TIMEOUT_S = 5;
/** A platform that failed at startup is first retried after this many seconds. */
export const STARTUP_RETRY_DELAY_S = 30;

/** Every state a platform of the fleet can be in (`status()`), e.g. one series each in metrics. */
export const PLATFORM_FLEET_STATES = [
  'connecting',
  'connected',
  'retrying',
  'fatal',
  'disabled',
  'stopped',
] as const;
export type PlatformState = (typeof PLATFORM_FLEET_STATES)[number];

export interface PlatformStatus {
  readonly platform: string;
  readonly state: PlatformState;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  /** Reconnect attempts of the current stretch of failure. */
  readonly attempts: number;
  /** Seconds until the next reconnect attempt, while queued. */
  readonly nextRetryInS: number | null;
  readonly paused: boolean;
  readonly needsAttention: boolean;
  /** Reconnect attempts since the gateway started (every stretch). */
  readonly reconnectAttempts: number;
  /** Successful reconnects since the gateway started. */
  readonly reconnects: number;
}

export interface AdapterHooks {
  /**
   * A connected adapter calls this when it fails for good (the poller cannot reach the platform,
   * the credentials were revoked, …). The fleet removes it, queues the platform when the error is
   * retryable and disconnects it.
   */
  reportFatal(error: AdapterFatalError): void;
}

export interface StartupSummary {
  readonly connected: readonly string[];
  /** Retryable failures, queued for the reconnect watcher. */
  readonly queued: readonly string[];
  /** Platforms whose adapter reported `relay_disabled`: switched off, not retried, not fatal. */
  readonly disabled: readonly string[];
  /** Non-retryable failures (bad credentials, no adapter). */
  readonly fatal: readonly { readonly platform: string; readonly error: AdapterFatalError }[];
  /**
   * Only non-retryable failures and nothing connected: the configuration cannot work, so the
   * service manager should not restart the gateway (exit 78, `startup_failed`).
   */
  readonly onlyFatal: boolean;
}

export interface NoAdaptersLeftEvent {
  readonly retryable: boolean;
  readonly reason: string;
}

export interface PlatformFleetOptions<TConfig> {
  /** The enabled platforms and the config each reconnects with. */
  readonly platforms: ReadonlyMap<string, TConfig>;
  /** Builds a fresh adapter (every connect and reconnect gets a new one); undefined = unavailable. */
  readonly createAdapter: (
    platform: string,
    config: TConfig,
    hooks: AdapterHooks,
  ) => PlatformAdapter | undefined;
  /** A platform just connected (at startup or by the watcher): redeliver, replay notices, resume. */
  readonly onConnected?: (
    platform: string,
    adapter: PlatformAdapter,
    info: { readonly isReconnect: boolean },
  ) => void;
  /** A retryable platform was lost without entering the queue: exit for the service manager. */
  readonly onPlatformLost: (event: { platform: string; exitReason: string }) => void;
  /**
   * The last adapter went down and nothing is queued: retryable ⇒ exit with failure so the service
   * manager restarts the gateway; otherwise exit cleanly. Not called with `stay_alive`.
   */
  readonly onNoAdaptersLeft?: (event: NoAdaptersLeftEvent) => void;
  readonly onAllAdaptersDown?: OnAllAdaptersDown;
  /** Per-platform connect budget (s); ≤ 0 = unbounded. */
  readonly connectTimeoutS?: (platform: string, phase: 'startup' | 'reconnect') => number;
  readonly disconnectTimeoutS?: number;
  readonly startupRetryDelayS?: number;
  readonly attentionAfterS?: number;
  readonly clock?: SupervisorClock;
  readonly logger?: SupervisorLogger;
  /** Multiplies connect and disconnect budgets (tests collapse time with a scaled clock). */
  readonly timeScale?: number;
  /** Watcher timings (s): initial delay, empty-queue idle steps, gap between passes. */
  readonly watcher?: {
    readonly initialDelayS?: number;
    readonly idleS?: number;
    readonly passGapS?: number;
    readonly slowRetryS?: number;
  };
  /** Sees every watcher lifetime (for tests and metrics). */
  readonly onWatcherSpawn?: (task: SupervisedTask) => void;
}

export interface PlatformFleet {
  /** Connects every platform concurrently and classifies each outcome. */
  start(): Promise<StartupSummary>;
  /** The live adapter of a platform (undefined while it is queued or down). */
  adapter(platform: string): PlatformAdapter | undefined;
  connected(): string[];
  status(): PlatformStatus[];
  /** The reconnect watcher keeper (for `/platform` commands and tests). */
  readonly keeper: ReconnectWatcherKeeper;
  readonly queue: FailedPlatformQueue<unknown>;
  /** Marks the fleet as stopping: no fatal error ends the gateway from now on. */
  beginShutdown(): void;
  /** Stops the watcher and disconnects every adapter, each bounded by the disconnect budget. */
  stop(): Promise<void>;
}

interface Slot {
  state: PlatformState;
  error: AdapterFatalError | undefined;
  reconnectAttempts: number;
  reconnects: number;
}

/** A relay switched off is not cured by reconnecting, whatever its `retryable` flag says. */
function isDisabled(error: AdapterFatalError | undefined): boolean {
  return error?.code === RELAY_DISABLED_CODE;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function bounded(work: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  if (!(timeoutMs > 0)) {
    await work.catch(() => {});
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([work.then(() => true).catch(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The gateway's adapter lifecycle (reference §4 and §8): start every platform concurrently and
 * classify it (connected / queued for retry / fatal); handle a connected adapter's fatal error
 * (remove it, queue it before any disconnect when retryable, disconnect within a budget, then the
 * stranded and none-left checks); reconnect queued platforms through the reconnect watcher (fresh
 * adapter, `isReconnect: true`), kept alive by the watcher keeper — never a restart loop.
 */
export function createPlatformFleet<TConfig>(
  options: PlatformFleetOptions<TConfig>,
): PlatformFleet {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  const scale = options.timeScale ?? 1;
  const disconnectMs =
    (options.disconnectTimeoutS ?? DEFAULT_ADAPTER_DISCONNECT_TIMEOUT_S) * 1000 * scale;
  const connectTimeoutS = options.connectTimeoutS ?? (() => DEFAULT_PLATFORM_CONNECT_TIMEOUT_S);
  const queue = new FailedPlatformQueue<TConfig>({
    clock,
    ...(options.attentionAfterS === undefined ? {} : { attentionAfterS: options.attentionAfterS }),
  });
  const installed = new Map<string, PlatformAdapter>();
  const slots = new Map<string, Slot>();
  const fatalHandlers = new Set<Promise<void>>();
  let running = false;
  let shuttingDown = false;
  let stopped = false;
  const lifetime = new AbortController();
  // Connects under way (startup and watcher): stop() cancels them through `lifetime` and waits for
  // each to settle — disposed of, never installed — so nothing is left running after it.
  const connectsInFlight = new Set<Promise<unknown>>();
  const tracked = <T>(work: Promise<T>): Promise<T> => {
    connectsInFlight.add(work);
    void work.then(
      () => connectsInFlight.delete(work),
      () => connectsInFlight.delete(work),
    );
    return work;
  };

  for (const platform of options.platforms.keys())
    slots.set(platform, {
      state: 'connecting',
      error: undefined,
      reconnectAttempts: 0,
      reconnects: 0,
    });
  const slot = (platform: string): Slot => {
    let found = slots.get(platform);
    if (!found) {
      found = { state: 'connecting', error: undefined, reconnectAttempts: 0, reconnects: 0 };
      slots.set(platform, found);
    }
    return found;
  };

  const dispose = (adapter: PlatformAdapter) =>
    bounded(
      Promise.resolve().then(() => adapter.disconnect()),
      disconnectMs,
    );

  const install = (platform: string, adapter: PlatformAdapter, isReconnect: boolean) => {
    installed.set(platform, adapter);
    // Leave the queue as the adapter goes live (reference: publish, then remove the entry), so a
    // fatal from here on queues the platform afresh instead of finding the old entry — which the
    // watcher is about to drop — and leaving the platform neither connected nor queued.
    if (isReconnect) queue.remove(platform);
    const entry = slot(platform);
    entry.state = 'connected';
    entry.error = undefined;
    if (isReconnect) entry.reconnects += 1;
    try {
      options.onConnected?.(platform, adapter, { isReconnect });
    } catch (error) {
      logger.error(`onConnected hook for ${platform} failed: ${describe(error)}`, error);
    }
  };

  // A fatal reported before the adapter is installed (while its connect is still settling) would be
  // ignored as stale; it is kept here so a connect that then resolves true counts as failed.
  const reportedBeforeInstall = new WeakMap<PlatformAdapter, AdapterFatalError>();
  const build = (platform: string, config: TConfig): PlatformAdapter | undefined => {
    let adapter: PlatformAdapter | undefined;
    adapter = options.createAdapter(platform, config, {
      reportFatal: (error) => {
        if (!adapter) return;
        if (installed.get(platform) !== adapter && !reportedBeforeInstall.has(adapter))
          reportedBeforeInstall.set(adapter, error);
        handleFatal(platform, adapter, error);
      },
    });
    return adapter;
  };
  /** True connects whose adapter already reported a fatal error are failures. */
  const connectedAlive = (ok: boolean, adapter: PlatformAdapter) =>
    ok && !reportedBeforeInstall.has(adapter);
  const failureOf = (adapter: PlatformAdapter) =>
    reportedBeforeInstall.get(adapter) ?? adapter.fatalError;

  const keeper: ReconnectWatcherKeeper = createReconnectWatcherKeeper({
    watcher: createReconnectWatcher({
      queue,
      isRunning: () => running,
      clock,
      logger,
      reconnect: (entry, attempt) =>
        tracked(reconnect(entry.platform, entry.config, attempt.signal)),
      ...(options.watcher?.initialDelayS === undefined
        ? {}
        : { initialDelayS: options.watcher.initialDelayS }),
      ...(options.watcher?.idleS === undefined ? {} : { idleS: options.watcher.idleS }),
      ...(options.watcher?.passGapS === undefined ? {} : { passGapS: options.watcher.passGapS }),
    }),
    queuedPlatforms: () => queue.platforms(),
    isRunning: () => running,
    clock,
    logger,
    ...(options.watcher?.slowRetryS === undefined
      ? {}
      : { slowRetryS: options.watcher.slowRetryS }),
    ...(options.onWatcherSpawn ? { onSpawn: options.onWatcherSpawn } : {}),
  });

  const recovery = createPlatformRecovery<TConfig>({
    queue,
    logger,
    ensureWatcherRunning: () => {
      keeper.ensureRunning();
    },
    onPlatformLost: (event) => options.onPlatformLost(event),
    ...(options.onAllAdaptersDown ? { onAllAdaptersDown: options.onAllAdaptersDown } : {}),
  });

  const reconnect = async (
    platform: string,
    config: TConfig,
    signal: AbortSignal,
  ): Promise<ReconnectResult> => {
    const entry = slot(platform);
    entry.reconnectAttempts += 1;
    let adapter: PlatformAdapter | undefined;
    try {
      adapter = build(platform, config);
    } catch (error) {
      entry.state = 'retrying';
      return { status: 'retry', error: describe(error) };
    }
    if (!adapter) {
      entry.state = 'fatal';
      entry.error = {
        code: 'adapter_unavailable',
        message: `No adapter available for enabled ${platform}; check the plugin, dependencies, and credentials.`,
        retryable: false,
      };
      return { status: 'drop', reason: entry.error.message };
    }
    try {
      const ok = await connectWithTimeout(adapter, {
        isReconnect: true,
        timeoutS: connectTimeoutS(platform, 'reconnect'),
        signal: AbortSignal.any([signal, lifetime.signal]),
        scale,
      });
      if (connectedAlive(ok, adapter) && running) {
        install(platform, adapter, true);
        return { status: 'connected' };
      }
      const fatal = failureOf(adapter);
      await dispose(adapter);
      if (!running) return { status: 'retry', error: 'gateway stopping' };
      if (fatal && isDisabled(fatal)) {
        entry.state = 'disabled';
        entry.error = fatal;
        logger.warn(`Reconnect ${platform}: ${fatal.message} (${fatal.code}); platform disabled.`);
        return { status: 'drop', reason: fatal.message };
      }
      if (fatal && !fatal.retryable) {
        entry.state = 'fatal';
        entry.error = fatal;
        logger.error(`Reconnect ${platform}: ${fatal.message} (${fatal.code}); giving up on it.`);
        return { status: 'drop', reason: fatal.message };
      }
      entry.state = 'retrying';
      entry.error = fatal ?? { code: 'connect_failed', message: 'connect failed', retryable: true };
      return { status: 'retry', error: entry.error.message };
    } catch (error) {
      await dispose(adapter);
      if (!running) return { status: 'retry', error: 'gateway stopping' };
      entry.state = 'retrying';
      entry.error = {
        code: error instanceof ConnectTimeoutError ? 'connect_timeout' : 'connect_error',
        message: describe(error),
        retryable: true,
      };
      return { status: 'retry', error: describe(error) };
    }
  };

  function handleFatal(platform: string, adapter: PlatformAdapter, error: AdapterFatalError) {
    // relay_disabled: `disabled`, never queued, and as a last adapter a clean exit, not a restart.
    const disabled = isDisabled(error);
    const retryable = error.retryable && !disabled;
    const work = (async () => {
      // A stale adapter (already replaced or never installed) speaks for nobody.
      if (installed.get(platform) !== adapter) return;
      logger.warn(`Fatal ${platform} adapter error (${error.code}): ${error.message}`);
      const entry = slot(platform);
      entry.state = disabled ? 'disabled' : retryable ? 'retrying' : 'fatal';
      entry.error = error;
      // Remove first (a second fatal cannot double-disconnect), queue before any await.
      installed.delete(platform);
      const config = options.platforms.get(platform);
      if (!shuttingDown) recovery.queueRetryableFatal({ platform, retryable: retryable, config });
      await dispose(adapter);
      if (shuttingDown) return;
      recovery.checkStranded({
        platform,
        retryable: retryable,
        connected: installed.has(platform),
        shuttingDown,
      });
      if (installed.size === 0 && queue.size === 0) {
        if (retryable && options.onAllAdaptersDown === 'stay_alive') {
          keeper.ensureRunning();
          return;
        }
        const reason = error.message || 'All messaging adapters disconnected';
        logger.error(
          retryable
            ? 'No connected messaging platforms remain. Shutting down gateway for service restart.'
            : 'No connected messaging platforms remain. Shutting down gateway cleanly.',
        );
        options.onNoAdaptersLeft?.({ retryable: retryable, reason });
      } else if (installed.size === 0) {
        logger.warn(
          'No connected messaging platforms remain; gateway staying alive, watcher will retry in background.',
        );
      }
    })().catch((failure: unknown) => {
      logger.error(`Fatal-error handling for ${platform} failed: ${describe(failure)}`, failure);
      const config = options.platforms.get(platform);
      if (!shuttingDown) recovery.queueRetryableFatal({ platform, retryable: retryable, config });
    });
    fatalHandlers.add(work);
    void work.finally(() => fatalHandlers.delete(work));
  }

  const startOne = async (
    platform: string,
    config: TConfig,
  ): Promise<{
    platform: string;
    /** `stopped`: the fleet stopped while it was connecting (nothing installed or queued). */
    outcome: 'connected' | 'queued' | 'fatal' | 'disabled' | 'stopped';
    error?: AdapterFatalError;
  }> => {
    const entry = slot(platform);
    entry.state = 'connecting';
    let adapter: PlatformAdapter | undefined;
    try {
      adapter = build(platform, config);
    } catch (error) {
      adapter = undefined;
      entry.error = { code: 'adapter_error', message: describe(error), retryable: false };
    }
    if (!adapter) {
      entry.state = 'fatal';
      entry.error ??= {
        code: 'adapter_unavailable',
        message: `No adapter available for enabled ${platform}; check the plugin, dependencies, and credentials.`,
        retryable: false,
      };
      return { platform, outcome: 'fatal', error: entry.error };
    }
    let failure: AdapterFatalError;
    try {
      const ok = await connectWithTimeout(adapter, {
        isReconnect: false,
        timeoutS: connectTimeoutS(platform, 'startup'),
        signal: lifetime.signal,
        scale,
      });
      if (connectedAlive(ok, adapter) && running) {
        install(platform, adapter, false);
        return { platform, outcome: 'connected' };
      }
      failure = failureOf(adapter) ?? {
        code: 'connect_failed',
        message: `${platform} failed to connect`,
        retryable: true,
      };
    } catch (error) {
      failure = {
        code: error instanceof ConnectTimeoutError ? 'connect_timeout' : 'connect_error',
        message: describe(error),
        retryable: true,
      };
    }
    await dispose(adapter);
    if (!running) {
      entry.state = 'stopped';
      return { platform, outcome: 'stopped' };
    }
    entry.error = failure;
    if (isDisabled(failure)) {
      entry.state = 'disabled';
      logger.warn(`${platform} is disabled: ${failure.message} (${failure.code})`);
      return { platform, outcome: 'disabled' };
    }
    if (!failure.retryable) {
      entry.state = 'fatal';
      logger.error(`${platform} failed to connect: ${failure.message} (${failure.code})`);
      return { platform, outcome: 'fatal', error: failure };
    }
    entry.state = 'retrying';
    queue.enqueue(platform, config, {
      attempts: 1,
      delayS: options.startupRetryDelayS ?? STARTUP_RETRY_DELAY_S,
    });
    const queued = queue.get(platform);
    if (queued) queued.lastError = failure.message;
    logger.warn(
      `${platform} failed to connect (${failure.message}); ${messages.platformQueued(platform)}`,
    );
    return { platform, outcome: 'queued', error: failure };
  };

  return {
    keeper,
    queue: queue as FailedPlatformQueue<unknown>,
    async start() {
      if (stopped) return { connected: [], queued: [], disabled: [], fatal: [], onlyFatal: false };
      running = true;
      const results = await Promise.all(
        [...options.platforms].map(([platform, config]) => tracked(startOne(platform, config))),
      );
      const connected = results.filter((r) => r.outcome === 'connected').map((r) => r.platform);
      const queued = results.filter((r) => r.outcome === 'queued').map((r) => r.platform);
      const disabled = results.filter((r) => r.outcome === 'disabled').map((r) => r.platform);
      const fatal = results
        .filter((r) => r.outcome === 'fatal')
        .map((r) => ({ platform: r.platform, error: r.error as AdapterFatalError }));
      if (queued.length > 0 && running) keeper.ensureRunning();
      return {
        connected,
        queued,
        disabled,
        fatal,
        onlyFatal: fatal.length > 0 && connected.length === 0 && queued.length === 0,
      };
    },
    adapter: (platform) => installed.get(platform),
    connected: () => [...installed.keys()],
    status() {
      const now = clock.now();
      return [...slots].map(([platform, entry]) => {
        const queued = queue.get(platform);
        const state: PlatformState =
          shuttingDown && !installed.has(platform) ? 'stopped' : entry.state;
        return {
          platform,
          state,
          errorCode: entry.error?.code ?? null,
          errorMessage: entry.error?.message ?? null,
          attempts: queued?.attempts ?? 0,
          nextRetryInS: queued
            ? Math.max(0, Math.round((queued.nextRetry - now) / 100) / 10)
            : null,
          paused: queued?.paused ?? false,
          needsAttention: queued?.attentionFlagged ?? false,
          reconnectAttempts: entry.reconnectAttempts,
          reconnects: entry.reconnects,
        };
      });
    },
    beginShutdown() {
      shuttingDown = true;
    },
    async stop() {
      shuttingDown = true;
      running = false;
      stopped = true;
      lifetime.abort(new Error('platform fleet stopping'));
      keeper.stop();
      await Promise.allSettled([...connectsInFlight, ...fatalHandlers]);
      const adapters = [...installed];
      installed.clear();
      await Promise.all(
        adapters.map(async ([platform, adapter]) => {
          const done = await dispose(adapter);
          if (!done) logger.warn(`${platform} disconnect timed out; moving on`);
          slot(platform).state = 'stopped';
        }),
      );
    },
  };
}
