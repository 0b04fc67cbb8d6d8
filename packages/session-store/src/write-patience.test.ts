import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { ERROR_MESSAGES } from './index.js';

describe('write patience', () => {
  it('waits out another connection holding the write lock, without blocking the event loop', async () => {
    const { store, databasePath } = await openTestStore({ busyTimeoutMs: 20 });
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
    const { store, databasePath } = await openTestStore({
      busyTimeoutMs: 10,
      writePatienceSeconds: 0.2,
    });
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
});
