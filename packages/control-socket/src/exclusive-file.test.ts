import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  createFileExclusive,
  removeStaleFile,
  takeoverTokenPath,
  withTakeoverTokenSync,
} from './exclusive-file.js';
import { readProcessStartTime } from './process-identity.js';

/** A takeover token held by `owner`: a folder with its owner file, or the earlier single file. */
async function plantToken(
  token: string,
  owner: { pid: number | undefined; start_time: number | null },
  format: 'folder' | 'file',
): Promise<void> {
  if (format === 'file') {
    await writeFile(token, JSON.stringify(owner));
    return;
  }
  await mkdir(token);
  await writeFile(path.join(token, `${owner.pid}.0123456789ab.owner`), JSON.stringify(owner));
}

describe('createFileExclusive', () => {
  it('creates the file with its full content, private to its owner, and leaves no temp file', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.pid');
    await createFileExclusive(target, '{"pid":42}');
    expect(await readFile(target, 'utf8')).toBe('{"pid":42}');
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await readdir(home.path)).toEqual(['gateway.pid']);
  });

  it('fails with EEXIST and leaves an existing file untouched', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.pid');
    await writeFile(target, 'first');
    await expect(createFileExclusive(target, 'second')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(target, 'utf8')).toBe('first');
    expect(await readdir(home.path)).toEqual(['gateway.pid']);
  });

  it('lets exactly one of many concurrent creators win', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) => createFileExclusive(target, `writer ${index}`)),
    );
    const winners = outcomes.flatMap((outcome, index) =>
      outcome.status === 'fulfilled' ? [index] : [],
    );
    expect(winners).toHaveLength(1);
    expect(await readFile(target, 'utf8')).toBe(`writer ${winners[0]}`);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'EEXIST' });
    }
    expect(await readdir(home.path)).toEqual(['gateway.lock']);
  });
});

describe('removeStaleFile', () => {
  const isStale = async (text: string) => text.startsWith('dead');

  it('removes a file that is stale and reports the path free', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    await writeFile(target, 'dead holder');
    expect(await removeStaleFile(target, isStale)).toBe(true);
    expect(await readdir(home.path)).toEqual([]);
  });

  it('judges the file it removes, so a fresh file that replaced the stale one survives', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    await writeFile(target, 'dead holder');
    // A slower taker read "dead holder" and judged it stale; meanwhile a faster one replaced it.
    expect(await isStale(await readFile(target, 'utf8'))).toBe(true);
    await rm(target);
    await createFileExclusive(target, 'live holder');
    expect(await removeStaleFile(target, isStale)).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('live holder');
    expect(await readdir(home.path)).toEqual(['gateway.lock']);
  });

  it('reports the path free when the file is already gone', async () => {
    const home = await tempHome();
    expect(await removeStaleFile(path.join(home.path, 'gateway.pid'), isStale)).toBe(true);
  });

  it('lets only one of several concurrent takers remove the same stale file', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    await writeFile(target, 'dead holder');
    let judged = 0;
    const countingJudge = async (text: string) => {
      judged += 1;
      return isStale(text);
    };
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => removeStaleFile(target, countingJudge)),
    );
    expect(outcomes.every((free) => free)).toBe(true);
    // Only the taker whose atomic move got the file judged (and removed) it.
    expect(judged).toBe(1);
    expect(await readdir(home.path)).toEqual([]);
  });

  it.each([
    ['a token folder', 'folder'],
    ['a token file of the earlier format', 'file'],
  ] as const)(
    'clears %s left by a taker that died mid-takeover, then takes over',
    async (_name, format) => {
      const home = await tempHome();
      const target = path.join(home.path, 'gateway.lock');
      await writeFile(target, 'dead holder');
      const exited = spawnSync(process.execPath, ['-e', '']).pid;
      await plantToken(takeoverTokenPath(target), { pid: exited, start_time: 1 }, format);
      expect(await removeStaleFile(target, isStale)).toBe(true);
      expect(await readdir(home.path)).toEqual([]);
    },
  );

  it('takes over an empty token folder (its holder died between the two steps of releasing it)', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    await writeFile(target, 'dead holder');
    await mkdir(takeoverTokenPath(target));
    expect(await removeStaleFile(target, isStale)).toBe(true);
    expect(await readdir(home.path)).toEqual([]);
  });

  it.each([
    ['a token folder', 'folder'],
    ['a token file of the earlier format', 'file'],
  ] as const)(
    'waits for a live taker’s token (%s) and, past the wait, fails closed without removing anything',
    async (_name, format) => {
      const home = await tempHome();
      const target = path.join(home.path, 'gateway.lock');
      await writeFile(target, 'dead holder');
      const token = takeoverTokenPath(target);
      const live = { pid: process.pid, start_time: await readProcessStartTime(process.pid) };
      await plantToken(token, live, format);
      expect(await removeStaleFile(target, isStale, { waitMs: 50 })).toBe(false);
      expect(await readFile(target, 'utf8')).toBe('dead holder');
      // The live taker finishes (its token goes): the next taker proceeds.
      const waiting = removeStaleFile(target, isStale, { waitMs: 5000 });
      await new Promise((resolve) => setTimeout(resolve, 30));
      await rm(token, { recursive: true });
      expect(await waiting).toBe(true);
      expect(await readdir(home.path)).toEqual([]);
    },
  );
});

describe('withTakeoverTokenSync', () => {
  it('takes a free token and leaves nothing behind', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    expect(withTakeoverTokenSync(target, () => 'held')).toEqual({ taken: true, value: 'held' });
    expect(await readdir(home.path)).toEqual([]);
  });

  it('does not wait for a held token: it runs nothing and leaves the holder’s token in place', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'gateway.lock');
    const token = takeoverTokenPath(target);
    const live = { pid: process.pid, start_time: await readProcessStartTime(process.pid) };
    await plantToken(token, live, 'folder');
    let ran = false;
    expect(
      withTakeoverTokenSync(target, () => {
        ran = true;
      }),
    ).toEqual({ taken: false });
    expect(ran).toBe(false);
    expect(await readdir(home.path)).toEqual([path.basename(token)]);
    expect(await readdir(token)).toHaveLength(1);
  });
});
