import { readFileSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { getProcessHermesHome } from '@hermes/config';
import { PID_FILE_NAME } from './constants.js';
import { createFileExclusive, removeStaleFile } from './exclusive-file.js';
import { canonicalHomePath } from './home-hash.js';
import { buildPidRecord, type PidRecord, parsePidRecord, pidRecordIsLive } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { acquireRuntimeLock, releaseRuntimeLock, runtimeLockPath } from './runtime-lock.js';
import {
  INACTIVE_GATEWAY_STATES,
  readRuntimeStatus,
  runtimeStatusPid,
  runtimeStatusPidIsLive,
} from './runtime-status.js';

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

async function recordNamesLiveGateway(record: PidRecord | null, home: string): Promise<boolean> {
  if (record === null) return false;
  if (record.hermes_home !== undefined && record.hermes_home !== home) return false;
  return pidRecordIsLive(record);
}

export interface GetRunningPidOptions {
  /** Remove invalid and dead PID/lock files (default true). */
  readonly cleanupStale?: boolean;
}

/**
 * The PID of the live gateway that owns `home`, or `null`. A record counts only if its process
 * is alive, its start-time fingerprint still matches (a recycled PID is not a gateway) and it
 * names this home. Without a live lock or PID record, a live `gateway_state.json` writer counts.
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
    if (await recordNamesLiveGateway(record, canonical)) return (record as PidRecord).pid;
  }
  const status = await readRuntimeStatus(home);
  const statusPid = status ? runtimeStatusPid(status) : null;
  const statusNamesLiveGateway =
    status !== null &&
    statusPid !== null &&
    typeof status.gateway_state === 'string' &&
    !INACTIVE_GATEWAY_STATES.has(status.gateway_state) &&
    (status.hermes_home === undefined || status.hermes_home === canonical) &&
    (await runtimeStatusPidIsLive(status));
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

export interface ClaimPidFileOptions {
  /** The process home; default `getProcessHermesHome()`. Never pass a per-task override. */
  readonly home?: string;
  readonly argv?: readonly string[];
  /** Remove the PID file and lock when the process exits (default true). */
  readonly releaseOnExit?: boolean;
}

export interface PidFileClaim {
  readonly claimed: true;
  readonly record: PidRecord;
  /** Removes the PID file and lock if they still name this process. */
  release(): Promise<void>;
  /** Synchronous twin of `release`, for `process.on('exit')`. */
  releaseSync(): void;
}

export interface PidFileRefusal {
  readonly claimed: false;
  readonly reason: 'already_running' | 'lock_held' | 'race_lost';
  /** The live gateway's PID, when known. */
  readonly pid: number | null;
  readonly message: string;
}

function removeIfOursSync(file: string, pid: number): void {
  try {
    if (parsePidRecord(readFileSync(file, 'utf8'))?.pid === pid) rmSync(file, { force: true });
  } catch {
    // Already gone or unreadable: nothing of ours to remove.
  }
}

/**
 * Makes this process the gateway of `home`: refuses while another live gateway owns it, takes
 * the runtime lock, then creates `gateway.pid` exclusively. A PID file left by a dead or
 * recycled process is taken over; a live one means the race was lost.
 */
export async function claimPidFile(
  options: ClaimPidFileOptions = {},
): Promise<PidFileClaim | PidFileRefusal> {
  const home = await canonicalHomePath(options.home ?? getProcessHermesHome());
  const running = await getRunningPid(home);
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
  const lock = await acquireRuntimeLock(home, record);
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
    (await recordNamesLiveGateway(existing, home));
  for (let attempt = 1; ; attempt += 1) {
    try {
      await createFileExclusive(file, JSON.stringify(record));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
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
  const releaseSync = () => {
    removeIfOursSync(file, record.pid);
    removeIfOursSync(runtimeLockPath(home), record.pid);
  };
  if (options.releaseOnExit ?? true) process.once('exit', releaseSync);
  return {
    claimed: true,
    record,
    releaseSync,
    async release() {
      if (options.releaseOnExit ?? true) process.removeListener('exit', releaseSync);
      await removePidFile(home, record.pid);
      await releaseRuntimeLock(home, record.pid);
    },
  };
}

/** Removes `<home>/gateway.pid` only if it names `pid` (a successor may already own it). */
export async function removePidFile(home: string, pid: number = process.pid): Promise<void> {
  const file = pidFilePath(home);
  if (parsePidRecord((await readText(file)) ?? '')?.pid === pid) await rm(file, { force: true });
}
