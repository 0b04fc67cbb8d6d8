import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import * as v from 'valibot';
import type { Clock, Sleep } from './clock.js';
import { FTS_REBUILD_LOCK_ORPHAN_MS, FTS_REBUILD_LOCK_POLL_MS } from './limits.js';
import { currentProcessIdentity, isProcessAlive } from './process-identity.js';

export interface RebuildLockRecord {
  readonly pid: number;
  readonly startTicks: string | null;
  readonly acquiredAt: number;
}

export interface AcquireRebuildLockOptions {
  readonly lockPath: string;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly sleep: Sleep;
  readonly pollMs?: number;
}

export interface RebuildLock {
  release(): Promise<void>;
}

// The lock file is written by another process: validated before it decides anything.
const LockRecordSchema = v.object({
  pid: v.pipe(v.number(), v.integer()),
  startTicks: v.optional(v.nullable(v.string()), null),
  acquiredAt: v.number(),
});

function parseRecord(text: string): RebuildLockRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null; // Unreadable: judged by age below.
  }
  const parsed = v.safeParse(LockRecordSchema, value);
  return parsed.success ? parsed.output : null;
}

/**
 * Cross-process admission for FTS rebuilds: an exclusive-create lock file holding the holder's
 * pid and start time. It fails closed — null after the timeout — and breaks a lock only when its
 * holder is provably dead (gone, a zombie, or a reused pid) or an unreadable record is older than
 * a crashed writer could leave it.
 */
export async function acquireRebuildLock(
  options: AcquireRebuildLockOptions,
): Promise<RebuildLock | null> {
  const self = currentProcessIdentity();
  const record: RebuildLockRecord = {
    pid: self.pid,
    startTicks: self.startTicks,
    acquiredAt: options.clock.now(),
  };
  const deadline = options.clock.monotonicMs() + options.timeoutMs;
  for (;;) {
    try {
      await writeFile(options.lockPath, JSON.stringify(record), { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await unlink(options.lockPath).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return null;
    }
    if (await isOrphaned(options.lockPath, options.clock)) {
      await unlink(options.lockPath).catch(() => undefined);
      continue; // Re-acquire at once.
    }
    if (options.clock.monotonicMs() >= deadline) return null;
    await options.sleep(options.pollMs ?? FTS_REBUILD_LOCK_POLL_MS);
  }
}

async function isOrphaned(lockPath: string, clock: Clock): Promise<boolean> {
  let text: string;
  let modifiedMs: number;
  try {
    [text, modifiedMs] = await Promise.all([
      readFile(lockPath, 'utf8'),
      stat(lockPath).then((info) => info.mtimeMs),
    ]);
  } catch {
    return false; // Vanished or unreadable: retry the create instead of deleting blindly.
  }
  const holder = parseRecord(text);
  if (!holder) return clock.now() * 1000 - modifiedMs > FTS_REBUILD_LOCK_ORPHAN_MS;
  return !isProcessAlive({ pid: holder.pid, startTicks: holder.startTicks });
}
