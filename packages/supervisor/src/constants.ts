/**
 * Constants of the supervisor: exit codes, timings and the exact operator-facing strings. One source
 * of truth — tests and other packages import these rather than repeating them.
 */

/** EX_TEMPFAIL: a service restart is wanted. The loop liveness watchdog exits with it. */
export const GATEWAY_SERVICE_RESTART_EXIT_CODE = 75;
/** The shutdown watchdog's default exit code. */
export const SHUTDOWN_WATCHDOG_EXIT_CODE = 1;
export const LOOP_WATCHDOG_EXIT_CODE = GATEWAY_SERVICE_RESTART_EXIT_CODE;

export const LOOP_WATCHDOG_EXIT_REASON = 'loop_liveness_watchdog';
export const SHUTDOWN_WATCHDOG_EXIT_REASON = 'shutdown_watchdog';

/**
 * Seconds after arming before misses count. 0, as the reference: its first probe goes out one
 * interval after arming, so with the defaults (30 s / 10 s / 3 strikes) a loop wedged from the start
 * is judged 3 × (30 + 10) = 120 s after arming. The knob stays for a gateway whose start is known to
 * block the loop for long (it is armed once the loop is confirmed live, §8.3, so it rarely is).
 */
export const DEFAULT_LOOP_WATCHDOG_STARTUP_GRACE_S = 0;
/** How long the worker waits for the main thread to run the exit it asked for before it signals. */
export const DEFAULT_LOOP_WATCHDOG_EXIT_GRACE_S = 5;
/** The signal used when the main thread cannot run JavaScript (stuck inside a native call). */
export const LOOP_WATCHDOG_FALLBACK_SIGNAL = 'SIGKILL';
/**
 * Sampling period of the event-loop delay histogram recorded in forensics. Every sample wakes the
 * loop; at 500 ms any stall longer than that is always recorded, at a fifth of the idle cost of 100 ms.
 */
export const DEFAULT_EVENT_LOOP_DELAY_RESOLUTION_MS = 500;
/** The worker waits for the main thread's warn-mode report in slices of at most this many ms. */
export const PROBE_WAIT_SLICE_MS = 50;

export const DEFAULT_HEARTBEAT_INTERVAL_S = 30;
export const HEARTBEAT_INTERVAL_FLOOR_S = 1;
export const DEFAULT_LOOP_LIVENESS_STALE_AFTER_S = 90;
export const DEFAULT_WITNESS_TICK_TIMEOUT_S = 1;
export const DEFAULT_WITNESS_TICK_STRIKES = 3;
export const DEFAULT_WITNESS_TICK_GAP_S = 0.2;
export const HEARTBEAT_FILE = 'state/gateway.heartbeat';
export const LOOP_TICK_SOCKET_PREFIX = 'gateway.loop-tick.';
export const LOOP_TICK_SOCKET_SUFFIX = '.sock';
/** The single byte the witness writes to every connection. */
export const LOOP_TICK_BYTE = '1';

export const DEFAULT_SHUTDOWN_WATCHDOG_GRACE_S = 60;
export const SHUTDOWN_WATCHDOG_EXIT_RESERVE_S = 10;
export const CRON_DRAIN_CLEANUP_RESERVE_S = 10;
export const SYSTEMD_STOP_HEADROOM_S = 30;
export const SYSTEMD_TIMEOUT_STOP_SEC_FLOOR = 60;
export const RESTART_EXIT_WAIT_HEADROOM_S = 15;
/** systemd restart wait = this + `RestartUSec` + `TimeoutStartUSec`. */
export const SYSTEMD_RESTART_WAIT_BASE_S = 60;
/** How long `systemctl show` may take before the query gives up. */
export const SYSTEMD_SHOW_TIMEOUT_MS = 5000;
/** The `ExitTimeOut` (s) a Hermes launchd job is sized for; launchd's SIGKILL follows it. */
export const LAUNCHD_EXIT_TIMEOUT_S = 60;
/** Under launchd the drain ends this far before `ExitTimeOut` (60 ⇒ 50). */
export const LAUNCHD_DRAIN_RESERVE_S = 10;
/** Under launchd the shutdown watchdog fires at least this far before `ExitTimeOut`. */
export const LAUNCHD_WATCHDOG_EXIT_RESERVE_S = 5;
export const SHUTDOWN_WATCHDOG_LOG_FILE = 'logs/gateway-shutdown-watchdog.log';
/** `spawnAsyncDiagnostic`: where it appends, its whole budget, how much of `ps auxf` it keeps. */
export const SHUTDOWN_DIAGNOSTIC_LOG_FILE = 'logs/gateway-shutdown-diag.log';
export const DEFAULT_ASYNC_DIAGNOSTIC_TIMEOUT_S = 5;
export const SHUTDOWN_DIAGNOSTIC_PS_LINES = 60;
export const LOOP_WATCHDOG_REPORT_DIRECTORY = 'logs';
export const RUNTIME_STATUS_FILE = 'gateway_state.json';
/** The adapter fatal-error code of a relay switched off: the platform is `disabled`, never retried. */
export const RELAY_DISABLED_CODE = 'relay_disabled';

export const MAX_SUPERVISED_RESTARTS = 5;
export const SUPERVISED_HEALTHY_S = 300;
export const SUPERVISED_BACKOFF_CAP_S = 60;

export const RECONNECT_BACKOFF_BASE_S = 30;
export const RECONNECT_BACKOFF_CAP_S = 300;
export const RECONNECT_ATTENTION_AFTER_S = 7200;
export const RECONNECT_WATCHER_NAME = 'platform_reconnect_watcher';
export const RECONNECT_WATCHER_SLOW_RETRY_S = 300;
export const RECONNECT_WATCHER_INITIAL_DELAY_S = 10;
export const RECONNECT_WATCHER_IDLE_S = 30;
export const RECONNECT_WATCHER_PASS_GAP_S = 10;
export const MAX_SLOW_WATCHER_RESPAWNS = 6;
/** (1 + 5 rapid restarts) × (1 initial chain + 6 slow respawns). */
export const RECONNECT_WATCHER_SPAWN_CEILING =
  (1 + MAX_SUPERVISED_RESTARTS) * (1 + MAX_SLOW_WATCHER_RESPAWNS);

/** Operator-facing log lines. Functions fill the placeholders; tests import them. */
export const messages = {
  loopWatchdogFired: (strikes: number, load1: string, cpuCount: string, exitCode: number) =>
    `Gateway event loop missed ${strikes} consecutive liveness probes; host load1=${load1} ncpu=${cpuCount}; dumping all thread stacks and exiting with code ${exitCode} so the service supervisor can restart it.`,
  loopWatchdogWarned: (strikes: number, load1: string, cpuCount: string) =>
    `Gateway event loop missed ${strikes} consecutive liveness probes; host load1=${load1} ncpu=${cpuCount}; warn mode: writing forensics and staying up.`,
  loopWatchdogReportWritten: (file: string) => `Loop watchdog forensics written to ${file}`,
  loopWatchdogReportFailed: (error: string) => `Loop watchdog could not write forensics: ${error}`,
  loopWatchdogOnStallFailed: (error: string) => `Loop watchdog onStall hook failed: ${error}`,
  witnessUnavailable:
    'Loop tick socket unavailable — liveness probes will have no loop-scheduling witness and will not escalate on a stale heartbeat',
  supervisedTaskDied: (name: string, error: string) => `Supervised task ${name} died: ${error}`,
  supervisedContextNotIsolated:
    'Supervised tasks cannot be started in an empty async context on this Node.js runtime: AsyncLocalStorage stores of the spawner (a profile home override, a request scope) will be visible inside them.',
  supervisedGaveUp: (name: string, deaths: number, healthyS: number) =>
    `Supervised task ${name} died ${deaths} times in rapid succession (each within ${healthyS}s of restart) — giving up restarts`,
  reconnecting: (platform: string, attempt: number) =>
    `Reconnecting ${platform} (attempt ${attempt})...`,
  platformQueued: (platform: string) => `${platform} queued for background reconnection`,
  watcherDead: (done: boolean) =>
    `Reconnect watcher task is dead (done=${done ? 'True' : 'False'}) — respawning`,
  watcherExhaustedEmpty:
    'Reconnect watcher supervision exhausted with an empty retry queue — leaving it down until a platform is queued.',
  watcherSlowRespawn: (queued: number, attempt: number, max: number) =>
    `Reconnect watcher still down with ${queued} platform(s) queued — slow respawn ${attempt}/${max}`,
  watcherAbandoned: (respawns: number, platforms: readonly string[]) =>
    `Reconnect watcher could not be kept alive after ${respawns} slow respawns; ${platforms.length} platform(s) remain queued and unattended: ${platforms.join(', ')}. Manual intervention or a gateway restart is required.`,
  needsAttention: (platform: string, hours: number, attempts: number) =>
    `${platform} has been failing/reconnecting continuously for ${hours.toFixed(1)} hours (${attempts} attempts) — flagging NEEDS_ATTENTION`,
  platformLost: (platform: string) =>
    `${platform} adapter was lost without entering the reconnection queue; exiting gateway so the service manager restarts it.`,
  platformLostStayingAlive: (platform: string) =>
    `${platform} adapter was lost without entering the reconnection queue; staying alive.`,
  staleSystemdUnit: (unit: string, timeoutStopS: number, requiredS: number) =>
    `Stale systemd unit detected: ${unit} has TimeoutStopSec=${Number(timeoutStopS.toFixed(3))}s, below the ${requiredS}s this gateway's stop needs (drain, then the shutdown watchdog), so systemd would SIGKILL a slow stop before the watchdog can record why. Reinstall the unit (hermes gateway install) or raise TimeoutStopSec to at least ${requiredS}.`,
  shutdownWatchdogStderr: (delayS: number, pid: number) =>
    `Gateway shutdown watchdog fired after ${delayS}s (pid=${pid}); dumping all thread stacks.`,
  shutdownWatchdogCritical: (delayS: number, path: string) =>
    `Shutdown watchdog fired after ${delayS.toFixed(0)}s — forcing process exit (asyncio drain path appears wedged; see ${path})`,
} as const;
