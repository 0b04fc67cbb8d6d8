import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolveSystemdTimeoutStopSec } from './budgets.js';
import { messages, SYSTEMD_RESTART_WAIT_BASE_S, SYSTEMD_SHOW_TIMEOUT_MS } from './constants.js';
import { SupervisorError } from './errors.js';

/**
 * systemd timing, read the way `systemctl show` prints it. The pure functions take text, so
 * `hermes gateway install` and `hermes doctor` (and tests) can use them without systemd; the two
 * functions that touch the system (`querySystemdUnitTiming`, `detectSystemdTimingAlignment`) are
 * thin wrappers around them.
 */

const MICROSECONDS_PER_S = 1e6;

/** systemd.time(7) units, in seconds. Case matters: `m` is a minute, `M` a month. */
const TIMESPAN_UNITS_S: Readonly<Record<string, number>> = {
  usec: 1e-6,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  msec: 1e-3,
  ms: 1e-3,
  seconds: 1,
  second: 1,
  sec: 1,
  s: 1,
  '': 1,
  minutes: 60,
  minute: 60,
  min: 60,
  m: 60,
  hours: 3600,
  hour: 3600,
  hr: 3600,
  h: 3600,
  days: 86_400,
  day: 86_400,
  d: 86_400,
  weeks: 604_800,
  week: 604_800,
  w: 604_800,
  months: 2_629_800,
  month: 2_629_800,
  M: 2_629_800,
  years: 31_557_600,
  year: 31_557_600,
  y: 31_557_600,
};

/**
 * A systemd time span in microseconds: what `systemctl show` prints for `*USec` properties
 * (`100ms`, `1min 30s`, `2h 30min`, `0`, `infinity`) and what unit files accept (`90`, `1.5s`,
 * `2h30min`). A number without a unit is seconds. `infinity` ⇒ `Infinity`; `0` ⇒ 0; anything
 * else ⇒ `undefined`.
 */
export function parseSystemdTimespan(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (trimmed === 'infinity') return Number.POSITIVE_INFINITY;
  const term = /\s*(\d+(?:\.\d+)?)\s*([A-Za-zµμ]*)\s*/y;
  let totalS = 0;
  let consumed = 0;
  for (let match = term.exec(trimmed); match !== null; match = term.exec(trimmed)) {
    const unit = TIMESPAN_UNITS_S[match[2] ?? ''];
    if (unit === undefined) return undefined;
    totalS += Number(match[1]) * unit;
    consumed = term.lastIndex;
    if (consumed === trimmed.length) break;
  }
  if (consumed !== trimmed.length) return undefined;
  return Math.round(totalS * MICROSECONDS_PER_S);
}

/**
 * The reference's parser: a systemd duration in microseconds, positive and finite only — `0`,
 * `infinity` and junk ⇒ `undefined`. (Use {@link parseSystemdTimespan} to tell those apart.)
 */
export function parseSystemdDurationToMicroseconds(raw: string): number | undefined {
  const microseconds = parseSystemdTimespan(raw);
  return microseconds !== undefined && Number.isFinite(microseconds) && microseconds > 0
    ? microseconds
    : undefined;
}

/**
 * `Key=Value` lines of `systemctl show` (one unit). Values keep everything after the first `=`;
 * the first occurrence of a key wins; other lines are ignored.
 */
export function parseSystemctlShow(text: string): ReadonlyMap<string, string> {
  const properties = new Map<string, string>();
  for (const line of text.split('\n')) {
    const separator = line.indexOf('=');
    if (separator <= 0) continue;
    const key = line.slice(0, separator).trim();
    if (!properties.has(key)) properties.set(key, line.slice(separator + 1).trim());
  }
  return properties;
}

/** A unit's timing as `systemctl show` reports it. Durations in microseconds; `Infinity` allowed. */
export interface SystemdUnitTiming {
  /** `LoadState` (`loaded`, `not-found`, …) when it was asked for. */
  readonly loadState?: string;
  /** `RestartUSec` (`RestartSec=`): the pause before systemd restarts the service. */
  readonly restartUSec?: number;
  /** `TimeoutStartUSec` (`TimeoutStartSec=`). */
  readonly timeoutStartUSec?: number;
  /** `TimeoutStopUSec` (`TimeoutStopSec=`): how long systemd waits after SIGTERM before SIGKILL. */
  readonly timeoutStopUSec?: number;
}

/** The properties to ask `systemctl show` for (`-p` each). */
export const SYSTEMD_TIMING_PROPERTIES = [
  'LoadState',
  'RestartUSec',
  'TimeoutStartUSec',
  'TimeoutStopUSec',
] as const;

/** Reads {@link SystemdUnitTiming} from the text `systemctl show` prints. Absent or unreadable ⇒ left out. */
export function readSystemdUnitTiming(showText: string): SystemdUnitTiming {
  const properties = parseSystemctlShow(showText);
  const span = (key: string) => {
    const raw = properties.get(key);
    return raw === undefined ? undefined : parseSystemdTimespan(raw);
  };
  const loadState = properties.get('LoadState');
  const restartUSec = span('RestartUSec');
  const timeoutStartUSec = span('TimeoutStartUSec');
  const timeoutStopUSec = span('TimeoutStopUSec');
  return {
    ...(loadState === undefined || loadState === '' ? {} : { loadState }),
    ...(restartUSec === undefined ? {} : { restartUSec }),
    ...(timeoutStartUSec === undefined ? {} : { timeoutStartUSec }),
    ...(timeoutStopUSec === undefined ? {} : { timeoutStopUSec }),
  };
}

function finiteMicroseconds(microseconds: number | undefined): number {
  return microseconds !== undefined && Number.isFinite(microseconds) && microseconds > 0
    ? microseconds
    : 0;
}

/**
 * How long a CLI waits for a systemd-managed gateway to come back after a restart:
 * 60 s + `RestartUSec` + `TimeoutStartUSec`, in seconds. A span that is unknown or `infinity`
 * counts as 0, so the wait stays bounded.
 */
export function resolveSystemdRestartWaitS(timing: SystemdUnitTiming): number {
  // Summed in whole microseconds, so 60 s + 100 ms + 90 s is 150.1, not 150.10000000000002.
  const totalUSec =
    SYSTEMD_RESTART_WAIT_BASE_S * MICROSECONDS_PER_S +
    finiteMicroseconds(timing.restartUSec) +
    finiteMicroseconds(timing.timeoutStartUSec);
  return totalUSec / MICROSECONDS_PER_S;
}

export type SystemdTimingAlignment =
  | {
      /** `TimeoutStopSec` outlasts the drain and the shutdown watchdog (or is `infinity`). */
      readonly status: 'aligned';
      readonly timeoutStopS: number;
      readonly requiredTimeoutStopS: number;
    }
  | {
      /** systemd would SIGKILL the gateway before its shutdown watchdog can leave forensics. */
      readonly status: 'stale';
      readonly timeoutStopS: number;
      readonly requiredTimeoutStopS: number;
      /** The startup warning: `Stale systemd unit detected: …`. */
      readonly message: string;
    }
  | {
      readonly status: 'unknown';
      readonly requiredTimeoutStopS: number;
      readonly reason: string;
    };

/**
 * Compares a unit's `TimeoutStopSec` with what this gateway's stop needs —
 * {@link resolveSystemdTimeoutStopSec} for its drain and cron drain — so a unit installed by an
 * older version (or edited by hand) is reported instead of ending every slow stop in a blind
 * SIGKILL.
 */
export function checkSystemdTimingAlignment(options: {
  readonly timing: SystemdUnitTiming;
  readonly drainS: number;
  readonly cronDrainS?: number;
  /** For the message (default `the gateway unit`). */
  readonly unit?: string;
}): SystemdTimingAlignment {
  const requiredTimeoutStopS = resolveSystemdTimeoutStopSec(
    options.cronDrainS === undefined
      ? { drainS: options.drainS }
      : { drainS: options.drainS, cronDrainS: options.cronDrainS },
  );
  if (options.timing.loadState !== undefined && options.timing.loadState !== 'loaded') {
    return {
      status: 'unknown',
      requiredTimeoutStopS,
      reason: `unit load state is ${options.timing.loadState}`,
    };
  }
  const stopUSec = options.timing.timeoutStopUSec;
  if (stopUSec === undefined) {
    return { status: 'unknown', requiredTimeoutStopS, reason: 'TimeoutStopUSec not reported' };
  }
  const timeoutStopS = stopUSec / MICROSECONDS_PER_S;
  // systemd's 0 means "no timeout" for TimeoutStopSec, like infinity.
  if (stopUSec === 0 || timeoutStopS >= requiredTimeoutStopS) {
    return {
      status: 'aligned',
      timeoutStopS: stopUSec === 0 ? Number.POSITIVE_INFINITY : timeoutStopS,
      requiredTimeoutStopS,
    };
  }
  return {
    status: 'stale',
    timeoutStopS,
    requiredTimeoutStopS,
    message: messages.staleSystemdUnit(
      options.unit ?? 'the gateway unit',
      timeoutStopS,
      requiredTimeoutStopS,
    ),
  };
}

export interface SystemdUnitRef {
  /** The service unit, e.g. `hermes-gateway.service`. */
  readonly unit: string;
  /** `user` for a unit of a user manager (`systemctl --user`), else `system`. */
  readonly scope: 'system' | 'user';
}

/**
 * The service unit a process runs in, from the text of `/proc/<pid>/cgroup` (cgroup v2 `0::/…` or
 * the v1 `name=systemd` hierarchy). A process outside any `.service` (a login session's `.scope`)
 * ⇒ `undefined`.
 */
export function systemdUnitFromCgroup(text: string): SystemdUnitRef | undefined {
  const lines = text.split('\n').map((line) => line.trim());
  const line =
    lines.find((candidate) => candidate.startsWith('0::')) ??
    lines.find((candidate) => candidate.split(':')[1] === 'name=systemd');
  if (line === undefined) return undefined;
  const cgroupPath = line.split(':').slice(2).join(':');
  const components = cgroupPath.split('/').filter((component) => component !== '');
  let index = -1;
  for (let position = components.length - 1; position >= 0; position -= 1) {
    if (components[position]?.endsWith('.service')) {
      index = position;
      break;
    }
  }
  if (index === -1) return undefined;
  const unit = components[index] ?? '';
  const underUserManager = components
    .slice(0, index)
    .some((component) => /^user@\d+\.service$/.test(component));
  return { unit, scope: underUserManager ? 'user' : 'system' };
}

const UNIT_NAME = /^[A-Za-z0-9:_.\\@-]+$/;

export interface QuerySystemdUnitTimingOptions extends SystemdUnitRef {
  /** The `systemctl` executable (default `systemctl` on `PATH`). */
  readonly systemctl?: string;
  /** Default 5000 ms. */
  readonly timeoutMs?: number;
  /** Environment of the `systemctl` process (default this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs `systemctl [--user] show <unit> -p LoadState -p RestartUSec -p TimeoutStartUSec -p
 * TimeoutStopUSec` (no shell) and reads the answer. Throws `SupervisorError` with code
 * `invalid_systemd_unit` for a unit name that is not one, and `systemctl_failed` when `systemctl`
 * cannot be run, fails or times out.
 */
export async function querySystemdUnitTiming(
  options: QuerySystemdUnitTimingOptions,
): Promise<SystemdUnitTiming> {
  if (!UNIT_NAME.test(options.unit) || options.unit.startsWith('-')) {
    throw new SupervisorError({
      code: 'invalid_systemd_unit',
      message: `not a systemd unit name: ${JSON.stringify(options.unit)}`,
    });
  }
  const args = [
    ...(options.scope === 'user' ? ['--user'] : []),
    'show',
    options.unit,
    ...SYSTEMD_TIMING_PROPERTIES.flatMap((property) => ['-p', property]),
  ];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      options.systemctl ?? 'systemctl',
      args,
      {
        encoding: 'utf8',
        timeout: options.timeoutMs ?? SYSTEMD_SHOW_TIMEOUT_MS,
        env: options.env ?? process.env,
      },
      (error, output) => {
        if (error === null) {
          resolve(output);
          return;
        }
        reject(
          new SupervisorError({
            code: 'systemctl_failed',
            message: `systemctl ${args.join(' ')} failed: ${error.message}`,
            cause: error,
          }),
        );
      },
    );
  });
  return readSystemdUnitTiming(stdout);
}

/**
 * The reference's startup check: only under systemd (`INVOCATION_ID` set), find this process's
 * unit in `/proc/self/cgroup`, ask `systemctl show` for its timing and compare `TimeoutStopSec`
 * with what the stop needs. `undefined` when not under systemd; `unknown` (with the reason) when
 * the unit or its timing cannot be found. Never throws: log a `stale` result's `message` as a
 * startup warning.
 */
export async function detectSystemdTimingAlignment(options: {
  readonly drainS: number;
  readonly cronDrainS?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Default `/proc/self/cgroup`. */
  readonly cgroupFile?: string;
  readonly systemctl?: string;
}): Promise<SystemdTimingAlignment | undefined> {
  const env = options.env ?? process.env;
  if (env.INVOCATION_ID === undefined || env.INVOCATION_ID === '') return undefined;
  const budget =
    options.cronDrainS === undefined
      ? { drainS: options.drainS }
      : { drainS: options.drainS, cronDrainS: options.cronDrainS };
  const unknown = (reason: string): SystemdTimingAlignment => ({
    status: 'unknown',
    requiredTimeoutStopS: resolveSystemdTimeoutStopSec(budget),
    reason,
  });
  let cgroup: string;
  try {
    cgroup = await readFile(options.cgroupFile ?? '/proc/self/cgroup', 'utf8');
  } catch (error) {
    return unknown(`cannot read the cgroup: ${(error as Error).message}`);
  }
  const unit = systemdUnitFromCgroup(cgroup);
  if (unit === undefined) return unknown('not running inside a systemd service unit');
  try {
    const timing = await querySystemdUnitTiming({
      ...unit,
      env,
      ...(options.systemctl === undefined ? {} : { systemctl: options.systemctl }),
    });
    return checkSystemdTimingAlignment({ ...budget, timing, unit: unit.unit });
  } catch (error) {
    return unknown((error as Error).message);
  }
}
