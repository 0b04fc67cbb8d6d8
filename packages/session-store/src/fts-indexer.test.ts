import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { breakFtsIndex, corruptFtsIndex, ftsTriggerCount } from '../test/corrupt-fts.js';
import { ftsIndexReport, indexedThrough } from '../test/fts-index.js';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { FTS_CATCH_UP_DELAY_MS, FTS_INLINE_CATCH_UP_ROWS, type SessionStore } from './index.js';

const quietScanner = async () => [];

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

async function note(store: SessionStore, content: string, sessionId = 'chat'): Promise<number> {
  return store.appendMessage(sessionId, { role: 'user', content });
}

describe('indexing after the commit', () => {
  it('a write leaves its message pending; a search right after it indexes it and finds it', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const id = await note(store, 'the ferry to Naxos leaves at nine');
    expect(indexedThrough(databasePath)).toBeLessThan(id); // not indexed by the write
    const result = store.searchMessages('naxos');
    expect(result).toMatchObject({ mode: 'fts', hits: [{ messageId: id }] });
    expect(result.hits[0]?.snippet).toContain('>>>Naxos<<<');
    expect(indexedThrough(databasePath)).toBe(id); // the search caught up first
  });

  it("this store's own catch-up leaves contentVersion() as it was: no result it returns changed", async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const id = await note(store, 'a quiet line');
    const version = store.contentVersion();
    expect(store.searchMessages('quiet').hits.map((hit) => hit.messageId)).toEqual([id]);
    expect(indexedThrough(databasePath)).toBe(id);
    expect(store.contentVersion()).toBe(version);
  });

  it('one timer catches up after a commit, and later commits do not push it back', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const first = await note(store, 'first line');
    const writtenAt = performance.now();
    // A write every 20 ms, for four catch-up delays: a timer that each write pushed back would
    // never fire while they keep coming.
    let caughtUpWhileWriting = false;
    while (performance.now() - writtenAt < 4 * FTS_CATCH_UP_DELAY_MS) {
      await sleep(20);
      await note(store, 'another line');
      if ((indexedThrough(databasePath) ?? 0) >= first) caughtUpWhileWriting = true;
    }
    expect(caughtUpWhileWriting).toBe(true);
  });

  it(`a write that leaves ${FTS_INLINE_CATCH_UP_ROWS} rows pending catches up before it returns`, async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const ids = await store.appendMessages(
      'chat',
      Array.from({ length: FTS_INLINE_CATCH_UP_ROWS }, (_, index) => ({
        role: 'user' as const,
        content: `bulk ${index}`,
      })),
    );
    expect(indexedThrough(databasePath)).toBe(ids.at(-1));
  });

  it('rows not indexed yet are matched as the index matches them (words, not substrings)', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const texts = [
      'we compared gpt-4.1 with the older model',
      'please send the e-mail tomorrow',
      'templates in C++ are hard',
      'write to ada@example.com for access',
      'line 7 of 17, and 27 more',
      'category theory',
      'a cat on the mat',
    ];
    for (const content of texts) await note(store, content);
    const queries = ['gpt-4.1', 'send tomorrow', 'templ*', '"older model"', '7', 'cat', 'C++'];
    // Another connection holds the write lock: the search cannot index, so the rows stay pending.
    const holder = new BetterSqlite3(databasePath);
    holder.exec('BEGIN IMMEDIATE');
    const pending = queries.map((query) => store.searchMessages(query));
    expect(indexedThrough(databasePath)).toBe(0);
    holder.exec('ROLLBACK');
    holder.close();
    const indexed = queries.map((query) => store.searchMessages(query));
    expect(indexedThrough(databasePath)).toBeGreaterThan(0);
    expect(pending).toEqual(indexed);
    expect(indexed[4]?.hits).toHaveLength(1); // "7" is a word: not 17 or 27
    expect(indexed[5]?.hits.map((hit) => hit.snippet)).toEqual(['a >>>cat<<< on the mat']);
    expect(store.searchMessages('alpha NOT beta', { syntax: 'fts5' }).hits).toEqual([]);
  });

  it('close indexes what is pending', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const id = await note(store, 'written just before close');
    await store.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({
      integrity: 'ok',
      through: id,
      indexedRows: 1,
    });
  });
});

describe('edits and deletes of pending and indexed rows', () => {
  it('keep the index equal to the messages (fts5 integrity-check against the content)', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    await store.createSession({ id: 'doomed', source: 'cli' });
    const indexed = await store.appendMessages('chat', [
      { role: 'user', content: 'indexed alpha' },
      { role: 'user', content: 'indexed beta' },
      { role: 'tool', content: 'indexed gamma' },
      { role: 'user', content: 'indexed delta' },
    ]);
    await note(store, 'indexed doomed', 'doomed');
    store.searchMessages('indexed'); // catches up: all of the above are indexed now
    const [alpha, beta, gamma, delta] = indexed as [number, number, number, number];
    expect(indexedThrough(databasePath)).toBeGreaterThanOrEqual(delta);
    const pending = await store.appendMessages('chat', [
      { role: 'user', content: 'pending alpha' },
      { role: 'user', content: 'pending beta' },
      { role: 'tool', content: 'pending gamma' },
      { role: 'user', content: 'pending delta' },
    ]);
    await note(store, 'pending doomed', 'doomed');
    const [pAlpha, pBeta, pGamma, pDelta] = pending as [number, number, number, number];
    expect(indexedThrough(databasePath)).toBeLessThan(pAlpha);
    await store.withWriteTransaction((database) => {
      const setContent = database.prepare('UPDATE messages SET content = ? WHERE id = ?');
      setContent.run('edited kiwi', alpha);
      setContent.run('edited mango', pAlpha);
      const setRole = database.prepare("UPDATE messages SET role = 'user' WHERE id = ?");
      setRole.run(gamma);
      setRole.run(pGamma);
      const remove = database.prepare('DELETE FROM messages WHERE id = ?');
      remove.run(beta);
      remove.run(pBeta);
    });
    expect(await store.deleteSession('doomed')).toBe(true); // cascades: one indexed, one pending
    expect(store.isFtsStale()).toBe(false);
    expect(store.searchMessages('kiwi').hits.map((hit) => hit.messageId)).toEqual([alpha]);
    expect(store.searchMessages('mango').hits.map((hit) => hit.messageId)).toEqual([pAlpha]);
    expect(store.searchMessages('alpha').hits).toEqual([]);
    expect(store.searchMessages('beta').hits).toEqual([]);
    expect(store.searchMessages('doomed').hits).toEqual([]);
    expect(store.searchMessages('delta').hits.map((hit) => hit.messageId)).toEqual([pDelta, delta]);
    // Edited again now that everything is indexed, then a row moved across the watermark.
    await store.withWriteTransaction((database) => {
      database.prepare("UPDATE messages SET content = 'edited twice' WHERE id = ?").run(pAlpha);
      database.prepare('UPDATE messages SET id = id + 1000 WHERE id = ?').run(pDelta);
    });
    await store.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 6 });
  });

  it('a row inserted with its own id at or below the watermark is indexed at once', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'chat', source: 'cli' });
    const first = await note(store, 'placeholder');
    await note(store, 'second');
    store.searchMessages('second');
    await store.withWriteTransaction((database) => {
      database.prepare('DELETE FROM messages WHERE id = ?').run(first);
      database
        .prepare(
          "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, 'chat', 'user', 'reinstated pear', 1)",
        )
        .run(first);
      // The row is indexed already: deleting it again must find it there.
      database.prepare("UPDATE messages SET content = 'reinstated plum' WHERE id = ?").run(first);
    });
    expect(store.searchMessages('plum').hits.map((hit) => hit.messageId)).toEqual([first]);
    await store.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 2 });
  });
});

describe('the watermark with fail-open and rebuilds', () => {
  it('nothing is indexed while the index is detached; the rebuild indexes everything and sets the watermark', async () => {
    const { store, databasePath } = await openTestStore({
      foreignHolderScanner: quietScanner,
      recoverFtsOnOpen: false,
    });
    await store.createSession({ id: 'chat', source: 'cli' });
    await note(store, 'before the damage');
    store.searchMessages('before');
    const before = indexedThrough(databasePath);
    corruptFtsIndex(databasePath);
    const after = await note(store, 'written while detached');
    // The search's catch-up meets the corrupt index: detached, answered with LIKE.
    expect(store.searchMessages('detached')).toMatchObject({
      mode: 'like',
      hits: [{ messageId: after }],
    });
    expect(store.isFtsStale()).toBe(true);
    expect(ftsTriggerCount(databasePath)).toBe(0);
    const later = await note(store, 'still detached');
    await sleep(2 * FTS_CATCH_UP_DELAY_MS); // a catch-up timer would have run by now
    expect(store.searchMessages('still').mode).toBe('like');
    expect(indexedThrough(databasePath)).toBe(before);
    expect(await store.rebuildFts()).toBe(1);
    expect(ftsIndexReport(databasePath)).toMatchObject({
      integrity: 'ok',
      through: later,
      indexedRows: 3,
    });
    expect(store.searchMessages('detached')).toMatchObject({
      mode: 'fts',
      hits: [{ messageId: later }, { messageId: after }],
    });
  });

  it('a store another process marked stale indexes nothing until the rebuild', async () => {
    const { store, databasePath } = await openTestStore({
      foreignHolderScanner: quietScanner,
      recoverFtsOnOpen: false,
    });
    await store.createSession({ id: 'chat', source: 'cli' });
    const raw = new BetterSqlite3(databasePath);
    raw.exec("INSERT INTO state_meta (key, value) VALUES ('fts_stale', '1')");
    raw.close();
    const id = await note(store, 'written while marked stale');
    expect(store.searchMessages('marked').mode).toBe('like');
    await sleep(2 * FTS_CATCH_UP_DELAY_MS); // a catch-up timer would have run by now
    expect(indexedThrough(databasePath)).toBe(0);
    expect(await store.rebuildFts()).toBe(1);
    expect(indexedThrough(databasePath)).toBe(id);
    expect(store.searchMessages('marked').mode).toBe('fts');
  });

  it('a rebuilt index is exactly a migrated one: the same objects and a watermark', async () => {
    const objects = (databasePath: string) => {
      const raw = new BetterSqlite3(databasePath, { readonly: true });
      try {
        return raw
          .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'messages_fts%' ORDER BY name",
          )
          .all();
      } finally {
        raw.close();
      }
    };
    const fresh = await openTestStore();
    const rebuilt = await openTestStore({ foreignHolderScanner: quietScanner });
    await rebuilt.store.createSession({ id: 'chat', source: 'cli' });
    const id = await note(rebuilt.store, 'rebuilt row');
    breakFtsIndex(rebuilt.databasePath, 'missing table');
    await note(rebuilt.store, 'another');
    expect(rebuilt.store.searchMessages('rebuilt').mode).toBe('like');
    expect(await rebuilt.store.rebuildFts()).toBe(1);
    expect(objects(rebuilt.databasePath)).toEqual(objects(fresh.databasePath));
    expect(objects(fresh.databasePath)).toContainEqual(
      expect.objectContaining({
        name: 'messages_fts_after_delete',
        sql: expect.stringContaining('fts_indexed_through'),
      }),
    );
    expect(ftsIndexReport(rebuilt.databasePath)).toMatchObject({
      integrity: 'ok',
      through: id + 1,
    });
  });

  it('an index holding rows above its watermark is detached (by a search, and at open) and rebuilt', async () => {
    const { store, databasePath } = await openTestStore({
      foreignHolderScanner: quietScanner,
      recoverFtsOnOpen: false,
    });
    await store.createSession({ id: 'chat', source: 'cli' });
    const id = await note(store, 'indexed behind the watermark');
    // What an older version's insert trigger does: index the row, leave the watermark.
    const raw = new BetterSqlite3(databasePath);
    raw.exec('INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_src');
    raw.close();
    expect(store.searchMessages('watermark')).toMatchObject({
      mode: 'like',
      hits: [{ messageId: id }],
    });
    expect(store.isFtsStale()).toBe(true);
    expect(await store.rebuildFts()).toBe(1);
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', through: id });
    await store.close();

    const again = new BetterSqlite3(databasePath);
    again.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('chat', 'user', 'twice', 1)",
    );
    again.exec(
      "INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_src WHERE content = 'twice'",
    );
    again.close();
    const warnings: string[] = [];
    const reopened = await reopenStore(databasePath, {
      foreignHolderScanner: quietScanner,
      logger: { warn: (message) => warnings.push(message) },
    });
    expect(warnings.join('\n')).toContain('indexed above the watermark');
    expect(await reopened.ftsRecovery).toBe(1);
    expect(reopened.searchMessages('twice').mode).toBe('fts');
    await reopened.close();
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 2 });
  });
});
