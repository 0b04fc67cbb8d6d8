import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { openSessionStore, type SessionStore } from './index.js';

async function compressedConversation(store: SessionStore, id: string): Promise<string> {
  await store.createSession({ id, source: 'cli' });
  await store.appendMessages(id, [
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: 'first answer' },
  ]);
  const tip = await store.publishCompressionChild({ parentId: id, summary: 'summary' });
  await store.appendMessage(tip, { role: 'user', content: 'second question' });
  return tip;
}

function messageCounts(store: SessionStore, ids: readonly string[]): (number | undefined)[] {
  return ids.map((id) => store.getSession(id)?.messageCount);
}

describe('deleting a conversation while a turn runs', () => {
  it('is refused with session_busy while another process holds the turn lease, and nothing is deleted; once released the delete goes through', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const store = await openSessionStore({ path: databasePath });
    const tip = await compressedConversation(store, 'conversation');
    // Another process runs a turn in the conversation: it holds the turn lease.
    const holderProcess = await runFixture(
      'store-ops.ts',
      [databasePath, 'hold-turn-lease', 'conversation', 'go'],
      'ready',
    );
    try {
      await holderProcess.waitForLine(/"holder"/, 30_000);
      const holder = (
        JSON.parse(holderProcess.stdout().split('\n')[1] ?? '{}') as { holder: string | null }
      ).holder;
      expect(holder).toMatch(new RegExp(`^pid=${holderProcess.pid} `));
      const before = messageCounts(store, ['conversation', tip]);

      for (const attempt of [
        () => store.deleteSession('conversation'),
        () => store.deleteSession(tip),
        () => store.deleteLineage('conversation'),
        () => store.deleteLineage(tip),
      ]) {
        await expect(attempt()).rejects.toMatchObject({
          name: 'SessionStoreError',
          code: 'session_busy',
          message: expect.stringContaining(`process ${holderProcess.pid}`),
        });
      }
      expect(messageCounts(store, ['conversation', tip])).toEqual(before);
      expect(store.getMessages(tip).map((row) => row.content)).toContain('second question');
      expect(store.getTurnLease(tip)).toMatchObject({ holder, active: true });

      holderProcess.kill('SIGUSR2');
      await holderProcess.waitForLine(/released/, 30_000);
      expect((await holderProcess.exited).code).toBe(0);
      expect((await store.deleteLineage(tip)).sort()).toEqual(['conversation', tip].sort());
      expect(store.getSession('conversation')).toBeUndefined();
      expect(store.getSession(tip)).toBeUndefined();
    } finally {
      holderProcess.kill('SIGKILL');
      await holderProcess.exited;
      await store.close();
    }
  }, 60_000);

  it('refuses a live lease of this process too, unless the caller names it as its own or asks to delete anyway', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'mine', source: 'cli' });
    const holder = (await store.acquireTurnLease('mine')) ?? '';
    await expect(store.deleteSession('mine')).rejects.toMatchObject({ code: 'session_busy' });
    await expect(
      store.deleteSession('mine', { turnLeaseHolder: 'pid=1 token=someone-else' }),
    ).rejects.toMatchObject({ code: 'session_busy' });
    expect(store.getSession('mine')).toBeDefined();
    // The turn's own holder deletes its conversation (and the lease goes with it).
    expect(await store.deleteSession('mine', { turnLeaseHolder: holder })).toBe(true);
    expect(store.getSession('mine')).toBeUndefined();

    const tip = await compressedConversation(store, 'forced');
    expect(await store.acquireTurnLease(tip)).not.toBeNull();
    expect((await store.deleteLineage('forced', { whileTurnRuns: 'delete' })).sort()).toEqual(
      ['forced', tip].sort(),
    );
  });

  it('is not refused by a lease that expired or whose holder process is dead', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'expired', source: 'cli' });
    await store.acquireTurnLease('expired', { holder: 'pid=1 token=old', ttlSeconds: 0.2 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await store.deleteSession('expired')).toBe(true);

    const gone = await spawnProcess({ command: process.execPath, args: ['-e', ''] });
    await gone.exited;
    await store.createSession({ id: 'orphan', source: 'cli' });
    await store.acquireTurnLease('orphan', { holder: `pid=${gone.pid} token=dead` });
    expect(await store.deleteLineage('orphan')).toEqual(['orphan']);
  });

  it('refuses an unknown whileTurnRuns value and deletes nothing', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await expect(
      store.deleteSession('s', { whileTurnRuns: 'sometimes' as 'refuse' }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(store.getSession('s')).toBeDefined();
    // An unknown id still answers that nothing was deleted.
    expect(await store.deleteSession('nope')).toBe(false);
    expect(await store.deleteLineage('nope')).toEqual([]);
  });
});
