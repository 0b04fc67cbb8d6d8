import {
  CRON_DRAIN_CLEANUP_RESERVE_S,
  DEFAULT_SHUTDOWN_WATCHDOG_GRACE_S,
  LAUNCHD_DRAIN_RESERVE_S,
  LAUNCHD_EXIT_TIMEOUT_S,
  LAUNCHD_WATCHDOG_EXIT_RESERVE_S,
  RESTART_EXIT_WAIT_HEADROOM_S,
  SHUTDOWN_WATCHDOG_EXIT_RESERVE_S,
  SYSTEMD_STOP_HEADROOM_S,
  SYSTEMD_TIMEOUT_STOP_SEC_FLOOR,
} from './constants.js';

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** When the shutdown watchdog fires: max(drain, 0) + 60 s (a non-numeric drain counts as 0). */
export function resolveShutdownWatchdogDelay(drainS: unknown): number {
  return Math.max(finiteOrZero(drainS), 0) + DEFAULT_SHUTDOWN_WATCHDOG_GRACE_S;
}

/**
 * How long a CLI waits for the gateway PID to exit after asking for a restart:
 * drain + after-turn + 15 s of headroom.
 */
export function resolveRestartExitWaitBudget(options: {
  readonly drainS: number;
  readonly afterTurnS: number;
  readonly headroomS?: number;
}): number {
  return (
    Math.max(0, finiteOrZero(options.drainS)) +
    Math.max(0, finiteOrZero(options.afterTurnS)) +
    (options.headroomS ?? RESTART_EXIT_WAIT_HEADROOM_S)
  );
}

/**
 * The smallest systemd `TimeoutStopSec` that lets the in-process shutdown watchdog (a diagnosable
 * exit) win over systemd's blind SIGKILL.
 */
export function resolveSystemdTimeoutStopSec(options: {
  readonly drainS: number;
  readonly cronDrainS?: number;
}): number {
  const drain = Math.max(0, finiteOrZero(options.drainS));
  const cron = finiteOrZero(options.cronDrainS);
  const cronWithReserve = cron > 0 ? cron + CRON_DRAIN_CLEANUP_RESERVE_S : 0;
  return Math.trunc(
    Math.max(
      SYSTEMD_TIMEOUT_STOP_SEC_FLOOR,
      Math.max(drain, cronWithReserve) + SYSTEMD_STOP_HEADROOM_S,
      drain + DEFAULT_SHUTDOWN_WATCHDOG_GRACE_S + SHUTDOWN_WATCHDOG_EXIT_RESERVE_S,
    ),
  );
}

/** Cron drain budget: never past the shutdown watchdog (less its 10 s exit reserve). */
export function resolveCronDrainBudget(options: {
  readonly drainS: number;
  readonly cronFloorS: number;
  readonly watchdogDelayS: number;
  readonly elapsedS: number;
}): number {
  if (options.cronFloorS <= 0) return options.drainS;
  return Math.max(
    options.drainS,
    Math.min(
      options.cronFloorS,
      options.watchdogDelayS - options.elapsedS - SHUTDOWN_WATCHDOG_EXIT_RESERVE_S,
    ),
  );
}

export interface LaunchdStopBudget {
  /** The drain to use under launchd: capped `LAUNCHD_DRAIN_RESERVE_S` (10 s) below `ExitTimeOut`. */
  readonly drainS: number;
  /**
   * The shutdown watchdog's delay: drain + 60 s, clamped `LAUNCHD_WATCHDOG_EXIT_RESERVE_S` (5 s)
   * below `ExitTimeOut` (half of it when that is 10 s or less), so the diagnosable exit beats
   * launchd's SIGKILL.
   */
  readonly shutdownWatchdogDelayS: number;
  /** The `ExitTimeOut` the budget was sized for; `Infinity` when there is none (0 in the plist). */
  readonly exitTimeOutS: number;
}

/**
 * Stop budget under launchd, whose stops are signal-driven: SIGTERM, then SIGKILL after the job's
 * `ExitTimeOut`. The drain is capped below it (60 ⇒ 50) and the shutdown watchdog fires before it.
 * `exitTimeOutS` defaults to `LAUNCHD_EXIT_TIMEOUT_S` (60, what `hermes gateway install` writes);
 * 0 or `Infinity` means launchd never sends SIGKILL, so nothing is capped; a negative or non-finite
 * value counts as the default.
 */
export function resolveLaunchdStopBudget(options: {
  readonly drainS: number;
  readonly exitTimeOutS?: number;
}): LaunchdStopBudget {
  const drain = Math.max(0, finiteOrZero(options.drainS));
  const given = options.exitTimeOutS;
  if (given === 0 || given === Number.POSITIVE_INFINITY) {
    return {
      drainS: drain,
      shutdownWatchdogDelayS: resolveShutdownWatchdogDelay(drain),
      exitTimeOutS: Number.POSITIVE_INFINITY,
    };
  }
  const exitTimeOutS =
    given !== undefined && Number.isFinite(given) && given > 0 ? given : LAUNCHD_EXIT_TIMEOUT_S;
  const drainS = Math.min(drain, Math.max(0, exitTimeOutS - LAUNCHD_DRAIN_RESERVE_S));
  const watchdogCapS = Math.max(exitTimeOutS - LAUNCHD_WATCHDOG_EXIT_RESERVE_S, exitTimeOutS / 2);
  return {
    drainS,
    shutdownWatchdogDelayS: Math.min(resolveShutdownWatchdogDelay(drainS), watchdogCapS),
    exitTimeOutS,
  };
}
