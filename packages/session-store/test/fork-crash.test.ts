import { statSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { forkSession, type MessageInput, openSessionStore } from '../src/index.js';
import { runFixture } from './processes.js';

const MESSAGES = 20_000;
const KILL_AFTER_WAL_BYTES = 1024 * 1024;

function walSize(databasePath: string): number {
  try {
    return statSync(`${databasePath}-wal`).size;
  } catch {
    return 0;
  }
}

describe('a fork whose process is killed midway', () => {
  it('leaves no child with part of the transcript, the parent not ended, and a new fork works', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    let store = await openSessionStore({ path: databasePath, checkpointIntervalMs: 0 });
    try {
      await store.createSession({ id: 'parent', source: 'cli', title: 'Long chat' });
      await store.setSessionSystemPrompt('parent', 'you are helpful');
      for (let start = 0; start < MESSAGES; start += 500) {
        const batch: MessageInput[] = Array.from({ length: 500 }, (_, index) => ({
          role: index % 2 === 0 ? 'user' : 'assistant',
          // About 400 characters: the fork's one transaction (about 10 MB) outgrows SQLite's
          // 2 MB page cache, so it spills to the WAL long before its commit and the kill below
          // lands midway. (Shorter rows fit the cache until the commit itself writes them.)
          content: `message ${start + index} ${' about trains to lyon and the weather in paris'.repeat(8)}`,
        }));
        await store.appendMessages('parent', batch);
      }
      // Closed (the last connection checkpoints and removes the WAL): from now on the WAL grows
      // only with the other process's writes.
      await store.close();
      const forker = await runFixture(
        'fork-session.ts',
        [databasePath, 'parent', 'branch'],
        'forking',
      );
      // Killed once the fork has written 1 MiB to the WAL (a fraction of what a copy of 20 000
      // messages writes, so long before it can be done): well past a child row of its own.
      const before = walSize(databasePath);
      const deadline = Date.now() + 30_000;
      while (walSize(databasePath) < before + KILL_AFTER_WAL_BYTES && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 1));
      forker.kill('SIGKILL');
      const exit = await forker.exited;
      expect(walSize(databasePath), 'the fork never got going').toBeGreaterThanOrEqual(
        before + KILL_AFTER_WAL_BYTES,
      );
      expect(exit.signal).toBe('SIGKILL');
      expect(forker.stdout(), 'the kill landed after the fork finished').not.toContain('forked');

      // No reader sees a child, whole or partial; the parent is as it was.
      store = await openSessionStore({ path: databasePath, checkpointIntervalMs: 0 });
      expect(store.getSession('branch')).toBeUndefined();
      expect(store.getMessages('branch')).toEqual([]);
      const listed = store.listSessionsRich({
        includeHidden: true,
        includeChildren: true,
        limit: 200,
      });
      expect(listed.sessions.map((row) => row.id)).toEqual(['parent']);
      expect(store.getSession('parent')).toMatchObject({ endedAt: null, messageCount: MESSAGES });

      // A new fork (same child id) is whole.
      const { child, copied } = await forkSession(store, {
        sessionId: 'parent',
        childId: 'branch',
      });
      expect(copied).toBe(MESSAGES);
      expect(child.messageCount).toBe(MESSAGES);
      expect(store.getSessionSystemPrompt('branch')).toBe('you are helpful');
      expect(store.getSession('parent')?.endReason).toBe('branched');
    } finally {
      await store.close();
    }
  }, 120_000);
});
