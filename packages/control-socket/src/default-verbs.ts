import { getProcessHermesHome } from '@hermes/config';
import { CONTROL_PROTOCOL_VERSION, GATEWAY_KIND, IDENTIFY_VERB, STATUS_VERB } from './constants.js';
import { canonicalHomePath } from './home-hash.js';
import { type ControlSocketLogger, silentLogger } from './logger.js';
import { readProcessStartTime } from './process-identity.js';
import { profileLabelForHome } from './profile-label.js';
import {
  type CodeIdentity,
  lastWrittenRuntimeStatusAt,
  readRuntimeStatus,
  runtimeStatusPath,
} from './runtime-status.js';
import { detectContainer, detectSupervisorKind } from './supervisor.js';
import type { VerbHandler } from './verb-registry.js';
import type { IdentifyResult, StatusResult } from './wire-schema.js';

/** Supplies the running code's identity; may be async. A throw omits the fields. */
export type CodeIdentityProvider = () => CodeIdentity | Promise<CodeIdentity>;

export interface DefaultVerbOptions {
  /** The process home (default `getProcessHermesHome()`); never a per-task override. */
  readonly home?: string;
  readonly codeIdentity?: CodeIdentityProvider;
  /** For supervisor detection; default `process.env` / `process.argv`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly argv?: readonly string[];
  /** Whether this process runs in a container; detected once when not given. */
  readonly inContainer?: boolean;
  /** Wall clock in milliseconds for `answered_at` (display only). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * How long `identify` may reuse `served_profiles` read from a `gateway_state.json` written by
   * another process (default 1000 ms). Writes made through `writeRuntimeStatus` in this process
   * are seen at once.
   */
  readonly servedProfilesMaxAgeMs?: number;
  /** Told (once per handler, at `warn`) when `codeIdentity` throws. Default: silent. */
  readonly logger?: ControlSocketLogger;
}

/** Logged once when the code identity lookup fails; `identify` then omits both code fields. */
export const CODE_IDENTITY_FAILED_LOG =
  'codeIdentity failed, so identify answers without code_sha and code_version: ';

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Default for `servedProfilesMaxAgeMs`. */
export const SERVED_PROFILES_MAX_AGE_MS = 1000;

function servedProfilesOf(record: Readonly<Record<string, unknown>> | null): string[] | undefined {
  const served = record?.served_profiles;
  if (!Array.isArray(served) || served.length === 0) return undefined;
  return served.every((profile) => typeof profile === 'string') ? [...served] : undefined;
}

/**
 * Builds the `identify` handler. What never changes for a process (canonical home, start time,
 * profile, supervisor) is computed once; each call reads only `gateway_state.json`, asynchronously,
 * so a consumer polling fast never stalls the event loop.
 */
export function createIdentifyHandler(options: DefaultVerbOptions = {}): VerbHandler {
  const home = options.home ?? getProcessHermesHome();
  interface FixedParts {
    readonly protocol: IdentifyResult['protocol'];
    readonly kind: IdentifyResult['kind'];
    readonly pid: number;
    readonly start_time: number | null;
    readonly hermes_home: string;
    readonly profile: string | null;
    readonly supervisor: string;
  }
  let fixedParts: Promise<FixedParts> | undefined;
  // Once known, used directly: awaiting the settled promise again costs a turn of the
  // microtask queue on every call.
  let fixed: FixedParts | undefined;
  const computeFixedParts = async (): Promise<FixedParts> => {
    const canonical = await canonicalHomePath(home);
    return {
      protocol: CONTROL_PROTOCOL_VERSION,
      kind: GATEWAY_KIND,
      pid: process.pid,
      start_time: await readProcessStartTime(process.pid),
      hermes_home: canonical,
      profile: await profileLabelForHome(canonical),
      supervisor: detectSupervisorKind({
        env: options.env ?? process.env,
        argv: options.argv ?? process.argv,
        inContainer: options.inContainer ?? (await detectContainer(options.env ?? process.env)),
      }),
    };
  };
  const maxAgeMs = options.servedProfilesMaxAgeMs ?? SERVED_PROFILES_MAX_AGE_MS;
  const statusFile = runtimeStatusPath(home);
  let identityFailureLogged = false;
  let fromDisk: { readonly value: string[] | undefined; readonly readAt: number } | undefined;
  // A disk read costs several thread-pool round trips, which dominated identify latency; the
  // gateway's own writes are in memory, and another writer's changes are seen within maxAgeMs.
  // `undefined` from the synchronous part means "read the disk".
  const servedProfilesInMemory = (): { value: string[] | undefined } | undefined => {
    const written = lastWrittenRuntimeStatusAt(statusFile);
    if (written !== undefined) return { value: servedProfilesOf(written) };
    if (fromDisk !== undefined && performance.now() - fromDisk.readAt < maxAgeMs) {
      return { value: fromDisk.value };
    }
    return undefined;
  };
  const readServedProfiles = async (): Promise<string[] | undefined> => {
    const value = servedProfilesOf(await readRuntimeStatus(home));
    fromDisk = { value, readAt: performance.now() };
    return value;
  };
  const logIdentityFailure = (error: unknown) => {
    // A lookup failure omits both fields rather than failing identify — but says so once, or a
    // mistake in the provider (an undefined constant) would look like a gateway without a sha.
    if (identityFailureLogged) return;
    identityFailureLogged = true;
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    (options.logger ?? silentLogger).warn(`${CODE_IDENTITY_FAILED_LOG}${reason}`);
  };
  return async (): Promise<IdentifyResult> => {
    if (fixed === undefined) {
      fixedParts ??= computeFixedParts();
      fixed = await fixedParts;
    }
    let codeSha: string | null | undefined;
    let codeVersion: string | null | undefined;
    let identified = false;
    if (options.codeIdentity) {
      try {
        const provided: CodeIdentity | PromiseLike<CodeIdentity> = options.codeIdentity();
        // A synchronous provider is not awaited (no extra microtask turn per call).
        const identity = isPromiseLike(provided) ? await provided : provided;
        codeSha = identity.sha;
        codeVersion = identity.version;
        identified = true;
      } catch (error) {
        logIdentityFailure(error);
      }
    }
    const served = (servedProfilesInMemory() ?? { value: await readServedProfiles() }).value;
    // Built as one literal in the wire order: spreading `fixed` and then adding fields costs
    // several microseconds per call on Node 20.
    const payload: IdentifyResult = {
      protocol: fixed.protocol,
      kind: fixed.kind,
      pid: fixed.pid,
      start_time: fixed.start_time,
      hermes_home: fixed.hermes_home,
      profile: fixed.profile,
      supervisor: fixed.supervisor,
    };
    if (identified) {
      payload.code_sha = codeSha;
      payload.code_version = codeVersion;
    }
    if (served !== undefined) payload.served_profiles = served;
    return payload;
  };
}

/** Builds the `status` handler: `gateway_state.json` read fresh, plus who answered and when. */
export function createStatusHandler(options: DefaultVerbOptions = {}): VerbHandler {
  const home = options.home ?? getProcessHermesHome();
  const now = options.now ?? Date.now;
  return async (): Promise<StatusResult> => {
    const record = (await readRuntimeStatus(home)) ?? {};
    return {
      ...record,
      protocol: CONTROL_PROTOCOL_VERSION,
      answered_at: now() / 1000,
      answering_pid: process.pid,
    };
  };
}

/** The built-in verbs: `identify` and `status`. */
export function createDefaultVerbHandlers(
  options: DefaultVerbOptions = {},
): Record<string, VerbHandler> {
  return {
    [IDENTIFY_VERB]: createIdentifyHandler(options),
    [STATUS_VERB]: createStatusHandler(options),
  };
}
