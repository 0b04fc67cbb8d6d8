import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openSessionStore, type SessionStore } from '../src/index.js';
import { ftsIndexReport, indexedThrough } from './fts-index.js';
import { reopenStore } from './helpers.js';
import { runFixture } from './processes.js';

async function newDatabase(): Promise<string> {
  const home = await tempHome();
  const databasePath = path.join(home.path, 'state.db');
  const store = await openSessionStore({ path: databasePath });
  await store.createSession({ id: 'chat', source: 'cli' });
  await store.close();
  return databasePath;
}

function lastId(line: RegExpMatchArray): number {
  return Number(line[1]);
}

/**
 * A reader store, then another process that writes 30 messages to session `other` and holds the
 * write lock before it can index them. `prepare` runs on the reader before the writer starts.
 */
async function pendingWhileHeld(prepare?: (reader: SessionStore) => Promise<unknown>) {
  const databasePath = await newDatabase();
  const reader = await reopenStore(databasePath); // opened first: opening needs the lock
  await prepare?.(reader);
  const writer = await runFixture(
    'fts-writer.ts',
    [databasePath, 'hold', 'other', '30'],
    'holding',
  );
  const last = lastId(await writer.waitForLine(/holding (\d+)/));
  return { databasePath, reader, writer, last };
}

/** The reader finds all 30 pending rows, newest first, with FTS-style snippets; none is indexed. */
function expectPendingFound(reader: SessionStore, databasePath: string, last: number) {
  const held = reader.searchMessages('pending note', { limit: 100 });
  expect(held.mode).toBe('fts');
  expect(held.hits).toHaveLength(30);
  expect(held.hits[0]).toMatchObject({ messageId: last, sessionId: 'other' });
  expect(held.hits[0]?.snippet).toContain('>>>pending<<< >>>note<<<');
  expect(indexedThrough(databasePath)).toBe(0);
  return held;
}

describe('FTS catch-up across processes', () => {
  it('rows a killed process left pending are indexed when the file is opened again', async () => {
    const databasePath = await newDatabase();
    const writer = await runFixture('fts-writer.ts', [databasePath, 'crash', 'chat', '40']);
    const exit = await writer.exited;
    expect(exit.signal, writer.stderr()).toBe('SIGKILL');
    const last = lastId(await writer.waitForLine(/written (\d+)/));
    expect(ftsIndexReport(databasePath)).toMatchObject({ through: 0, newest: last });

    const store = await reopenStore(databasePath);
    expect(indexedThrough(databasePath)).toBe(last); // by the open, before any search
    expect(store.searchMessages('pending note', { limit: 100 }).hits).toHaveLength(40);
    await store.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 40 });
  }, 60_000);

  it("a search finds another process's pending rows while that process holds the write lock", async () => {
    const { databasePath, reader, writer, last } = await pendingWhileHeld();
    const held = expectPendingFound(reader, databasePath, last);
    // Still pending: the answer came from the same MATCH over the unindexed tail (a TEMP fts5
    // table of the reader's connection), so `7` is a word, not a substring of 17 and 27.
    expect(reader.searchMessages('other pending note 7').hits.map((hit) => hit.messageId)).toEqual([
      last - 22,
    ]);

    writer.kill('SIGKILL');
    await writer.exited;
    const free = reader.searchMessages('pending note', { limit: 100 });
    expect(free.hits.map((hit) => hit.messageId)).toEqual(held.hits.map((hit) => hit.messageId));
    expect(indexedThrough(databasePath)).toBe(last); // the lock is free: this search indexed them
    await reader.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 30 });
  }, 60_000);

  it('falls back to LIKE over the pending rows when its TEMP index cannot be used, and still finds them', async () => {
    // An ordinary TEMP table under the name the search gives its fts5 table: MATCH fails there.
    const { databasePath, reader, writer, last } = await pendingWhileHeld((store) =>
      store.withWriteTransaction((database) =>
        database.exec('CREATE TEMP TABLE messages_fts_pending(content)'),
      ),
    );
    expectPendingFound(reader, databasePath, last);
    // LIKE matches substrings: `7` is also found inside 17 and 27.
    expect(reader.searchMessages('other pending note 7').hits.map((hit) => hit.messageId)).toEqual([
      last - 2,
      last - 12,
      last - 22,
    ]);
    writer.kill('SIGKILL');
    await writer.exited;
    await reader.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 30 });
  }, 60_000);

  it('two processes writing and catching up at once index every row exactly once', async () => {
    const databasePath = await newDatabase();
    const rounds = 120;
    const writers = await Promise.all([
      runFixture('fts-writer.ts', [databasePath, 'race', 'gateway', String(rounds)]),
      runFixture('fts-writer.ts', [databasePath, 'race', 'cli', String(rounds)]),
    ]);
    const exits = await Promise.all(writers.map((writer) => writer.exited));
    expect(
      exits.map((exit) => exit.code),
      writers.map((writer) => writer.stderr()).join('\n'),
    ).toEqual([0, 0]);
    const report = ftsIndexReport(databasePath);
    expect(report).toMatchObject({
      integrity: 'ok',
      messages: 2 * rounds * 7,
      indexedRows: 2 * rounds * 7,
      through: report.newest,
    });
  }, 120_000);
});
