import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock, ancestorNodeModules, defaultCacheDirectory } from './cache.js';

const folders: string[] = [];
const folder = () => {
  const created = mkdtempSync(path.join(tmpdir(), 'pack-check-cache-'));
  folders.push(created);
  return created;
};
afterEach(() => {
  for (const created of folders.splice(0)) rmSync(created, { recursive: true, force: true });
});

describe('acquireLock', () => {
  it('lets one run in at a time: the second waits until the first releases', async () => {
    const directory = folder();
    const releaseFirst = await acquireLock(directory);
    let waitedFor: number | undefined;
    let secondIn = false;
    const second = acquireLock(directory, {
      onWait: (pid) => {
        waitedFor = pid;
      },
    }).then((release) => {
      secondIn = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(secondIn).toBe(false);
    expect(waitedFor).toBe(process.pid);
    releaseFirst();
    const releaseSecond = await second;
    expect(secondIn).toBe(true);
    releaseSecond();
    expect(existsSync(path.join(directory, 'lock'))).toBe(false);
  });

  it('takes over the lock of a process that died holding it', async () => {
    const directory = folder();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    mkdirSync(path.join(directory, 'lock'));
    writeFileSync(path.join(directory, 'lock', 'pid'), dead.stdout);
    const release = await acquireLock(directory, { timeoutMs: 5_000 });
    release();
  });

  it('gives up after its timeout while a live process holds the lock', async () => {
    const directory = folder();
    const release = await acquireLock(directory);
    await expect(acquireLock(directory, { timeoutMs: 600 })).rejects.toThrow(
      `another package check (pid ${process.pid})`,
    );
    release();
  });
});

describe('where the scratch project lives', () => {
  it('defaults to the user cache, outside any workspace, and honours the override', () => {
    expect(defaultCacheDirectory({ HOME: '/home/ada' })).toMatch(/hermes-ts\/pack-check$/);
    expect(defaultCacheDirectory({ XDG_CACHE_HOME: '/var/cache/ada' })).toBe(
      '/var/cache/ada/hermes-ts/pack-check',
    );
    expect(defaultCacheDirectory({ HERMES_PACK_CHECK_CACHE: '/tmp/x' })).toBe('/tmp/x');
  });

  it('finds a node_modules folder above a directory (a scratch project there would use it)', () => {
    const root = folder();
    mkdirSync(path.join(root, 'node_modules'));
    mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    expect(ancestorNodeModules(path.join(root, 'a', 'b'))).toBe(path.join(root, 'node_modules'));
  });
});
