import path from 'node:path';
import { RUNTIME_LOCK_FILE_NAME } from './constants.js';
import { errorCode } from './error-code.js';
import { createFileExclusive, removeStaleFile } from './exclusive-file.js';
import {
  type GatewayLivenessOptions,
  pidRecordNamesLiveGateway,
  pidRecordTextNamesNoGateway,
} from './gateway-liveness.js';
import { type PidRecord, parsePidRecord, readPidRecord } from './pid-record.js';

export function runtimeLockPath(home: string): string {
  return path.join(home, RUNTIME_LOCK_FILE_NAME);
}

export type RuntimeLockResult =
  | { readonly acquired: true }
  | { readonly acquired: false; readonly holder: PidRecord };

/** Create attempts before giving up on a lock that keeps reappearing without a live holder. */
const MAX_LOCK_ATTEMPTS = 5;

/**
 * Takes `<home>/gateway.lock`. Node has no advisory `flock`, so the lock is an exclusive-create
 * file holding the owner's PID record; a file whose owner is dead, recycled, not a gateway (by
 * its command line, see `GatewayLivenessOptions`) or unreadable is cleared (judged again on the
 * file actually removed, so two processes taking over the same stale lock cannot both win) and
 * the create retried. A permission error (a stale root-owned lock) is treated the same way.
 */
export async function acquireRuntimeLock(
  home: string,
  record: PidRecord,
  options: GatewayLivenessOptions = {},
): Promise<RuntimeLockResult> {
  const file = runtimeLockPath(home);
  const content = JSON.stringify(record);
  for (let attempt = 1; ; attempt += 1) {
    try {
      await createFileExclusive(file, content);
      return { acquired: true };
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'EEXIST' && code !== 'EACCES' && code !== 'EPERM') throw error;
      const holder = await readPidRecord(file);
      if (await pidRecordNamesLiveGateway(holder, options)) {
        return { acquired: false, holder: holder as PidRecord };
      }
      if (attempt >= MAX_LOCK_ATTEMPTS) {
        if (holder) return { acquired: false, holder };
        throw error;
      }
      await removeStaleFile(file, (text) => pidRecordTextNamesNoGateway(text, options));
    }
  }
}

/**
 * Removes the lock if (and only if) it names `pid` (default this process), judged under the
 * takeover token on the file actually removed: a process that took the lock over meanwhile keeps
 * it. A taker holding the token past the wait leaves the lock in place (fail closed: a lock
 * naming a process that has gone is cleared by the next taker).
 */
export async function releaseRuntimeLock(home: string, pid: number = process.pid): Promise<void> {
  await removeStaleFile(runtimeLockPath(home), (text) => parsePidRecord(text)?.pid === pid);
}
