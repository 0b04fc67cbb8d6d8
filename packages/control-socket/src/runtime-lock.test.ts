import { spawnSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { buildPidRecord, parsePidRecord } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { acquireRuntimeLock, runtimeLockPath } from './runtime-lock.js';

/** The PID of a process that has already exited (and been reaped). */
function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', '']);
  if (typeof result.pid !== 'number') throw new Error('could not spawn a short-lived process');
  return result.pid;
}

describe('acquireRuntimeLock takeover', () => {
  it('lets exactly one of many concurrent takers of a dead holder’s lock win, every time', async () => {
    const home = await tempHome();
    const file = runtimeLockPath(home.path);
    const stale = buildPidRecord({ pid: deadPid(), argv: ['dead'], startTime: 1, home: home.path });
    const startTime = await readProcessStartTime(process.pid);
    // Without a serialised takeover a slower taker deletes the lock a faster one just created and
    // both "win"; that shows within a few dozen rounds of eight racers.
    for (let round = 0; round < 60; round += 1) {
      await writeFile(file, JSON.stringify(stale));
      const records = Array.from({ length: 8 }, (_, index) =>
        buildPidRecord({ pid: process.pid, argv: [`racer ${index}`], startTime, home: home.path }),
      );
      const outcomes = await Promise.all(
        records.map((record) => acquireRuntimeLock(home.path, record)),
      );
      const winners = outcomes.flatMap((outcome, index) => (outcome.acquired ? [index] : []));
      expect(winners, `round ${round}`).toHaveLength(1);
      const holder = parsePidRecord(await readFile(file, 'utf8'));
      expect(holder?.argv).toEqual([`racer ${winners[0]}`]);
      for (const outcome of outcomes) {
        if (!outcome.acquired) expect(outcome.holder.argv).toEqual(holder?.argv);
      }
      // Nothing left behind but the lock: no takeover token, no aside or temp files.
      expect(await readdir(home.path)).toEqual(['gateway.lock']);
    }
  }, 60_000);
});
