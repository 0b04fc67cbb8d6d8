import {
  CRON_DRAIN_CLEANUP_RESERVE_S,
  DEFAULT_SHUTDOWN_WATCHDOG_GRACE_S,
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

const DURATION_UNITS_S: Record<string, number> = {
  us: 1e-6,
  usec: 1e-6,
  ms: 1e-3,
  msec: 1e-3,
  s: 1,
  sec: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
  month: 2_629_800,
  months: 2_629_800,
  y: 31_557_600,
  year: 31_557_600,
  years: 31_557_600,
};

/**
 * Parses a systemd duration (`90s`, `1min 30s`, a bare number of seconds) into microseconds.
 * Junk or a result ≤ 0 ⇒ `undefined`.
 */
export function parseSystemdDurationToMicroseconds(raw: string): number | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const seconds = Number(text);
    return seconds > 0 ? Math.round(seconds * 1e6) : undefined;
  }
  const pattern = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*/gy;
  let totalS = 0;
  let consumed = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const unit = DURATION_UNITS_S[match[2] ?? ''];
    if (unit === undefined) return undefined;
    totalS += Number(match[1]) * unit;
    consumed = pattern.lastIndex;
  }
  if (consumed !== text.length || totalS <= 0) return undefined;
  return Math.round(totalS * 1e6);
}
