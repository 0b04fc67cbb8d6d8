import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isMainThread, Worker } from 'node:worker_threads';
import {
  DEFAULT_LOOP_WATCHDOG_EXIT_GRACE_S,
  LOOP_WATCHDOG_FALLBACK_SIGNAL,
  messages,
  RUNTIME_STATUS_FILE,
  SHUTDOWN_WATCHDOG_EXIT_CODE,
  SHUTDOWN_WATCHDOG_EXIT_REASON,
  SHUTDOWN_WATCHDOG_LOG_FILE,
} from './constants.js';
import { hardExit } from './hard-exit.js';
import { captureMainStack, fireRegistry } from './main-thread-fire.js';
import { markRuntimeStatusExitedSync } from './runtime-status.js';
import { SHUTDOWN_WATCHDOG_WORKER_SOURCE } from './shutdown-watchdog-worker-source.js';

export const SHUTDOWN_DUMP_START = '--- faulthandler dump (all threads) ---';
export const SHUTDOWN_DUMP_END = '--- end dump ---';
const SHUTDOWN_REGISTRY_KEY = '@hermes/supervisor.shutdown-watchdog';
const DONE_WAIT_SLICE_MS = 1000;

export interface ShutdownWatchdogOptions {
  /** Seconds until it fires (use `resolveShutdownWatchdogDelay(drain)`); ≤ 0 ⇒ not armed. */
  readonly delayS: number;
  /** The process home: log under `logs/`, status `gateway_state.json`. */
  readonly home: string;
  /** State captured at expiry, on the main thread; a throw is recorded as `snapshot_error`. */
  readonly snapshot?: () => Record<string, unknown>;
  /** Exit code (default 1: the service manager treats it as a failure and restarts). */
  readonly exitCode?: number;
  /** Files removed before the exit so a successor can claim them (the PID file, the lock file). */
  readonly removeFiles?: readonly string[];
  /** Seconds the worker waits for the main thread before it signals (default 5). */
  readonly exitGraceS?: number;
  /** Arm at all (default true). The gateway passes false under a test runner. */
  readonly enabled?: boolean;
  /** Where the CRITICAL line goes (default stderr). */
  readonly writeLine?: (line: string) => void;
}

export interface ShutdownWatchdog {
  readonly armed: boolean;
  readonly logFile: string;
  /** Last-known state for the signal fallback path, where the main thread cannot be asked. */
  update(snapshot: Record<string, unknown>): void;
  /** Teardown finished: disarm. Synchronous; nothing irreversible runs after it. */
  done(): Promise<void>;
}

let nextId = 1;

/**
 * Arms the teardown backstop at the start of `stop()`: if teardown has not called `done()` after
 * `delayS`, it writes forensics to `logs/gateway-shutdown-watchdog.log`, removes the PID and lock
 * files, marks the status degraded and ends the process with `exitCode`.
 */
export function armShutdownWatchdog(options: ShutdownWatchdogOptions): ShutdownWatchdog {
  const logFile = path.join(options.home, SHUTDOWN_WATCHDOG_LOG_FILE);
  if (!(options.delayS > 0) || options.enabled === false) {
    return { armed: false, logFile, update: () => undefined, done: async () => undefined };
  }
  const exitCode = options.exitCode ?? SHUTDOWN_WATCHDOG_EXIT_CODE;
  const runtimeStatusFile = path.join(options.home, RUNTIME_STATUS_FILE);
  const writeLine = options.writeLine ?? ((line: string) => process.stderr.write(`${line}\n`));
  const shared = new SharedArrayBuffer(4);
  const flags = new Int32Array(shared);
  let finished = false;
  const id = nextId++;
  const stderrLine = messages.shutdownWatchdogStderr(options.delayS, process.pid);
  const criticalLine = messages.shutdownWatchdogCritical(options.delayS, logFile);

  const fire = () => {
    if (finished) return;
    let snapshot: unknown;
    try {
      snapshot = options.snapshot?.() ?? {};
    } catch (error) {
      snapshot = { snapshot_error: String(error) };
    }
    const header = {
      event: 'shutdown_watchdog_fired',
      pid: process.pid,
      delay_s: options.delayS,
      fired_at: new Date().toISOString(),
      snapshot,
    };
    try {
      mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
      appendFileSync(
        logFile,
        `${JSON.stringify(header)}\n${SHUTDOWN_DUMP_START}\n${captureMainStack()}\n${SHUTDOWN_DUMP_END}\n`,
        { mode: 0o600 },
      );
    } catch {
      // forensics are best effort; the exit is not
    }
    process.stderr.write(`${stderrLine}\n`);
    writeLine(criticalLine);
    if (finished) return;
    for (const file of options.removeFiles ?? []) rmSync(file, { force: true });
    markRuntimeStatusExitedSync({
      file: runtimeStatusFile,
      exitCode,
      reason: SHUTDOWN_WATCHDOG_EXIT_REASON,
    });
    if (finished) return;
    hardExit(exitCode);
  };
  fireRegistry(SHUTDOWN_REGISTRY_KEY).set(id, fire);

  const worker = new Worker(SHUTDOWN_WATCHDOG_WORKER_SOURCE, {
    eval: true,
    name: 'gateway-shutdown-watchdog',
    workerData: {
      id,
      shared,
      registryKey: SHUTDOWN_REGISTRY_KEY,
      useInspector: isMainThread,
      delayS: options.delayS,
      sliceMs: DONE_WAIT_SLICE_MS,
      exitGraceMs: (options.exitGraceS ?? DEFAULT_LOOP_WATCHDOG_EXIT_GRACE_S) * 1000,
      logFile,
      removeFiles: [...(options.removeFiles ?? [])],
      runtimeStatusFile,
      exitCode,
      exitReason: SHUTDOWN_WATCHDOG_EXIT_REASON,
      fallbackSignal: LOOP_WATCHDOG_FALLBACK_SIGNAL,
      dumpStart: SHUTDOWN_DUMP_START,
      dumpEnd: SHUTDOWN_DUMP_END,
      stderrLine,
      criticalLine,
    },
  });
  worker.unref();
  let stopping: Promise<void> | undefined;
  return {
    armed: true,
    logFile,
    update(snapshot) {
      if (!finished) worker.postMessage({ type: 'snapshot', snapshot });
    },
    done() {
      finished = true;
      Atomics.store(flags, 0, 1);
      Atomics.notify(flags, 0);
      fireRegistry(SHUTDOWN_REGISTRY_KEY).delete(id);
      stopping ??= worker.terminate().then(() => undefined);
      return stopping;
    },
  };
}
