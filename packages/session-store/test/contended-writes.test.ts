import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/index.js';

const holdLock = path.join(import.meta.dirname, 'fixtures/hold-write-lock.mjs');

/** Records the gaps between event-loop turns (a 5 ms interval that should never be late by much). */
function watchEventLoop(): { stop(): number[] } {
  const gaps: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return gaps;
    },
  };
}

describe('writes while another process holds the write lock', () => {
  it('never stall the event loop and lose no row (default options, lock held 5 s)', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const store = await openSessionStore({ path: databasePath }); // defaults only
    try {
      await store.createSession({ id: 'chat', source: 'cli' });
      const holder = await spawnProcess({
        command: process.execPath,
        args: [holdLock, databasePath, '5000'],
        readyLine: 'locked',
      });
      const watcher = watchEventLoop();
      const resolvedAt: number[] = [];
      const sequential = (async () => {
        for (let index = 0; index < 5; index += 1) {
          await store.appendMessage('chat', { role: 'user', content: `sequential ${index}` });
          resolvedAt.push(Date.now());
        }
      })();
      const concurrent = Array.from({ length: 20 }, (_, index) =>
        store
          .appendMessage('chat', { role: 'assistant', content: `concurrent ${index}` })
          .then(() => resolvedAt.push(Date.now())),
      );
      const otherWrites = [
        store.createSession({ id: 'second', source: 'cli' }),
        store.recordUsage('chat', { inputTokens: 10, apiCalls: 1 }),
      ];
      await Promise.all([sequential, ...concurrent, ...otherWrites]);
      const gaps = watcher.stop();
      const exit = await holder.exited;
      expect(exit.code, holder.stderr()).toBe(0);
      const releasedAt = Number(/released (\d+)/.exec(holder.stdout())?.[1]);

      // The lock really was contended: nothing committed before the other process let go.
      expect(Math.min(...resolvedAt)).toBeGreaterThanOrEqual(releasedAt);
      // The event loop kept turning the whole time (5+ s of samples, none late by 50 ms).
      expect(gaps.length).toBeGreaterThan(200);
      const longest = Math.max(...gaps);
      expect(
        longest,
        `event-loop gaps over 50 ms: ${gaps.filter((gap) => gap >= 50)}`,
      ).toBeLessThan(50);
      // No row lost.
      const contents = store.getMessages('chat').map((message) => message.content);
      expect(contents).toHaveLength(25);
      expect(new Set(contents).size).toBe(25);
      expect(store.requireSession('chat')).toMatchObject({ messageCount: 25, inputTokens: 10 });
      expect(store.getSession('second')).toBeDefined();
    } finally {
      await store.close();
    }
  }, 40_000);
});
