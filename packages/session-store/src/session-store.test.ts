import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import {
  MIGRATIONS_FOLDER,
  openSessionStore,
  SCHEMA_VERSION,
  SessionStoreError,
  WRITE_ATTEMPT_BUSY_TIMEOUT_MS,
} from './index.js';

describe('openSessionStore', () => {
  it('creates a WAL database with NORMAL sync, foreign keys, 0600 files and the schema version', async () => {
    const { store, databasePath } = await openTestStore();
    expect(store.journalMode).toBe('wal');
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    const probe = new BetterSqlite3(databasePath, { readonly: true });
    try {
      expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(
        probe.prepare("SELECT value FROM state_meta WHERE key = 'schema_version'").pluck().get(),
      ).toBe(String(SCHEMA_VERSION));
    } finally {
      probe.close();
    }
    expect(statSync(databasePath).mode & 0o777).toBe(0o600);
    // Connection-level pragmas, read on the store's own writer connection.
    const pragmas = await store.withWriteTransaction((database) => ({
      synchronous: database.pragma('synchronous', { simple: true }),
      foreignKeys: database.pragma('foreign_keys', { simple: true }),
      busyTimeout: database.pragma('busy_timeout', { simple: true }),
    }));
    expect(pragmas).toEqual({
      synchronous: process.platform === 'darwin' ? 2 : 1, // FULL on macOS, NORMAL elsewhere
      foreignKeys: 1,
      busyTimeout: WRITE_ATTEMPT_BUSY_TIMEOUT_MS, // a write attempt waits only briefly inside SQLite
    });
    await store.createSession({ id: 'a', source: 'cli' });
    await expect(
      store.appendMessage('missing', { role: 'user', content: 'x' }),
    ).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('records one schema version per migration in the shipped journal', () => {
    const journal = JSON.parse(
      readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'),
    ) as {
      entries: unknown[];
    };
    expect(journal.entries).toHaveLength(SCHEMA_VERSION);
  });

  it('reopens an existing file without re-running migrations and keeps its rows', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'keep', source: 'cli', title: 'Kept' });
    await store.close();
    const again = await reopenStore(databasePath);
    expect(again.getSession('keep')?.title).toBe('Kept');
    expect(again.schemaVersion).toBe(SCHEMA_VERSION);
  });

  it('refuses a non-SQLite file with an error naming the path and leaves the file untouched', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const original = 'this is not a database, it is a shopping list\n'.repeat(10);
    writeFileSync(databasePath, original);
    const error = await openSessionStore({ path: databasePath }).catch((caught: unknown) => caught);
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect((error as SessionStoreError).code).toBe('database_corrupt');
    expect((error as Error).message).toContain(databasePath);
    expect(readFileSync(databasePath, 'utf8')).toBe(original);
  });

  it('refuses a SQLite file whose pages are damaged, without rewriting it', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const seed = new BetterSqlite3(databasePath);
    seed.exec('CREATE TABLE filler (x TEXT)');
    seed.close();
    const bytes = readFileSync(databasePath);
    bytes.fill(0xff, 100, bytes.length); // keep the header, wreck the schema page
    writeFileSync(databasePath, bytes);
    const error = await openSessionStore({ path: databasePath }).catch((caught: unknown) => caught);
    expect((error as SessionStoreError).code).toBe('database_corrupt');
    expect((error as Error).message).toContain(databasePath);
    expect(readFileSync(databasePath).equals(bytes)).toBe(true);
  });

  it('uses DELETE journaling when configured, and on filesystems where WAL is unsafe', async () => {
    const configured = await openTestStore({ journalMode: 'delete' });
    expect(configured.store.journalMode).toBe('delete');
    // Outside WAL SQLite defaults to FULL; the store still asks for NORMAL.
    expect(
      await configured.store.withWriteTransaction((database) =>
        database.pragma('synchronous', { simple: true }),
      ),
    ).toBe(process.platform === 'darwin' ? 2 : 1);
    const ninePee = await openTestStore({ filesystemType: '9p' });
    expect(ninePee.store.journalMode).toBe('delete');
  });

  it('never downgrades a database that is already WAL on disk', async () => {
    const { store, databasePath } = await openTestStore();
    expect(store.journalMode).toBe('wal');
    const second = await reopenStore(databasePath, { journalMode: 'delete' });
    expect(second.journalMode).toBe('wal');
  });

  it('rejects calls after close with a store_closed error', async () => {
    const { store } = await openTestStore();
    await store.close();
    expect(() => store.getSession('x')).toThrow(expect.objectContaining({ code: 'store_closed' }));
  });
});

describe('createSession input', () => {
  it('refuses a row that is not what it should be with invalid_argument, storing nothing', async () => {
    const { store } = await openTestStore();
    const invalid: [unknown, string][] = [
      [{}, 'Invalid source: expected a non-empty string'],
      [{ source: '' }, 'Invalid source: expected a non-empty string'],
      [{ id: '', source: 'cli' }, 'Invalid id: expected a non-empty string'],
      [{ id: 7, source: 'cli' }, 'Invalid id: expected a non-empty string'],
      [{ source: 'cli', newId: () => '' }, 'Invalid id: expected a non-empty string'],
      [{ source: 'cli', parentEdge: 'sideways' }, 'Invalid parentEdge'],
      [{ source: 'cli', startedAt: Number.NaN }, 'Invalid startedAt'],
      [{ source: 'cli', model: 42 }, 'Invalid model: expected a string or null'],
    ];
    for (const [input, message] of invalid) {
      const error = await store
        .createSession(input as Parameters<typeof store.createSession>[0])
        .catch((caught: unknown) => caught);
      expect(SessionStoreError.isInstance(error), JSON.stringify(input)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid_argument' });
      expect((error as Error).message).toContain(message);
    }
    expect(store.listSessionsRich({ limit: 10 }).sessions).toEqual([]);
  });
});

describe('contentVersion', () => {
  it('changes with every commit — this store’s and another process’s — and not with reads', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const first = store.contentVersion();
    store.listSessionsRich();
    store.getMessages('s');
    expect(store.contentVersion()).toBe(first);
    await store.appendMessage('s', { role: 'user', content: 'hello' });
    const afterOwnWrite = store.contentVersion();
    expect(afterOwnWrite).not.toBe(first);
    const other = await runFixture('store-ops.ts', [databasePath, 'record-usage', 's', '1']);
    expect((await other.exited).code, other.stderr()).toBe(0);
    expect(store.contentVersion()).not.toBe(afterOwnWrite);
    expect(store.requireSession('s').apiCallCount).toBe(1); // the other process's commit
  }, 30_000);
});
