import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PID_FILE_NAME } from './constants.js';
import { identifyGateway } from './control-client.js';
import { type GatewayLivenessOptions, isLiveGatewayProcess } from './gateway-liveness.js';
import { readPidRecord } from './pid-record.js';
import { profileLabelForHome } from './profile-label.js';
import { INACTIVE_GATEWAY_STATES, readRuntimeStatus, runtimeStatusPid } from './runtime-status.js';
import { detectContainer, detectSupervisorKind, restartMechanismFor } from './supervisor.js';

/** One running gateway found by `hermes update --plan`. */
export interface RuntimeRecord {
  readonly kind: 'gateway';
  readonly profile: string;
  readonly home: string;
  readonly pid: number;
  readonly supervisor: string;
  readonly code_sha: string | null;
  readonly code_version: string | null;
  /** How to restart it, for people (`systemctl restart …`, `hermes -p x gateway restart`). */
  readonly restart_via: string;
  /** Where the answer came from: `socket`, `runtime-status` or `pid-file`. */
  readonly detail: 'socket' | 'runtime-status' | 'pid-file';
}

export interface CollectRuntimeInventoryOptions extends GatewayLivenessOptions {
  /** Per-home `identify` timeout (default 2 s). */
  readonly timeoutMs?: number;
  /** Whether gateways found without a socket run in a container; detected when not given. */
  readonly inContainer?: boolean;
}

function splitNul(text: string): string[] {
  return text.split('\0').filter((part) => part !== '');
}

/**
 * Classifies a gateway that did not declare its supervisor (it predates the socket) from the
 * outside: on Linux its environment and command line in `/proc` (readable for our own user's
 * processes); anything unreadable is `manual`.
 */
export async function classifySupervisorForPid(
  pid: number,
  options: { readonly inContainer?: boolean } = {},
): Promise<string> {
  // A process we can see from inside a container shares that container.
  const inContainer = options.inContainer ?? (await detectContainer());
  if (process.platform !== 'linux') return inContainer ? 'docker' : 'manual';
  try {
    const [environ, cmdline] = await Promise.all([
      readFile(`/proc/${pid}/environ`, 'utf8'),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
    ]);
    const env: NodeJS.ProcessEnv = {};
    for (const entry of splitNul(environ)) {
      const equals = entry.indexOf('=');
      if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
    }
    return detectSupervisorKind({ env, argv: splitNul(cmdline), platform: 'linux', inContainer });
  } catch {
    return inContainer ? 'docker' : 'manual';
  }
}

function classifyOptions(options: CollectRuntimeInventoryOptions) {
  return options.inContainer === undefined ? {} : { inContainer: options.inContainer };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The profile label of a home found without a socket answer; `custom` for a custom home. */
async function profileFor(home: string): Promise<string> {
  return (await profileLabelForHome(home).catch(() => null)) ?? 'custom';
}

async function inspectHome(
  home: string,
  options: CollectRuntimeInventoryOptions,
): Promise<Omit<RuntimeRecord, 'restart_via'> | null> {
  const identity = await identifyGateway(
    home,
    options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
  );
  if (identity !== null) {
    return {
      kind: 'gateway',
      profile: identity.profile ?? (await profileFor(home)),
      home,
      pid: identity.pid,
      supervisor: identity.supervisor,
      code_sha: text(identity.code_sha),
      code_version: text(identity.code_version),
      detail: 'socket',
    };
  }
  const status = await readRuntimeStatus(home);
  const statusPid = status ? runtimeStatusPid(status) : null;
  if (
    status !== null &&
    statusPid !== null &&
    !(
      typeof status.gateway_state === 'string' && INACTIVE_GATEWAY_STATES.has(status.gateway_state)
    ) &&
    (await isLiveGatewayProcess(
      statusPid,
      typeof status.start_time === 'number' ? status.start_time : null,
      options,
    ))
  ) {
    return {
      kind: 'gateway',
      profile: await profileFor(home),
      home,
      pid: statusPid,
      supervisor: await classifySupervisorForPid(statusPid, classifyOptions(options)),
      code_sha: text(status.code_sha),
      code_version: text(status.code_version),
      detail: 'runtime-status',
    };
  }
  const record = await readPidRecord(path.join(home, PID_FILE_NAME));
  if (record !== null && (await isLiveGatewayProcess(record.pid, record.start_time, options))) {
    return {
      kind: 'gateway',
      profile: await profileFor(home),
      home,
      pid: record.pid,
      supervisor: await classifySupervisorForPid(record.pid, classifyOptions(options)),
      code_sha: null,
      code_version: null,
      detail: 'pid-file',
    };
  }
  return null;
}

/**
 * The gateways running for `homes`, one record per process: a multiplexing gateway that answers
 * `identify` for several homes appears once, under the first home that found it. Each home
 * prefers the socket, then `gateway_state.json`, then the PID file — a file counts only while the
 * process it names is alive, still the writer (start time) and runs a gateway command line. Never
 * throws; a home that cannot be inspected is skipped.
 */
export async function collectRuntimeInventory(
  homes: readonly string[],
  options: CollectRuntimeInventoryOptions = {},
): Promise<RuntimeRecord[]> {
  const found = await Promise.all(
    homes.map((home) => inspectHome(home, options).catch(() => null)),
  );
  const seenPids = new Set<number>();
  const runtimes: RuntimeRecord[] = [];
  for (const runtime of found) {
    if (runtime === null || seenPids.has(runtime.pid)) continue;
    seenPids.add(runtime.pid);
    runtimes.push({
      ...runtime,
      restart_via: restartMechanismFor(runtime.supervisor, runtime.profile),
    });
  }
  return runtimes;
}
