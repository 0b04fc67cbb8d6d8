import { access } from 'node:fs/promises';

/**
 * How a gateway says it is supervised (the `supervisor` field of `identify`). The gateway declares
 * this from its own environment, so consumers no longer infer it from process-table scans.
 * `docker` means a container whose runtime (restart policy, or s6 inside the image) revives it.
 */
export const SUPERVISOR_KINDS = [
  'systemd',
  'launchd',
  'desktop',
  'external',
  'docker',
  'manual',
] as const;
export type SupervisorKind = (typeof SUPERVISOR_KINDS)[number];

/** Command-line flag a wrapper passes to say it restarts the gateway itself. */
export const EXTERNAL_SUPERVISOR_FLAG = '--external-supervisor';

/** launchd labels of Hermes' own agents start with this. */
export const LAUNCHD_LABEL_PREFIX = 'ai.hermes';

/** Process exit codes the gateway uses; service units and wrappers key off them. */
export const GATEWAY_EXIT_CODES = {
  /** Clean exit, including a planned stop or takeover. */
  clean: 0,
  /** Failure, an unexpected signal (so the service manager revives us), or the shutdown watchdog. */
  failure: 1,
  /** EX_TEMPFAIL: a service restart was requested; also the loop-liveness watchdog. */
  serviceRestart: 75,
  /** EX_CONFIG: token collision or invalid multiplex config; s6 maps it to "stop restarting". */
  fatalConfig: 78,
} as const;
export const GATEWAY_CLEAN_EXIT_CODE = GATEWAY_EXIT_CODES.clean;
export const GATEWAY_FAILURE_EXIT_CODE = GATEWAY_EXIT_CODES.failure;
export const GATEWAY_SERVICE_RESTART_EXIT_CODE = GATEWAY_EXIT_CODES.serviceRestart;
export const GATEWAY_FATAL_CONFIG_EXIT_CODE = GATEWAY_EXIT_CODES.fatalConfig;

export interface SupervisorDetectionInput {
  readonly env?: NodeJS.ProcessEnv;
  readonly argv?: readonly string[];
  readonly platform?: NodeJS.Platform;
  /** Whether the process runs in a container (see `detectContainer`). Default false. */
  readonly inContainer?: boolean;
}

/** Files container runtimes leave at the root: Docker and Podman. */
export const CONTAINER_MARKER_FILES = ['/.dockerenv', '/run/.containerenv'] as const;

/**
 * True inside a container: the `container` variable (set by Podman and systemd-nspawn) or a
 * runtime's marker file. Asynchronous, so callers compute it once and pass it on.
 */
export async function detectContainer(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (isSet(env.container)) return true;
  const found = await Promise.all(
    CONTAINER_MARKER_FILES.map((file) =>
      access(file).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.includes(true);
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

/**
 * First match wins: systemd, launchd (macOS), Hermes Desktop, an external wrapper, a container
 * (or s6 inside the Hermes image), else manual.
 */
export function detectSupervisorKind(input: SupervisorDetectionInput = {}): SupervisorKind {
  const env = input.env ?? process.env;
  const argv = input.argv ?? process.argv;
  const platform = input.platform ?? process.platform;
  if (isSet(env.INVOCATION_ID)) return 'systemd';
  if (
    platform === 'darwin' &&
    ((env.XPC_SERVICE_NAME ?? '').startsWith(LAUNCHD_LABEL_PREFIX) || isSet(env.LAUNCHD_SOCKET))
  ) {
    return 'launchd';
  }
  if (isSet(env.HERMES_DESKTOP_MANAGED)) return 'desktop';
  if (argv.includes(EXTERNAL_SUPERVISOR_FLAG)) return 'external';
  if (input.inContainer || isSet(env.HERMES_S6_SUPERVISED_CHILD)) return 'docker';
  return 'manual';
}

const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/**
 * True when something other than the user will restart this process if it exits: systemd, s6,
 * launchd, or a wrapper that sets `HERMES_GATEWAY_EXTERNAL_SUPERVISOR`.
 */
export function isGatewaySupervisorProcess(env: NodeJS.ProcessEnv = process.env): boolean {
  if (isSet(env.INVOCATION_ID)) return true;
  if (isSet(env.HERMES_S6_SUPERVISED_CHILD)) return true;
  const xpc = env.XPC_SERVICE_NAME;
  if (isSet(xpc) && xpc !== '0') return true;
  return TRUTHY.has((env.HERMES_GATEWAY_EXTERNAL_SUPERVISOR ?? '').trim().toLowerCase());
}

/** How a runtime found by the inventory gets restarted, per supervisor. */
export const RESTART_MECHANISMS = {
  systemd: 'systemctl restart (drain-first SIGUSR1 when supported)',
  launchd: 'launchctl kickstart -k (drain-first, per-label domain)',
  desktop: 'restarted by Hermes Desktop',
  external: 'restarted by its external supervisor',
  docker: 'docker restart <container> (or the container restart policy)',
} as const;

/** The restart hint for a gateway of `profile` under `supervisor`. */
export function restartMechanismFor(supervisor: string, profile: string | null): string {
  if (Object.hasOwn(RESTART_MECHANISMS, supervisor)) {
    return RESTART_MECHANISMS[supervisor as keyof typeof RESTART_MECHANISMS];
  }
  return profile && profile !== 'default'
    ? `hermes -p ${profile} gateway restart`
    : 'hermes gateway restart';
}
