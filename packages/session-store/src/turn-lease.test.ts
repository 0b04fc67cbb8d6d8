import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { openSessionStore, TURN_LEASE_TTL_SECONDS } from './index.js';

async function deadPid(): Promise<number> {
  const child = await spawnProcess({ command: process.execPath, args: ['-e', ''] });
  await child.exited;
  return child.pid;
}

describe('turn lease', () => {
  it('admits one holder per conversation, whichever id of the compression lineage is used', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli' });
    const tip = await store.publishCompressionChild({ parentId: 'root', summary: 'summary' });
    await store.createSession({ id: 'other', source: 'cli' });
    const holder = await store.acquireTurnLease(tip);
    expect(holder).toMatch(new RegExp(`^pid=${process.pid} token=[0-9a-f]+$`));
    expect(await store.acquireTurnLease('root')).toBeNull();
    expect(await store.acquireTurnLease(tip, { holder: 'pid=1 token=other' })).toBeNull();
    // A different conversation is unaffected.
    expect(await store.acquireTurnLease('other')).not.toBeNull();
    const lease = store.getTurnLease('root');
    expect(lease).toMatchObject({ conversationId: 'root', holder, active: true });
    expect((lease?.expiresAt ?? 0) - (lease?.acquiredAt ?? 0)).toBeCloseTo(
      TURN_LEASE_TTL_SECONDS,
      3,
    );
    // The holder may take it again (extends it); only the holder may release it.
    expect(await store.acquireTurnLease('root', { holder: holder ?? '' })).toBe(holder);
    expect(await store.releaseTurnLease(tip, 'pid=1 token=other')).toBe(false);
    expect(await store.releaseTurnLease(tip, holder ?? '')).toBe(true);
    expect(store.getTurnLease(tip)).toBeNull();
    expect(await store.acquireTurnLease('root')).not.toBeNull();
  });

  it('is taken over once expired', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const first = await store.acquireTurnLease('s', { holder: 'pid=1 token=a', ttlSeconds: 0.5 });
    expect(first).toBe('pid=1 token=a');
    expect(await store.acquireTurnLease('s')).toBeNull(); // pid 1 is alive
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(store.getTurnLease('s')?.active).toBe(false);
    const second = await store.acquireTurnLease('s');
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(await store.renewTurnLease('s', 'pid=1 token=a')).toBe(false);
  });

  it('is taken over from a holder whose process is dead', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const dead = `pid=${await deadPid()} token=gone`;
    expect(await store.acquireTurnLease('s', { holder: dead })).toBe(dead);
    expect(store.getTurnLease('s')?.active).toBe(false);
    const taker = await store.acquireTurnLease('s');
    expect(taker).not.toBeNull();
    expect(store.getTurnLease('s')).toMatchObject({ holder: taker, active: true });
  });

  it('renews only while held', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const holder = (await store.acquireTurnLease('s', { ttlSeconds: 1 })) ?? '';
    const before = store.getTurnLease('s')?.expiresAt ?? 0;
    expect(await store.renewTurnLease('s', holder, { ttlSeconds: 600 })).toBe(true);
    expect((store.getTurnLease('s')?.expiresAt ?? 0) - before).toBeGreaterThan(500);
    expect(await store.renewTurnLease('s', 'pid=1 token=not-me')).toBe(false);
    await store.releaseTurnLease('s', holder);
    expect(await store.renewTurnLease('s', holder)).toBe(false);
  });

  it('refuses unknown sessions and invalid options', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await expect(store.acquireTurnLease('missing')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    for (const ttlSeconds of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.acquireTurnLease('s', { ttlSeconds })).rejects.toMatchObject({
        code: 'invalid_argument',
      });
    }
    await expect(store.acquireTurnLease('s', { holder: '' })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(store.getTurnLease('s')).toBeNull();
  });

  it("a session created again under a deleted conversation's id is not refused by its lease", async () => {
    const { store } = await openTestStore();
    // Held by this live process, as a turn that never released it (its session was deleted).
    await store.createSession({ id: 'reused', source: 'api_server' });
    expect(await store.acquireTurnLease('reused')).not.toBeNull();
    expect(await store.deleteSession('reused', { whileTurnRuns: 'delete' })).toBe(true);
    await store.createSession({ id: 'reused', source: 'api_server' });
    expect(store.getTurnLease('reused')).toBeNull();
    expect(
      await store.beginTurn('reused', { messages: [{ role: 'user', content: 'hi' }] }),
    ).not.toBeNull();

    // A compressed conversation deleted whole, its lease taken through the tip.
    await store.createSession({ id: 'chain', source: 'cli' });
    const tip = await store.publishCompressionChild({ parentId: 'chain', summary: 'summary' });
    expect(await store.acquireTurnLease(tip)).not.toBeNull();
    expect((await store.deleteLineage('chain', { whileTurnRuns: 'delete' })).sort()).toEqual(
      ['chain', tip].sort(),
    );
    await store.createSession({ id: 'chain', source: 'cli' });
    expect(await store.acquireTurnLease('chain')).not.toBeNull();
  });

  it("a running turn keeps its lease on the chain a deletion splits off, and the deleted root's goes", async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli' });
    const middle = await store.publishCompressionChild({ parentId: 'root', summary: 'one' });
    const tip = await store.publishCompressionChild({ parentId: middle, summary: 'two' });
    const holder = (await store.acquireTurnLease(tip)) ?? '';
    // Deleting a member in the middle: the tip's chain now has its own root and still its lease.
    expect(await store.deleteSession(middle, { whileTurnRuns: 'delete' })).toBe(true);
    expect(store.getSession(tip)?.lineageRootId).toBe(tip);
    expect(store.getTurnLease(tip)).toMatchObject({ conversationId: tip, holder, active: true });
    expect(await store.acquireTurnLease(tip, { holder: 'pid=1 token=other' })).toBeNull();
    expect(await store.renewTurnLease(tip, holder)).toBe(true);
    // The rest of the conversation stays leased too (the turn could have been running there)
    // until the holder lets go or the lease expires.
    expect(store.getTurnLease('root')).toMatchObject({ holder, active: true });
    expect(await store.releaseTurnLease(tip, holder)).toBe(true);
    expect(await store.releaseTurnLease('root', holder)).toBe(true);

    // Deleting the root itself: the lease moves to the split-off chain, none is left under the root's id.
    await store.createSession({ id: 'first', source: 'cli' });
    const child = await store.publishCompressionChild({ parentId: 'first', summary: 'one' });
    const second = (await store.acquireTurnLease(child)) ?? '';
    expect(await store.deleteSession('first', { whileTurnRuns: 'delete' })).toBe(true);
    expect(store.getTurnLease(child)).toMatchObject({ conversationId: child, holder: second });
    await store.createSession({ id: 'first', source: 'cli' });
    expect(store.getTurnLease('first')).toBeNull();
  });

  it('exactly one of several processes racing for the lease wins', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const store = await openSessionStore({ path: databasePath });
    try {
      await store.createSession({ id: 'race', source: 'cli' });
      const racers = 4;
      const children = await Promise.all(
        Array.from({ length: racers }, () =>
          runFixture('store-ops.ts', [databasePath, 'acquire-turn-lease', 'race', 'go'], 'ready'),
        ),
      );
      for (const child of children) child.kill('SIGUSR2');
      // Every racer has tried while every other is still alive; then they may go.
      await Promise.all(children.map((child) => child.waitForLine(/"holder"/, 30_000)));
      for (const child of children) child.kill('SIGUSR2');
      const exits = await Promise.all(children.map((child) => child.exited));
      expect(
        exits.map((exit) => exit.code),
        children.map((child) => child.stderr()).join('\n'),
      ).toEqual(Array(racers).fill(0));
      const holders = children.map(
        (child) =>
          (JSON.parse(child.stdout().split('\n')[1] ?? '{}') as { holder: unknown }).holder,
      );
      const winners = holders.filter((holder) => holder !== null);
      expect(winners).toHaveLength(1);
      expect(store.getTurnLease('race')?.holder).toBe(winners[0]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
