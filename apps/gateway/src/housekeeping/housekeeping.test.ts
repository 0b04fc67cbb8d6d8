import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupBotDmCache,
  cleanupImageCache,
  cleanupMediaCache,
  cleanupScreenshotCache,
  dmDirectory,
  MEDIA_CACHES,
  removeStaleFiles,
} from './cache-cleanup.js';
import { startHousekeeping } from './housekeeping.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function tempRoot() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hk-'));
  roots.push(root);
  return root;
}

async function file(target: string, ageHours: number) {
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, 'x');
  const at = new Date(Date.now() - ageHours * 3_600_000);
  await utimes(target, at, at);
}

const quiet = pino({ level: 'silent' });

describe('cache cleanup contract', () => {
  it('every media hook takes maxAgeHours (default 24) and returns how many stale files it removed', async () => {
    const home = await tempRoot();
    await file(path.join(home, 'cache/images/img_0123456789ab.png'), 25);
    await file(path.join(home, 'cache/images/img_ba9876543210.png'), 23);
    await file(path.join(home, 'cache/images/nested/old.png'), 48); // not a regular file of the dir
    expect(await cleanupImageCache(24, home)).toBe(1);
    expect((await readdir(path.join(home, 'cache/images'))).sort()).toEqual([
      'img_ba9876543210.png',
      'nested',
    ]);
    expect(await cleanupImageCache(1, home)).toBe(1);
    for (const cache of Object.keys(MEDIA_CACHES) as (keyof typeof MEDIA_CACHES)[])
      expect(typeof (await cleanupMediaCache(cache, 24, home))).toBe('number');
  });

  it('sweeps the legacy directory only when it still has content, and skips what it cannot unlink', async () => {
    const home = await tempRoot();
    await file(path.join(home, 'browser_screenshots/shot_0123456789ab.png'), 30);
    await file(path.join(home, 'cache/screenshots/shot_aaaaaaaaaaaa.png'), 30);
    expect(await cleanupScreenshotCache(24, home)).toBe(2);
    expect(await cleanupScreenshotCache(24, home)).toBe(0); // nothing left, a missing dir is 0
    // A file that vanishes between listing and unlink is skipped, not counted.
    const directory = path.join(home, 'cache/images');
    await file(path.join(directory, 'gone.png'), 30);
    expect(
      await removeStaleFiles(directory, 24, {
        match: (name) => {
          void rm(path.join(directory, name), { force: true });
          return true;
        },
      }),
    ).toBeLessThanOrEqual(1);
  });

  it('the bot DM sweep removes stale staged DMs in the temp root and the per-user directory only', async () => {
    const tmp = await tempRoot();
    await file(path.join(tmp, 'hermes-dm-abc.txt'), 30);
    await file(path.join(tmp, 'hermes-relay-dm-abc.txt'), 30);
    await file(path.join(tmp, 'hermes-relay-dm-new.txt'), 1);
    await file(path.join(tmp, 'unrelated.txt'), 30);
    const dm = dmDirectory(tmp);
    await file(path.join(dm, 'dm-1.txt'), 30);
    await file(path.join(dm, 'bot.live.json'), 30);
    await file(path.join(dm, 'x.signal'), 30);
    await file(path.join(dm, 'keep.bin'), 30);
    expect(await cleanupBotDmCache(24, tmp)).toBe(5);
    expect((await readdir(tmp)).sort()).toEqual(
      [path.basename(dm), 'hermes-relay-dm-new.txt', 'unrelated.txt'].sort(),
    );
    expect(await readdir(dm)).toEqual(['keep.bin']);
  });
});

describe('housekeeping loop', () => {
  it('runs each job on its cadence, survives a failing job, and stops promptly mid-wait', async () => {
    const runs: string[] = [];
    const loop = startHousekeeping({
      intervalMs: 20,
      logger: quiet,
      jobs: [
        { name: 'every', everyTicks: 1, run: async () => runs.push('every') },
        {
          name: 'broken',
          everyTicks: 1,
          run: async () => {
            throw new Error('boom');
          },
        },
        { name: 'third', everyTicks: 3, run: async () => runs.push('third') },
      ],
    });
    while (loop.ticks < 6) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(runs.filter((name) => name === 'third').length).toBeGreaterThanOrEqual(2);
    expect(runs.filter((name) => name === 'every').length).toBeGreaterThanOrEqual(6);
    const slow = startHousekeeping({ intervalMs: 60_000, logger: quiet, jobs: [] });
    const started = performance.now();
    await slow.stop();
    expect(performance.now() - started).toBeLessThan(100);
    await loop.stop();
  });

  it('hands the stop signal to a running job and waits for it to return', async () => {
    let sawAbort = false;
    const loop = startHousekeeping({
      intervalMs: 5,
      logger: quiet,
      jobs: [
        {
          name: 'long',
          everyTicks: 1,
          run: (signal) =>
            new Promise<void>((resolve) => {
              signal.addEventListener('abort', () => {
                sawAbort = true;
                resolve();
              });
            }),
        },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await loop.stop();
    expect(sawAbort).toBe(true);
  });
});
