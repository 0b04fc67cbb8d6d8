import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { realSleep, systemClock } from './clock.js';
import { readProcessStartTicks } from './process-identity.js';
import { acquireRebuildLock } from './rebuild-lock.js';

async function lockPath(): Promise<string> {
  return path.join((await tempHome()).path, 'state.db.fts_rebuild.lock');
}

const base = { clock: systemClock, sleep: realSleep, pollMs: 10 };

describe('FTS rebuild admission lock', () => {
  it('records the holder and frees the file on release', async () => {
    const file = await lockPath();
    const lock = await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 100 });
    expect(lock).not.toBeNull();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock?.release();
    const again = await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 100 });
    expect(again).not.toBeNull();
    await again?.release();
  });

  it('fails closed (null) while a live holder keeps it past the timeout', async () => {
    const file = await lockPath();
    const holder = await spawnProcess({
      command: process.execPath,
      args: ['-e', 'console.log("up"); setInterval(() => {}, 1000)'],
      readyLine: 'up',
    });
    writeFileSync(
      file,
      JSON.stringify({
        pid: holder.pid,
        startTicks: readProcessStartTicks(holder.pid),
        acquiredAt: 1,
      }),
    );
    expect(await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 150 })).toBeNull();
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(holder.pid);
  });

  it('breaks a lock whose holder is provably dead and takes it at once', async () => {
    const file = await lockPath();
    const gone = await spawnProcess({
      command: process.execPath,
      args: ['-e', 'console.log("up")'],
      readyLine: 'up',
    });
    await gone.exited;
    writeFileSync(file, JSON.stringify({ pid: gone.pid, startTicks: null, acquiredAt: 1 }));
    const lock = await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 0 });
    expect(lock).not.toBeNull();
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid);
    await lock?.release();
  });

  it('treats a recorded start time that differs from the live process as a reused pid', async () => {
    const file = await lockPath();
    writeFileSync(
      file,
      JSON.stringify({ pid: process.pid, startTicks: 'not-the-real-start', acquiredAt: 1 }),
    );
    const lock = await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 0 });
    expect(lock).not.toBeNull();
    await lock?.release();
  });

  it('an unreadable lock record is respected while young and broken once it is old', async () => {
    const file = await lockPath();
    writeFileSync(file, '{"pid": "half-writ');
    expect(await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 0 })).toBeNull();
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const lock = await acquireRebuildLock({ ...base, lockPath: file, timeoutMs: 0 });
    expect(lock).not.toBeNull();
    await lock?.release();
  });
});
