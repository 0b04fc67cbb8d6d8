import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { BOT_RELAY_DIR, openBotRelay } from '../src/index.js';
import { runFixture } from './processes.js';

// Files may grow to 1024 shell blocks (512 KiB or 1 MiB); the fixture writes 4 MiB.
const FILE_SIZE_LIMIT_BLOCKS = 1024;

/** Runs one relay write in a child whose writes fail midway (EFBIG); returns what it printed. */
async function failingWrite(root: string, ...args: string[]): Promise<Record<string, unknown>> {
  const child = await runFixture('relay-write-failure.ts', [root, ...args], undefined, {
    fileSizeLimitBlocks: FILE_SIZE_LIMIT_BLOCKS,
  });
  const exit = await child.exited;
  expect(exit.code, child.stderr()).toBe(0);
  return JSON.parse(child.stdout().trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

async function listing(root: string): Promise<Record<string, string[]>> {
  const dir = path.join(root, BOT_RELAY_DIR);
  const result: Record<string, string[]> = { '.': (await readdir(dir)).sort() };
  for (const folder of ['outbox', 'claimed', 'replies']) {
    result[folder] = (await readdir(path.join(dir, folder))).sort();
  }
  return result;
}

describe('a bot relay write that fails midway', () => {
  it('leaves no partial or temp file on any write path, and the relay works on', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    const dir = path.join(root, BOT_RELAY_DIR);
    await relay.syncRoster([{ profile: 'work' }]);
    const rosterBefore = await readFile(path.join(dir, 'roster.json'), 'utf8');
    const big = await relay.enqueue({
      toProfile: 'work',
      from: 'peer',
      message: 'y'.repeat(4 << 20),
    });
    const small = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' });
    await relay.drain();
    const before = await listing(root);
    expect(before).toEqual({
      '.': ['claimed', 'outbox', 'replies', 'roster.json'],
      outbox: [],
      claimed: [`${big.id}.json`, `${small.id}.json`].sort(),
      replies: [],
    });

    // The roster: the old one stays whole.
    expect(await failingWrite(root, 'roster')).toMatchObject({
      name: 'SessionStoreError',
      code: 'storage_failed',
      operation: 'roster',
      message: expect.stringContaining('EFBIG'),
    });
    expect(await listing(root)).toEqual(before);
    expect(await readFile(path.join(dir, 'roster.json'), 'utf8')).toBe(rosterBefore);

    // A queued envelope: nothing is queued.
    expect(await failingWrite(root, 'enqueue')).toMatchObject({
      code: 'storage_failed',
      operation: 'queue',
    });
    expect(await listing(root)).toEqual(before);

    // Requeueing a failed attempt: the claim stays as it was.
    expect(await failingWrite(root, 'requeue', big.id)).toMatchObject({
      code: 'storage_failed',
      operation: 'requeue',
    });
    expect(await listing(root)).toEqual(before);
    expect((await relay.claimed(big.id)).attempts).toBe(0);

    // The reply: no reply file (not even a part of one), the claim stays, a retry records it.
    expect(await failingWrite(root, 'reply', small.id)).toMatchObject({
      code: 'storage_failed',
      operation: 'reply',
    });
    expect(await listing(root)).toEqual(before);
    expect(await relay.takeReply(small.id)).toBeUndefined();
    await relay.reply(small.id, { status: 'delivered', text: 'hello back' });
    expect(await relay.takeReply(small.id)).toMatchObject({
      status: 'delivered',
      text: 'hello back',
    });
    expect(await relay.releaseAfterFailure(big.id, 'turn failed')).toBe(true);
    expect((await relay.drain()).envelopes).toEqual([
      expect.objectContaining({ id: big.id, attempts: 1 }),
    ]);
  }, 60_000);

  it('on a file system without hard links, creates nothing when the write fails midway', async () => {
    const root = (await tempHome()).path;
    const target = path.join(root, 'reply.json');
    expect(await failingWrite(root, 'exclusive-without-links', target)).toMatchObject({
      code: 'EFBIG',
    });
    expect(await readdir(root)).toEqual([]);
  }, 30_000);
});
