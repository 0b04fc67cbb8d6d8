import { mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
// The timers module's own functions, not the globals: fake timers installed by a test runner
// replace the globals, and a faked tick would let a healthy loop look wedged.
import { clearTimeout, setTimeout } from 'node:timers';
import { isMainThread, MessageChannel, Worker } from 'node:worker_threads';
import { writeFileAtomicSync } from '@hermes/config';
import {
  DEFAULT_EVENT_LOOP_DELAY_RESOLUTION_MS,
  DEFAULT_LOOP_WATCHDOG_EXIT_GRACE_S,
  HEARTBEAT_FILE,
  LOOP_WATCHDOG_EXIT_CODE,
  LOOP_WATCHDOG_EXIT_REASON,
  LOOP_WATCHDOG_FALLBACK_SIGNAL,
  LOOP_WATCHDOG_REPORT_DIRECTORY,
  messages,
  PROBE_WAIT_SLICE_MS,
  RUNTIME_STATUS_FILE,
} from './constants.js';
import { SupervisorError } from './errors.js';
import { hardExit } from './hard-exit.js';
import { readHostLoad } from './host-load.js';
import { answerLoopProbe, loopWatchStartsAt } from './loop-liveness-check.js';
import {
  FIRE_REGISTRY_KEY,
  SHARED_BYTES,
  SHARED_DELAY_COUNT,
  SHARED_DELAY_OFFSET,
  SHARED_DELAY_SLOTS,
  SHARED_INT_COUNT,
  SHARED_INT_SLOTS,
  SHARED_TICK_OFFSET,
} from './loop-watchdog-shared.js';
import { LOOP_WATCHDOG_WORKER_SOURCE } from './loop-watchdog-worker-source.js';
import { captureMainStack, type FireFunction, fireRegistry } from './main-thread-fire.js';
import { markRuntimeStatusExitedSync } from './runtime-status.js';

export type LoopWatchdogMode = 'exit' | 'warn';

export interface LoopWatchdogOptions {
  /** Seconds between probes (config `loop_watchdog_probe_interval_s`). */
  readonly probeIntervalS: number;
  /** Seconds the main loop has to answer a probe (config `loop_watchdog_probe_timeout_s`). */
  readonly probeTimeoutS: number;
  /** Consecutive misses before forensics and exit (config `loop_watchdog_max_strikes`). */
  readonly maxStrikes: number;
  /** `exit` (default) ends the process with code 75; `warn` only writes forensics. */
  readonly mode?: LoopWatchdogMode;
  /**
   * Seconds after arming before misses count (default 0, as the reference: the first verdict on a
   * loop wedged from the start falls `maxStrikes × (interval + timeout)` after arming).
   */
  readonly startupGraceS?: number;
  /** Seconds the worker waits for the main thread to exit before it sends a signal (default 5). */
  readonly exitGraceS?: number;
  /** Hermes home: defaults the report directory, runtime status file and heartbeat file. */
  readonly home?: string;
  /** Where forensics reports go (default `<home>/logs`, else the temp directory). */
  readonly reportDirectory?: string;
  /** `gateway_state.json` to mark `degraded` before exiting (default `<home>/gateway_state.json`). */
  readonly runtimeStatusFile?: string;
  /** Heartbeat file whose age the report records (default `<home>/state/gateway.heartbeat`). */
  readonly heartbeatFile?: string;
  /**
   * Runs synchronously on the main thread just before the exit, inside the wedged code's stack
   * (a V8 interrupt): keep it short and synchronous — e.g. SIGKILL tool process groups, write a
   * ledger row. Errors are swallowed. Not called on the signal fallback path.
   */
  readonly markExited?: (report: LoopWatchdogReport) => void;
  /**
   * Warn mode: called on the main thread once the loop turns again after a report. A throw (or an
   * async hook's rejection) is logged through `writeLine` and the watchdog keeps running.
   */
  readonly onStall?: (report: LoopWatchdogReport) => void;
  /**
   * Sampling period (ms) of the `monitorEventLoopDelay` histogram in the report (default 500). Each
   * sample wakes the loop, so a finer resolution costs idle CPU.
   */
  readonly eventLoopDelayResolutionMs?: number;
  /** Where the report's path is announced (default stderr, written synchronously). */
  readonly writeLine?: (line: string) => void;
}

export interface LoopWatchdogReport {
  readonly event: 'loop_liveness_watchdog';
  readonly mode: LoopWatchdogMode;
  readonly pid: number;
  readonly writtenAt: string;
  readonly phase: LoopWatchdogPhaseInfo | null;
  readonly strikes: number;
  readonly probeIntervalS: number;
  readonly probeTimeoutS: number;
  readonly maxStrikes: number;
  readonly lastProbeAnswerAgeS: number;
  readonly heartbeatFileAgeS: number | null;
  readonly eventLoopDelayMs: EventLoopDelaySummary;
  readonly host: { readonly load1: string; readonly ncpu: string };
  /** The main thread's JavaScript stack at the moment of the wedge, when it could be captured. */
  readonly stack: string | null;
  readonly stackSource: 'inspector-interrupt' | 'unavailable';
  readonly stackUnavailableReason?: string;
  readonly exit: { readonly code: number | null; readonly signal: string | null } | null;
}

export interface LoopWatchdogPhaseInfo {
  readonly label: string;
  /** Wall-clock ISO time the phase began (display only). */
  readonly startedAt: string;
}

/**
 * Event-loop delay figures (ms) from `monitorEventLoopDelay`. The stall in progress is not among
 * them: a delay is recorded when the loop turns again (`lastProbeAnswerAgeS` measures the stall).
 */
export interface EventLoopDelaySummary {
  /** Samples behind the figures; 0 ⇒ none taken yet, and every figure is 0. */
  readonly samples: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export interface LoopWatchdogPhase {
  /** Ends the phase; the previous label (if any) becomes current again. Idempotent. */
  end(): void;
  [Symbol.dispose](): void;
}

export interface LoopWatchdog {
  /** Labels a long-running phase so forensics say what was running. */
  phase(label: string): LoopWatchdogPhase;
  /** Runs `work` under a phase label. */
  withPhase<T>(label: string, work: () => T): T;
  /** The innermost phase label in force, or null. */
  readonly currentPhase: LoopWatchdogPhaseInfo | null;
  /** Consecutive missed windows, as the worker last counted them (reset at its next check). */
  readonly strikes: number;
  /** Liveness ticks the main loop has run since arming: its answers to the worker's windows. */
  readonly probesAnswered: number;
  /** Forensics reports written by the main thread so far (paths). */
  readonly reports: readonly string[];
  /** Disarms: no exit can happen after this returns synchronously. */
  stop(): Promise<void>;
}

let nextWatchdogId = 1;

type LoopFire = FireFunction<{ strikes: number; lastProbeAnswerAgeS: number }>;

function checkPositive(name: string, value: number | undefined, allowZero: boolean): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new SupervisorError({
      code: 'invalid_watchdog_options',
      message: `loop watchdog option ${name} must be a finite number ${allowZero ? '≥ 0' : '> 0'}, got ${value}`,
    });
  }
}

const NANOSECONDS_PER_MS = 1e6;
const DELAY_PUBLISH_INTERVAL_MS = 1000;

/**
 * Arms the event-loop liveness watchdog: an unref'd worker thread probes the main loop every
 * `probeIntervalS`; `maxStrikes` consecutive misses write forensics and (in `exit` mode) end the
 * process with exit code 75 so the service manager restarts it.
 */
export function startLoopWatchdog(options: LoopWatchdogOptions): LoopWatchdog {
  checkPositive('probeIntervalS', options.probeIntervalS, false);
  checkPositive('probeTimeoutS', options.probeTimeoutS, false);
  checkPositive('startupGraceS', options.startupGraceS, true);
  checkPositive('exitGraceS', options.exitGraceS, true);
  checkPositive('eventLoopDelayResolutionMs', options.eventLoopDelayResolutionMs, false);
  if (!Number.isInteger(options.maxStrikes) || options.maxStrikes < 1) {
    throw new SupervisorError({
      code: 'invalid_watchdog_options',
      message: `loop watchdog option maxStrikes must be an integer ≥ 1, got ${options.maxStrikes}`,
    });
  }
  const mode: LoopWatchdogMode = options.mode ?? 'exit';
  const home = options.home;
  const reportDirectory =
    options.reportDirectory ??
    (home === undefined ? os.tmpdir() : path.join(home, LOOP_WATCHDOG_REPORT_DIRECTORY));
  const runtimeStatusFile =
    options.runtimeStatusFile ??
    (home === undefined ? undefined : path.join(home, RUNTIME_STATUS_FILE));
  const heartbeatFile =
    options.heartbeatFile ?? (home === undefined ? undefined : path.join(home, HEARTBEAT_FILE));
  const writeLine =
    options.writeLine ??
    ((line: string) => {
      process.stderr.write(`${line}\n`);
    });

  const shared = new SharedArrayBuffer(SHARED_BYTES);
  const ints = new Int32Array(shared, 0, SHARED_INT_COUNT);
  const tickSlot = new BigInt64Array(shared, SHARED_TICK_OFFSET, 1);
  const delays = new Float64Array(shared, SHARED_DELAY_OFFSET, SHARED_DELAY_COUNT);
  const histogram = monitorEventLoopDelay({
    resolution: options.eventLoopDelayResolutionMs ?? DEFAULT_EVENT_LOOP_DELAY_RESOLUTION_MS,
  });
  histogram.enable();

  const id = nextWatchdogId++;
  const phases: LoopWatchdogPhaseInfo[] = [];
  const reports: string[] = [];
  let stopped = false;
  let probesAnswered = 0;

  const delaySummary = (): EventLoopDelaySummary => {
    const samples = histogram.count;
    // An empty histogram answers its lowest trackable value for every percentile and 0 for max:
    // figures that look measured but are not.
    if (samples === 0) return { samples: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
    return {
      samples,
      p50: histogram.percentile(50) / NANOSECONDS_PER_MS,
      p90: histogram.percentile(90) / NANOSECONDS_PER_MS,
      p99: histogram.percentile(99) / NANOSECONDS_PER_MS,
      max: histogram.max / NANOSECONDS_PER_MS,
      mean: histogram.mean / NANOSECONDS_PER_MS,
    };
  };
  let delaysPublishedAt = Number.NEGATIVE_INFINITY;
  const publishDelays = () => {
    const summary = delaySummary();
    delays[SHARED_DELAY_SLOTS.samples] = summary.samples;
    delays[SHARED_DELAY_SLOTS.p50] = summary.p50;
    delays[SHARED_DELAY_SLOTS.p90] = summary.p90;
    delays[SHARED_DELAY_SLOTS.p99] = summary.p99;
    delays[SHARED_DELAY_SLOTS.max] = summary.max;
    delays[SHARED_DELAY_SLOTS.mean] = summary.mean;
  };

  const host = () => {
    const load = readHostLoad();
    return { load1: load.load1, ncpu: load.cpuCount };
  };

  const heartbeatAge = (): number | null => {
    if (heartbeatFile === undefined) return null;
    try {
      return (Date.now() - statSync(heartbeatFile).mtimeMs) / 1000;
    } catch {
      return null;
    }
  };

  // Runs on the main thread as a V8 interrupt inside whatever code is hogging the loop.
  const fire: LoopFire = (payload) => {
    if (stopped) return;
    const stack = captureMainStack();
    const report: LoopWatchdogReport = {
      event: 'loop_liveness_watchdog',
      mode,
      pid: process.pid,
      writtenAt: new Date().toISOString(),
      phase: phases.at(-1) ?? null,
      strikes: payload.strikes,
      probeIntervalS: options.probeIntervalS,
      probeTimeoutS: options.probeTimeoutS,
      maxStrikes: options.maxStrikes,
      lastProbeAnswerAgeS: payload.lastProbeAnswerAgeS,
      heartbeatFileAgeS: heartbeatAge(),
      eventLoopDelayMs: delaySummary(),
      host: host(),
      stack,
      stackSource: 'inspector-interrupt',
      exit: mode === 'exit' ? { code: LOOP_WATCHDOG_EXIT_CODE, signal: null } : null,
    };
    const file = path.join(reportDirectory, `loop-watchdog-${process.pid}-${Date.now()}.json`);
    try {
      mkdirSync(reportDirectory, { recursive: true, mode: 0o700 });
      writeFileAtomicSync(file, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
      reports.push(file);
      writeLine(messages.loopWatchdogReportWritten(file));
    } catch (error) {
      writeLine(messages.loopWatchdogReportFailed((error as Error).message));
    }
    Atomics.add(ints, SHARED_INT_SLOTS.mainReports, 1);
    Atomics.notify(ints, SHARED_INT_SLOTS.mainReports);
    if (mode === 'warn') {
      const onStall = options.onStall;
      if (onStall !== undefined) {
        // The hook runs on its own turn of the loop: a throw there would be an uncaught exception
        // and end the very process warn mode exists to keep up. Log it; the watchdog carries on.
        const logFailure = (error: unknown) =>
          writeLine(
            messages.loopWatchdogOnStallFailed(
              error instanceof Error ? error.message : String(error),
            ),
          );
        setImmediate(() => {
          try {
            // An async hook's rejection would be an unhandled rejection: the same crash.
            const result: unknown = onStall(report);
            if (result instanceof Promise) result.catch(logFailure);
          } catch (error) {
            logFailure(error);
          }
        });
      }
      return;
    }
    if (stopped) return;
    try {
      options.markExited?.(report);
    } catch {
      // best effort: the exit matters more than the hook
    }
    // The hook may have stopped the watchdog; a stopped watchdog leaves no trace in the status.
    if (stopped) return;
    if (runtimeStatusFile !== undefined) {
      markRuntimeStatusExitedSync({
        file: runtimeStatusFile,
        exitCode: LOOP_WATCHDOG_EXIT_CODE,
        reason: LOOP_WATCHDOG_EXIT_REASON,
      });
    }
    if (stopped) return;
    hardExit(LOOP_WATCHDOG_EXIT_CODE);
  };
  fireRegistry<{ strikes: number; lastProbeAnswerAgeS: number }>(FIRE_REGISTRY_KEY).set(id, fire);

  // The loop's answers: an unref'd timer fires at each probe time of the grid (see
  // loop-liveness-check.ts). It runs only when the loop turns, and an answer is stamped in shared
  // memory without a notify: the worker reads it when a verdict could be due and is woken by nothing.
  // One clock for both threads: `performance.now()` has a different origin in every thread.
  const intervalMs = options.probeIntervalS * 1000;
  const timeoutMs = options.probeTimeoutS * 1000;
  const armedAt = process.hrtime.bigint();
  const watchFromMs = loopWatchStartsAt(
    Number(armedAt) / NANOSECONDS_PER_MS,
    options.startupGraceS,
  );
  let lastAnswerMs = Number(armedAt) / NANOSECONDS_PER_MS;
  Atomics.store(tickSlot, 0, armedAt);
  const onProbeTime = () => {
    const nowNs = process.hrtime.bigint();
    const now = Number(nowNs) / NANOSECONDS_PER_MS;
    const decision = answerLoopProbe({
      now,
      lastAnswerAt: Math.max(lastAnswerMs, watchFromMs),
      intervalMs,
      timeoutMs,
    });
    if (decision.answered) {
      lastAnswerMs = now;
      Atomics.store(tickSlot, 0, nowNs);
      probesAnswered += 1;
      // The shared copy only serves the signal-fallback report; once a second is fresh enough.
      if (now - delaysPublishedAt >= DELAY_PUBLISH_INTERVAL_MS) {
        delaysPublishedAt = now;
        publishDelays();
      }
    }
    if (stopped) return;
    if (decision.nextTickInMs === probeTimerMs) {
      // The common case reuses the timer (`refresh` keeps its duration): nothing allocated.
      probeTimer.refresh();
    } else {
      probeTimerMs = decision.nextTickInMs;
      probeTimer = setTimeout(onProbeTime, probeTimerMs);
      probeTimer.unref();
    }
  };
  let probeTimerMs = intervalMs;
  let probeTimer = setTimeout(onProbeTime, probeTimerMs);
  probeTimer.unref();

  const phaseChannel = new MessageChannel();
  phaseChannel.port1.unref();
  const worker = new Worker(LOOP_WATCHDOG_WORKER_SOURCE, {
    eval: true,
    // The worker needs only Node's built-ins: no preloads (`--import`, `--require` of loaders or
    // agents) started again inside it, no memory or threads spent on them.
    execArgv: [],
    transferList: [phaseChannel.port2],
    name: 'gateway-loop-liveness-watchdog',
    workerData: {
      id,
      shared,
      phasePort: phaseChannel.port2,
      intCount: SHARED_INT_COUNT,
      tickOffset: SHARED_TICK_OFFSET,
      delayOffset: SHARED_DELAY_OFFSET,
      delayCount: SHARED_DELAY_COUNT,
      intSlots: SHARED_INT_SLOTS,
      delaySlots: SHARED_DELAY_SLOTS,
      registryKey: FIRE_REGISTRY_KEY,
      // The inspector reaches the process's main thread only; armed elsewhere, it would evaluate in
      // the wrong isolate, so only the report-and-signal path is used.
      useInspector: isMainThread,
      intervalMs,
      timeoutMs,
      maxStrikes: options.maxStrikes,
      watchFromMs,
      exitGraceMs: (options.exitGraceS ?? DEFAULT_LOOP_WATCHDOG_EXIT_GRACE_S) * 1000,
      sliceMs: PROBE_WAIT_SLICE_MS,
      mode,
      reportDirectory,
      runtimeStatusFile,
      heartbeatFile,
      exitCode: LOOP_WATCHDOG_EXIT_CODE,
      exitReason: LOOP_WATCHDOG_EXIT_REASON,
      fallbackSignal: LOOP_WATCHDOG_FALLBACK_SIGNAL,
      criticalTemplate: messages.loopWatchdogFired(
        options.maxStrikes,
        '{load1}',
        '{ncpu}',
        LOOP_WATCHDOG_EXIT_CODE,
      ),
      warnTemplate: messages.loopWatchdogWarned(options.maxStrikes, '{load1}', '{ncpu}'),
      reportWrittenTemplate: messages.loopWatchdogReportWritten('{path}'),
      reportFailedTemplate: messages.loopWatchdogReportFailed('{error}'),
    },
  });
  worker.unref();
  worker.on('error', (error) => {
    writeLine(`Loop watchdog worker failed: ${error.message}`);
  });

  const postPhase = () => {
    if (!stopped) phaseChannel.port1.postMessage({ type: 'phase', phase: phases.at(-1) ?? null });
  };

  let stopping: Promise<void> | undefined;
  return {
    phase(label) {
      const info: LoopWatchdogPhaseInfo = { label, startedAt: new Date().toISOString() };
      phases.push(info);
      postPhase();
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        const index = phases.lastIndexOf(info);
        if (index !== -1) phases.splice(index, 1);
        postPhase();
      };
      return { end, [Symbol.dispose]: end };
    },
    withPhase(label, work) {
      const phase = this.phase(label);
      let result: ReturnType<typeof work>;
      try {
        result = work();
      } catch (error) {
        phase.end();
        throw error;
      }
      if (result instanceof Promise) {
        return result.finally(() => phase.end()) as typeof result;
      }
      phase.end();
      return result;
    },
    get currentPhase() {
      return phases.at(-1) ?? null;
    },
    get strikes() {
      return Atomics.load(ints, SHARED_INT_SLOTS.strikes);
    },
    get probesAnswered() {
      return probesAnswered;
    },
    get reports() {
      return reports;
    },
    stop() {
      // Synchronous part first: from here on no irreversible step can run, on either thread.
      stopped = true;
      Atomics.store(ints, SHARED_INT_SLOTS.stopped, 1);
      Atomics.notify(ints, SHARED_INT_SLOTS.stopped);
      clearTimeout(probeTimer);
      fireRegistry(FIRE_REGISTRY_KEY).delete(id);
      stopping ??= (async () => {
        histogram.disable();
        phaseChannel.port1.close();
        await worker.terminate();
      })();
      return stopping;
    },
  };
}
