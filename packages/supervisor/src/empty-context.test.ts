import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { emptyContextIsolationWorks, runInEmptyContext } from './empty-context.js';

describe('runInEmptyContext', () => {
  it("hides every store of the caller, across awaits and timers, and keeps the caller's own", async () => {
    const first = new AsyncLocalStorage<string>();
    const second = new AsyncLocalStorage<string>();
    const seen = await first.run('first', () =>
      second.run('second', async () => {
        const inside = await runInEmptyContext(async () => {
          const now = [first.getStore(), second.getStore()];
          await new Promise((resolve) => setTimeout(resolve, 5));
          return [...now, first.getStore(), second.getStore()];
        });
        return { inside, outside: [first.getStore(), second.getStore()] };
      }),
    );
    expect(seen.inside).toEqual([undefined, undefined, undefined, undefined]);
    expect(seen.outside).toEqual(['first', 'second']);
  });

  it('a store entered inside one empty context is not seen by the next', async () => {
    const storage = new AsyncLocalStorage<string>();
    runInEmptyContext(() => storage.enterWith('entered-by-task-1'));
    const seen = await runInEmptyContext(async () => {
      await null;
      return storage.getStore();
    });
    expect(seen).toBeUndefined();
  });

  it('confirms with a probe storage that isolation works on this Node.js', () => {
    expect(emptyContextIsolationWorks()).toBe(true);
  });
});
