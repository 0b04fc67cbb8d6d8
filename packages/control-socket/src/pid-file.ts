import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { getProcessHermesHome } from '@hermes/config';
import { PID_FILE_NAME } from './constants.js';
import { errorCode } from './error-code.js';
import {
  createFileExclusive,
  prepareTakeoverTokens,
  removeStaleFile,
  removeStaleFileSync,
} from './exclusive-file.js';
import {
  type GatewayLivenessOptions,
  isLiveGatewayProcess,
  pidRecordNamesLiveGateway,
} from './gateway-liveness.js';
import { canonicalHomePath } from './home-hash.js';
import { buildPidRecord, type PidRecord, parsePidRecord } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { acquireRuntimeLock, releaseRuntimeLock, runtimeLockPath } from './runtime-lock.js';
import { INACTIVE_GATEWAY_STATES, readRuntimeStatus, runtimeStatusPid } from './runtime-status.js';

/** Create attempts before a PID file that keeps reappearing counts as a lost race. */
const MAX_PID_FILE_ATTEMPTS = 3;

export function pidFilePath(home: string): string {
  return path.join(home, PID_FILE_NAME);
}

/** Exact refusal messages (the gateway prints them and exits). */
export function alreadyRunningMessage(pid: number, home: string): string {
  return `Another gateway instance is already running (PID ${pid}, HERMES_HOME=${home}). Use 'hermes gateway restart' to replace it, or 'hermes gateway stop' first.`;
}
export const RUNTIME_LOCK_HELD_MESSAGE =
  'Gateway runtime lock is already held by another instance. Exiting.';
export const PID_FILE_RACE_LOST_MESSAGE =
  'PID file race lost to another gateway instance. Exiting.';

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}

async function recordNamesLiveGateway(
  record: PidRecord | null,
  home: string,
  options: GatewayLivenessOptions,
): Promise<boolean> {
  if (record === null) return false;
  if (record.hermes_home !== undefined && record.hermes_home !== home) return false;
  return pidRecordNamesLiveGateway(record, options);
}

export interface GetRunningPidOptions extends GatewayLivenessOptions {
  /** Remove invalid and dead PID/lock files (default true). */
  readonly cleanupStale?: boolean;
}

/**
 * The PID of the live gateway that owns `home`, or `null`. A record counts only if its process
 * is alive, its start-time fingerprint still matches (a recycled PID is not a gateway), its
 * command line is a gateway's (`isGatewayCommandLine`, or the predicate given) and it names this
 * home. Without a live lock or PID record, a live `gateway_state.json` writer counts, judged the
 * same way.
 */
export async function getRunningPid(
  home: string,
  options: GetRunningPidOptions = {},
): Promise<number | null> {
  const canonical = await canonicalHomePath(home);
  const files = [runtimeLockPath(home), pidFilePath(home)];
  const texts = await Promise.all(files.map(readText));
  for (const text of texts) {
    const record = text === null ? null : parsePidRecord(text);
    if (await recordNamesLiveGateway(record, canonical, options)) return (record as PidRecord).pid;
  }
  const status = await readRuntimeStatus(home);
  const statusPid = status ? runtimeStatusPid(status) : null;
  const statusNamesLiveGateway =
    status !== null &&
    statusPid !== null &&
    typeof status.gateway_state === 'string' &&
    !INACTIVE_GATEWAY_STATES.has(status.gateway_state) &&
    (status.hermes_home === undefined || status.hermes_home === canonical) &&
    (await isLiveGatewayProcess(
      statusPid,
      typeof status.start_time === 'number' ? status.start_time : null,
      options,
    ));
  if (options.cleanupStale ?? true) {
    // Only a file still holding exactly what we judged stale is removed (checked on the file
    // actually removed), so a record a new gateway wrote in the meantime survives.
    await Promise.all(
      files.map(async (file, index) => {
        const judged = texts[index];
        if (judged === null || judged === undefined) return;
        await removeStaleFile(file, async (text) => text === judged).catch(() => {});
      }),
    );
  }
  return statusNamesLiveGateway ? statusPid : null;
}

export interface ClaimPidFileOptions extends GatewayLivenessOptions {
  /** The process home; default `getProcessHermesHome()`. Never pass a per-task override. */
  readonly home?: string;
  readonly argv?: readonly string[];
  /** Remove the PID file and lock when the process exits (default true). */
  readonly releaseOnExit?: boolean;
}

export interface PidFileClaim {
  readonly claimed: true;
  readonly record: PidRecord;
  /**
   * Gives this claim up. The PID file and lock are removed (if they still name this process)
   * when the last claim this process holds on the home is released.
   */
  release(): Promise<void>;
  /** Synchronous, unconditional twin of `release`, for `process.on('exit')`. */
  releaseSync(): void;
}

export interface PidFileRefusal {
  readonly claimed: false;
  readonly reason: 'already_running' | 'lock_held' | 'race_lost';
  /** The live gateway's PID, when known. */
  readonly pid: number | null;
  readonly message: string;
}

/**
 * The exit-hook removal: under the takeover token like every other, but without waiting for it
 * (a token held at exit leaves the file, which names a process about to be gone: the next taker
 * clears it).
 */
function removeIfOursSync(file: string, pid: number): void {
  try {
    removeStaleFileSync(file, (text) => parsePidRecord(text)?.pid === pid);
  } catch {
    // Best effort on the way out.
  }
}

/** What this process holds on one home: the record it wrote and how many claims share it. */
interface HeldHome {
  record: PidRecord;
  claims: number;
}

// Process-wide (shared by every copy of this package loaded in the process, like the marker
// symbols of the error classes): a second claim on a home this process already holds shares it.
const HELD_HOMES_KEY = Symbol.for('@hermes/control-socket.held-homes');
function processHeldHomes(): Map<string, HeldHome> {
  const slots = globalThis as Record<symbol, Map<string, HeldHome> | undefined>;
  const existing = slots[HELD_HOMES_KEY];
  if (existing !== undefined) return existing;
  const created = new Map<string, HeldHome>();
  slots[HELD_HOMES_KEY] = created;
  return created;
}
const heldHomes = processHeldHomes();

async function filesNameThisProcess(home: string): Promise<boolean> {
  const [pidText, lockText] = await Promise.all([
    readText(pidFilePath(home)),
    readText(runtimeLockPath(home)),
  ]);
  return (
    parsePidRecord(pidText ?? '')?.pid === process.pid &&
    parsePidRecord(lockText ?? '')?.pid === process.pid
  );
}

function shareHeldHome(home: string, held: HeldHome, options: ClaimPidFileOptions): PidFileClaim {
  held.claims += 1;
  const file = pidFilePath(home);
  const releaseSync = () => {
    removeIfOursSync(file, held.record.pid);
    removeIfOursSync(runtimeLockPath(home), held.record.pid);
  };
  const releaseOnExit = options.releaseOnExit ?? true;
  if (releaseOnExit) process.once('exit', releaseSync);
  let released = false;
  return {
    claimed: true,
    record: held.record,
    releaseSync,
    async release() {
      if (released) return;
      released = true;
      if (releaseOnExit) process.removeListener('exit', releaseSync);
      held.claims -= 1;
      if (held.claims > 0) return;
      if (heldHomes.get(home) === held) heldHomes.delete(home);
      await removePidFile(home, held.record.pid);
      await releaseRuntimeLock(home, held.record.pid);
    },
  };
}

/**
 * Makes this process the gateway of `home`: refuses while another live gateway owns it, takes
 * the runtime lock, then creates `gateway.pid` exclusively. A PID file left by a dead or
 * recycled process, or by a live process that is not a gateway (judged by its command line,
 * see `isGatewayCommandLine`), is taken over; a live gateway's means the race was lost. Claiming
 * a home this process already holds succeeds and shares the claim: the files go when the last
 * claim is released.
 */
export async function claimPidFile(
  options: ClaimPidFileOptions = {},
): Promise<PidFileClaim | PidFileRefusal> {
  const home = await canonicalHomePath(options.home ?? getProcessHermesHome());
  // So that the exit hook's token names this process's start time, like every other token.
  await prepareTakeoverTokens();
  const held = heldHomes.get(home);
  if (held !== undefined && (await filesNameThisProcess(home))) {
    return shareHeldHome(home, held, options);
  }
  const running = await getRunningPid(home, options);
  if (running !== null && running !== process.pid) {
    return {
      claimed: false,
      reason: 'already_running',
      pid: running,
      message: alreadyRunningMessage(running, home),
    };
  }
  const record = buildPidRecord({
    pid: process.pid,
    argv: options.argv ?? process.argv,
    startTime: await readProcessStartTime(process.pid),
    home,
  });
  let lock = await acquireRuntimeLock(home, record, options);
  if (!lock.acquired && lock.holder.pid === process.pid) {
    // This process's own lock, though no claim here holds it (one was dropped without release):
    // a leftover, never another gateway's.
    await removeStaleFile(
      runtimeLockPath(home),
      async (text) => parsePidRecord(text)?.pid === process.pid,
    );
    lock = await acquireRuntimeLock(home, record, options);
  }
  if (!lock.acquired) {
    return {
      claimed: false,
      reason: 'lock_held',
      pid: lock.holder.pid,
      message: RUNTIME_LOCK_HELD_MESSAGE,
    };
  }
  const file = pidFilePath(home);
  // Another live gateway's record; our own PID's record is a leftover of this process.
  const namesOtherLiveGateway = async (existing: PidRecord | null) =>
    existing !== null &&
    existing.pid !== process.pid &&
    (await recordNamesLiveGateway(existing, home, options));
  for (let attempt = 1; ; attempt += 1) {
    try {
      await createFileExclusive(file, JSON.stringify(record));
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') {
        await releaseRuntimeLock(home);
        throw error;
      }
      const existing = parsePidRecord((await readText(file)) ?? '');
      const live = await namesOtherLiveGateway(existing);
      if (live || attempt >= MAX_PID_FILE_ATTEMPTS) {
        await releaseRuntimeLock(home);
        return {
          claimed: false,
          reason: 'race_lost',
          pid: live ? (existing as PidRecord).pid : null,
          message: PID_FILE_RACE_LOST_MESSAGE,
        };
      }
      // Judged again on the file actually removed: a racer's fresh record is never deleted.
      await removeStaleFile(
        file,
        async (text) => !(await namesOtherLiveGateway(parsePidRecord(text))),
      );
    }
  }
  // Claims that still shared an older record of this home (its files were removed under them)
  // share the new one.
  const entry = held ?? { record, claims: 0 };
  entry.record = record;
  heldHomes.set(home, entry);
  return shareHeldHome(home, entry, options);
}

/**
 * Removes `<home>/gateway.pid` only if it names `pid` (a successor may already own it), judged
 * under the takeover token on the file actually removed, so a successor's file written since is
 * never the one removed.
 */
export async function removePidFile(home: string, pid: number = process.pid): Promise<void> {
  await removeStaleFile(pidFilePath(home), (text) => parsePidRecord(text)?.pid === pid);
}
