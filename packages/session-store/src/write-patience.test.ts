import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { ERROR_MESSAGES } from './index.js';
import { QUICK_RETRY_DELAYS_MS, withWritePatience } from './write-patience.js';

describe('write patience', () => {
  it('waits out another connection holding the write lock, without blocking the event loop', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const other = new BetterSqlite3(databasePath);
    other.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 5);
    const pending = store.appendMessage('s', { role: 'user', content: 'patient' });
    setTimeout(() => other.exec('COMMIT'), 300);
    await pending;
    clearInterval(ticker);
    other.close();
    expect(store.getMessages('s').map((message) => message.content)).toEqual(['patient']);
    expect(ticks).toBeGreaterThan(5);
  });

  it('gives up with the documented message once patience runs out', async () => {
    const { store, databasePath } = await openTestStore({ writePatienceSeconds: 0.2 });
    await store.createSession({ id: 's', source: 'cli' });
    const other = new BetterSqlite3(databasePath);
    other.exec('BEGIN IMMEDIATE');
    try {
      await expect(store.endSession('s', 'agent_close')).rejects.toThrow(
        ERROR_MESSAGES.databaseLocked(0.2),
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('counts time spent queued behind this store’s other writes against the patience', async () => {
    const { store, databasePath } = await openTestStore({ writePatienceSeconds: 0.5 });
    await store.createSession({ id: 's', source: 'cli' });
    const other = new BetterSqlite3(databasePath);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = performance.now();
      const results = await Promise.allSettled(
        [1, 2, 3].map((index) => store.recordUsage('s', { inputTokens: index })),
      );
      const elapsed = performance.now() - started;
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      // Each write waited at most its own 0.5 s from the call, not 0.5 s after the one before.
      expect(elapsed).toBeLessThan(1200);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(store.requireSession('s').inputTokens).toBe(0);
  });

  it('retries quickly at first, then with the reference jitter, and gives up after the patience', async () => {
    let now = 0;
    const delays: number[] = [];
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    await expect(
      withWritePatience(
        () => {
          throw busy;
        },
        {
          patienceSeconds: 5,
          clock: { now: () => now / 1000, monotonicMs: () => now },
          sleep: async (milliseconds) => {
            delays.push(milliseconds);
            now += milliseconds;
          },
          random: () => 0.5,
        },
      ),
    ).rejects.toMatchObject({ code: 'database_locked' });
    expect(delays.slice(0, 3)).toEqual([...QUICK_RETRY_DELAYS_MS]);
    const later = delays.slice(3);
    expect(later.filter((delay) => delay === 85).length).toBeGreaterThan(0); // 20–150 ms at first
    expect(later.at(-1)).toBe(625); // 250–1000 ms after 2 s
    expect(now).toBeGreaterThanOrEqual(5000);
    expect(now).toBeLessThan(5000 + 1000);
  });
});
