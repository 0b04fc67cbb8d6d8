import { listProfiles } from '@hermes/config';
import { identifyGateway } from './control-client.js';
import { type GatewayLivenessOptions, isLiveGatewayProcess } from './gateway-liveness.js';
import { profileLabelForHome } from './profile-label.js';
import { INACTIVE_GATEWAY_STATES, readRuntimeStatus, runtimeStatusPid } from './runtime-status.js';

export const FLEET_VERSION_STATES = ['current', 'stale', 'unknown', 'down'] as const;
export type FleetVersionState = (typeof FLEET_VERSION_STATES)[number];

/** One gateway in the post-update version matrix. */
export interface FleetVersionRow {
  readonly home: string;
  readonly profile: string;
  readonly pid: number;
  readonly code_sha: string | null;
  readonly code_version: string | null;
  readonly state: FleetVersionState;
  /** `"socket"` when the gateway answered `identify` itself; absent for file-based rows. */
  readonly source?: 'socket';
}

export interface CollectFleetVersionsOptions extends GatewayLivenessOptions {
  /** The sha the fleet should be running now; without it every row is `unknown` or `down`. */
  readonly expectedSha?: string | null;
  /** PIDs that were running before the update; only these can be reported `down`. */
  readonly preRestartPids?: ReadonlySet<number> | readonly number[];
  /** Per-home `identify` timeout (default 2 s). */
  readonly timeoutMs?: number;
}

function versionState(sha: string | null, expected: string | null): FleetVersionState {
  if (sha !== null && expected !== null) return sha === expected ? 'current' : 'stale';
  return 'unknown';
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The profile label of a home found without a socket answer; `custom` for a custom home. */
async function profileFor(home: string): Promise<string> {
  return (await profileLabelForHome(home).catch(() => null)) ?? 'custom';
}

/** The default home plus every named profile home, as the fleet matrix walks them. */
export function defaultFleetHomes(): string[] {
  return listProfiles().map((profile) => profile.home);
}

async function collectOne(
  home: string,
  options: CollectFleetVersionsOptions,
  preRestart: ReadonlySet<number>,
): Promise<FleetVersionRow | null> {
  const identity = await identifyGateway(
    home,
    options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
  );
  if (identity !== null) {
    const sha = text(identity.code_sha);
    return {
      home,
      profile: identity.profile ?? (await profileFor(home)),
      pid: identity.pid,
      code_sha: sha,
      code_version: text(identity.code_version),
      state: versionState(sha, options.expectedSha ?? null),
      source: 'socket',
    };
  }
  const record = await readRuntimeStatus(home);
  const pid = record ? runtimeStatusPid(record) : null;
  if (record === null || pid === null) return null;
  const startTime = typeof record.start_time === 'number' ? record.start_time : null;
  // Live means still the writer and still a gateway: a PID reused by another program is gone.
  if (await isLiveGatewayProcess(pid, startTime, options)) {
    const sha = text(record.code_sha);
    return {
      home,
      profile: await profileFor(home),
      pid,
      code_sha: sha,
      code_version: text(record.code_version),
      state: versionState(sha, options.expectedSha ?? null),
    };
  }
  const state = record.gateway_state;
  const wasRunning =
    typeof state === 'string' && state !== '' && !INACTIVE_GATEWAY_STATES.has(state);
  if (!preRestart.has(pid) || !wasRunning) return null;
  return {
    home,
    profile: await profileFor(home),
    pid,
    code_sha: null,
    code_version: text(record.code_version),
    state: 'down',
  };
}

/**
 * The version matrix after an update: per home, a live `identify` answer (`source: "socket"`),
 * else `gateway_state.json` with a live PID, else `down` — only for a PID that was running
 * before the update and whose record says it was serving. Never throws; a home that fails to
 * answer simply yields no row.
 */
export async function collectFleetVersions(
  homes: readonly string[],
  options: CollectFleetVersionsOptions = {},
): Promise<FleetVersionRow[]> {
  const preRestart = new Set(options.preRestartPids ?? []);
  const rows = await Promise.all(
    homes.map((home) => collectOne(home, options, preRestart).catch(() => null)),
  );
  return rows.filter((row): row is FleetVersionRow => row !== null);
}

/** One printable line per row, in the reference's exact wording. */
export function formatFleetVersionRow(row: FleetVersionRow): string {
  const sha8 = (row.code_sha ?? '').slice(0, 8);
  switch (row.state) {
    case 'current':
      return `✓ ${row.profile} (pid ${row.pid}) @ ${sha8} — up to date`;
    case 'stale':
      return `✗ ${row.profile} (pid ${row.pid}) @ ${sha8} — STALE (pre-update code)`;
    case 'down':
      return `✗ ${row.profile} — DOWN (gateway was running before the update; pid ${row.pid} is gone and nothing replaced it)`;
    default:
      return `? ${row.profile} (pid ${row.pid}) — version unknown (gateway predates version stamping; restart to enable)`;
  }
}

/** True when the update should escalate: some gateway is stale or down (`unknown` never fails). */
export function fleetNeedsAttention(rows: readonly FleetVersionRow[]): boolean {
  return rows.some((row) => row.state === 'stale' || row.state === 'down');
}
