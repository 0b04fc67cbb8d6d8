import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { RUNTIME_LOCK_FILE_NAME } from './constants.js';
import { createFileExclusive } from './exclusive-file.js';
import { type PidRecord, parsePidRecord } from './pid-record.js';
import { isRecordedProcessLive } from './process-identity.js';

export function runtimeLockPath(home: string): string {
  return path.join(home, RUNTIME_LOCK_FILE_NAME);
}

export type RuntimeLockResult =
  | { readonly acquired: true }
  | { readonly acquired: false; readonly holder: PidRecord };

/**
 * Takes `<home>/gateway.lock`. Node has no advisory `flock`, so the lock is an exclusive-create
 * file holding the owner's PID record; a file whose owner is dead, recycled or unreadable is
 * cleared and the create retried once. A permission error (a stale root-owned lock) is treated
 * the same way.
 */
export async function acquireRuntimeLock(
  home: string,
  record: PidRecord,
): Promise<RuntimeLockResult> {
  const file = runtimeLockPath(home);
  const content = JSON.stringify(record);
  for (let attempt = 0; ; attempt += 1) {
    try {
      await createFileExclusive(file, content);
      return { acquired: true };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'EACCES' && code !== 'EPERM') throw error;
      if (attempt > 0) {
        const holder = await readLockHolder(file);
        if (holder) return { acquired: false, holder };
        throw error;
      }
      if (code === 'EEXIST') {
        const holder = await readLockHolder(file);
        if (holder && (await isRecordedProcessLive(holder.pid, holder.start_time))) {
          return { acquired: false, holder };
        }
      }
      await rm(file, { force: true });
    }
  }
}

async function readLockHolder(file: string): Promise<PidRecord | null> {
  try {
    return parsePidRecord(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Removes the lock if (and only if) this process holds it. */
export async function releaseRuntimeLock(home: string, pid: number = process.pid): Promise<void> {
  const file = runtimeLockPath(home);
  const holder = await readLockHolder(file);
  if (holder?.pid === pid) await rm(file, { force: true });
}
