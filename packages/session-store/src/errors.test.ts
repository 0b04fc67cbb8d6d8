import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { openSessionStore, SessionStoreError } from './index.js';

/** Asserts that `run` fails with a `SessionStoreError` of `code` (sync throw or rejection). */
async function expectStoreError(run: () => unknown, code: string): Promise<void> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  expect(SessionStoreError.isInstance(caught), String(caught)).toBe(true);
  expect((caught as SessionStoreError).code, String(caught)).toBe(code);
}

describe('every error is a SessionStoreError', () => {
  it('refuses numeric options that are not numbers (NaN, strings, fractions) with invalid_argument', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.appendMessage('s', { role: 'user', content: 'hello' });
    const calls: [string, () => unknown][] = [
      ['list limit NaN', () => store.listSessionsRich({ limit: Number.NaN })],
      ['list offset NaN', () => store.listSessionsRich({ offset: Number.NaN })],
      ['list limit string', () => store.listSessionsRich({ limit: '5' as never })],
      ['list offset negative', () => store.listSessionsRich({ offset: -1 })],
      ['search limit NaN', () => store.searchMessages('hello', { limit: Number.NaN })],
      ['search limit fraction', () => store.searchMessages('hello', { limit: 2.5 })],
      ['search syntax', () => store.searchMessages('hello', { syntax: 'sql' as never })],
      ['search query', () => store.searchMessages(42 as never)],
      ['messages limit NaN', () => store.getMessages('s', { limit: Number.NaN })],
      ['messages afterId NaN', () => store.getMessages('s', { afterId: Number.NaN })],
      ['stale sweep NaN', () => store.archiveStaleSessions({ olderThanSeconds: Number.NaN })],
      ['message role', () => store.appendMessage('s', { role: 'robot' as never, content: 'x' })],
      ['message tokens', () => store.appendMessage('s', { role: 'user', tokenCount: -3 })],
      ['message content', () => store.appendMessage('s', { role: 'user', content: 7 as never })],
      ['open patience NaN', () => openSessionStore({ writePatienceSeconds: Number.NaN })],
      ['open journal mode', () => openSessionStore({ journalMode: 'memory' as never })],
    ];
    for (const [name, call] of calls) {
      await expect(expectStoreError(call, 'invalid_argument'), name).resolves.toBeUndefined();
    }
    // Large page sizes are still clamped, not refused.
    expect(store.listSessionsRich({ limit: 10_000 }).sessions).toHaveLength(1);
    expect(store.getMessages('s')).toHaveLength(1);
  });

  it('a value the driver cannot bind is invalid_argument, not a raw TypeError', async () => {
    const { store } = await openTestStore();
    await expectStoreError(() => store.getSession({ id: 's' } as never), 'invalid_argument');
    await expectStoreError(() => store.endSession({} as never, 'agent_close'), 'invalid_argument');
  });

  it('wraps what SQLite throws, on reads and writes, keeping the SqliteError as the cause', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    // A write whose SQL fails inside the caller's transaction callback.
    let caught: unknown;
    try {
      await store.withWriteTransaction((database) =>
        database.exec('INSERT INTO nowhere VALUES (1)'),
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'database_error', name: 'SessionStoreError' });
    expect((caught as Error).message).toContain('no such table: nowhere');
    expect((caught as Error).cause).toMatchObject({ code: 'SQLITE_ERROR' });
    // The caller's own errors pass through untouched.
    const own = new Error('my own failure');
    await expect(
      store.withWriteTransaction(() => {
        throw own;
      }),
    ).rejects.toBe(own);
    // A read that SQLite fails: another process dropped a table this read needs.
    const raw = new BetterSqlite3(databasePath);
    raw.exec('DROP TABLE system_prompts');
    raw.close();
    await expectStoreError(() => store.getSessionSystemPrompt('s'), 'database_error');
  });
});
