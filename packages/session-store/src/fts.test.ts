import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { spawnProcess } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { breakFtsIndex, corruptFtsIndex, ftsTriggerCount } from '../test/corrupt-fts.js';
import { openTestStore, reopenStore } from '../test/helpers.js';
import {
  type Clock,
  currentProcessIdentity,
  ERROR_MESSAGES,
  FTS_REBUILD_DEFERRAL_KEY,
  type SessionStore,
  scanForeignHolders,
} from './index.js';

const fixture = path.join(import.meta.dirname, '../test/fixtures/hold-database.mjs');
const quietScanner = async () => [];

async function seedMessages(store: SessionStore, count: number): Promise<void> {
  await store.createSession({ id: 'chat', source: 'cli', title: 'Chat' });
  await store.appendMessages(
    'chat',
    Array.from({ length: count }, (_, index) => ({
      role: 'user' as const,
      content: `alpha message number ${index}`,
    })),
  );
}

function manualClock(): Clock & { advance(ms: number): void } {
  let monotonic = 0;
  return {
    now: () => Date.now() / 1000,
    monotonicMs: () => monotonic,
    advance: (ms) => {
      monotonic += ms;
    },
  };
}

describe('searchMessages', () => {
  it('finds messages with highlighted snippets and session info, newest first', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'telegram', title: 'Gardening' });
    await store.appendMessage('a', {
      role: 'user',
      content: 'how deep should tomato seeds be planted',
    });
    await store.appendMessage('a', {
      role: 'assistant',
      content: 'plant tomato seeds a quarter inch deep',
    });
    await store.appendMessage('a', { role: 'user', content: 'thanks' });
    const result = store.searchMessages('tomato');
    expect(result.mode).toBe('fts');
    expect(result.hits).toHaveLength(2);
    expect(result.hits[0]).toMatchObject({
      role: 'assistant',
      session: { id: 'a', title: 'Gardening', source: 'telegram' },
    });
    expect(result.hits[0]?.snippet).toContain('>>>tomato<<<');
  });

  it('searches whatever a person types: punctuation and operator words are text', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const texts = {
      'gpt-4.1': 'we compared gpt-4.1 with the older model',
      'e-mail': 'please send the e-mail tomorrow',
      "don't": "I don't think so",
      'C++': 'templates in C++ are hard',
      'what?': 'what? that cannot be right',
      'ada@example.com': 'write to ada@example.com for access',
      NOT: 'NOT a problem at all',
    };
    const ids = new Map<string, number>();
    for (const [query, content] of Object.entries(texts)) {
      ids.set(query, await store.appendMessage('s', { role: 'user', content }));
    }
    await store.appendMessage('s', { role: 'user', content: 'unrelated words only' });
    for (const query of Object.keys(texts)) {
      const result = store.searchMessages(query);
      expect(result.mode, query).toBe('fts');
      expect(
        result.hits.map((hit) => hit.messageId),
        query,
      ).toContain(ids.get(query));
    }
    expect(store.searchMessages('gpt-4.1').hits).toHaveLength(1);
    expect(store.searchMessages('ada@example.com').hits).toHaveLength(1);
    // Words are ANDed; a trailing * is a prefix; a quoted phrase stays a phrase.
    expect(store.searchMessages('send tomorrow').hits.map((hit) => hit.messageId)).toEqual([
      ids.get('e-mail'),
    ]);
    expect(store.searchMessages('templ*').hits.map((hit) => hit.messageId)).toEqual([
      ids.get('C++'),
    ]);
    expect(store.searchMessages('"older model"').hits).toHaveLength(1);
    expect(store.searchMessages('"model older"').hits).toHaveLength(0);
    // Nothing searchable (only punctuation, a lone quote) finds nothing rather than failing.
    expect(store.searchMessages('?? -- "').hits).toEqual([]);
    expect(store.searchMessages('"unterminated phrase').hits).toEqual([]);
  });

  it('the same text searches the same way in LIKE mode while the index is stale', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await store.createSession({ id: 's', source: 'cli' });
    const target = await store.appendMessage('s', {
      role: 'user',
      content: 'we compared gpt-4.1 with the older model',
    });
    await store.appendMessage('s', { role: 'user', content: 'gpt-4.1 alone' });
    breakFtsIndex(databasePath, 'missing table');
    await store.appendMessage('s', { role: 'user', content: 'after' }); // detaches the index
    const result = store.searchMessages('gpt-4.1 older');
    expect(result.mode).toBe('like');
    expect(result.hits.map((hit) => hit.messageId)).toEqual([target]);
  });

  it('raw FTS5 syntax is opt-in, and its syntax errors are clear errors', async () => {
    const { store } = await openTestStore();
    await seedMessages(store, 20);
    expect(store.searchMessages('alpha NOT number', { syntax: 'fts5' }).hits).toEqual([]);
    expect(store.searchMessages('number 7 OR number 8', { syntax: 'fts5' }).hits).toHaveLength(2);
    expect(() => store.searchMessages('alpha AND', { syntax: 'fts5' })).toThrow(
      expect.objectContaining({ code: 'invalid_search_query' }),
    );
    expect(() => store.searchMessages('"unterminated', { syntax: 'fts5' })).toThrow(
      /Invalid search query/,
    );
    // The same text as terms is fine: it looks for messages with both words.
    expect(store.searchMessages('alpha AND').hits).toEqual([]);
  });

  it('indexes updates and deletes through the triggers', async () => {
    const { store } = await openTestStore();
    await seedMessages(store, 1);
    await store.withWriteTransaction((database) =>
      database.prepare("UPDATE messages SET content = 'beta words'").run(),
    );
    expect(store.searchMessages('alpha').hits).toHaveLength(0);
    expect(store.searchMessages('beta').hits).toHaveLength(1);
    await store.deleteSession('chat');
    expect(store.searchMessages('beta').hits).toHaveLength(0);
  });
});

describe('FTS fail-open and recovery', () => {
  it('keeps transcript writes when the index is corrupt, records fts_stale, drops triggers and falls back to LIKE', async () => {
    const { store, databasePath } = await openTestStore({ foreignHolderScanner: quietScanner });
    await seedMessages(store, 2000);
    corruptFtsIndex(databasePath);
    const id = await store.appendMessage('chat', {
      role: 'user',
      content: 'written after the corruption',
    });
    expect(store.getMessages('chat', { afterId: id - 1 })[0]?.content).toBe(
      'written after the corruption',
    );
    expect(store.isFtsStale()).toBe(true);
    expect(ftsTriggerCount(databasePath)).toBe(0);
    const result = store.searchMessages('after the corruption');
    expect(result.mode).toBe('like');
    expect(result.hits.map((hit) => hit.messageId)).toEqual([id]);
  });

  it('a search that meets a corrupt index detaches it and answers with LIKE', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await seedMessages(store, 200);
    corruptFtsIndex(databasePath);
    const result = store.searchMessages('number 199');
    expect(result.mode).toBe('like');
    expect(result.hits).toHaveLength(1);
    expect(result.hits[0]?.snippet).toBe('alpha message >>>number<<< >>>199<<<');
    expect(store.isFtsStale()).toBe(true);
  });

  it('rebuilds on the next open in a worker and clears the stale flag', async () => {
    const { store, databasePath } = await openTestStore({ foreignHolderScanner: quietScanner });
    await seedMessages(store, 2000);
    corruptFtsIndex(databasePath);
    await store.appendMessage('chat', { role: 'user', content: 'gamma after corruption' });
    expect(store.isFtsStale()).toBe(true);
    await store.close();
    const reopened = await reopenStore(databasePath);
    expect(await reopened.ftsRecovery).toBe(1);
    expect(reopened.isFtsStale()).toBe(false);
    expect(ftsTriggerCount(databasePath)).toBe(3);
    expect(reopened.searchMessages('gamma')).toMatchObject({
      mode: 'fts',
      hits: [expect.objectContaining({ role: 'user' })],
    });
    expect(reopened.searchMessages('alpha', { limit: 200 }).hits).toHaveLength(200);
  });

  it('defers the rebuild while another process holds the database, then rebuilds once it is gone', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await seedMessages(store, 50);
    corruptFtsIndex(databasePath);
    await store.appendMessage('chat', { role: 'user', content: 'delta' });
    const holder = await spawnProcess({
      command: process.execPath,
      args: [fixture, databasePath],
      readyLine: 'holding',
    });
    const warnings: string[] = [];
    const second = await reopenStore(databasePath, {
      recoverFtsOnOpen: false,
      logger: { warn: (message) => warnings.push(message) },
    });
    expect(await second.rebuildFts()).toBe(0);
    expect(second.isFtsStale()).toBe(true);
    expect(
      warnings.some((warning) =>
        warning.startsWith('Skipping Session DB FTS rebuild while foreign processes hold'),
      ),
    ).toBe(true);
    expect(warnings.join('\n')).toContain(`pid ${holder.pid}`);
    const deferral = await second.withWriteTransaction(
      (database) =>
        database
          .prepare('SELECT value FROM state_meta WHERE key = ?')
          .pluck()
          .get(FTS_REBUILD_DEFERRAL_KEY) as string,
    );
    expect(JSON.parse(deferral)).toMatchObject({ attempts: 1, holderPids: [holder.pid] });
    await holder.stop();
    expect(await second.rebuildFts()).toBe(1);
    expect(second.isFtsStale()).toBe(false);
    expect(second.searchMessages('delta').mode).toBe('fts');
  });

  it('rebuilds off the main thread: the event loop keeps running while the rebuild holds the write lock', async () => {
    const { store, databasePath } = await openTestStore({
      foreignHolderScanner: quietScanner,
      recoverFtsOnOpen: false,
    });
    await seedMessages(store, 30_000);
    corruptFtsIndex(databasePath);
    await store.appendMessage('chat', { role: 'user', content: 'zeta' });
    expect(store.isFtsStale()).toBe(true);
    // A second connection on this thread probes for the write lock between event-loop turns. An
    // inline (main-thread) rebuild could never be observed holding it: the probe would not run
    // until the rebuild had committed.
    const probe = new BetterSqlite3(databasePath, { timeout: 0 });
    let sawRebuildHoldingLock = false;
    let settled = false;
    const rebuilt = store.rebuildFts().finally(() => {
      settled = true;
    });
    while (!settled) {
      try {
        probe.exec('BEGIN IMMEDIATE');
        probe.exec('ROLLBACK');
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
        sawRebuildHoldingLock = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    probe.close();
    expect(await rebuilt).toBe(1);
    expect(sawRebuildHoldingLock).toBe(true);
    expect(store.searchMessages('zeta').mode).toBe('fts');
  }, 60_000);

  it('defers the rebuild while another holder keeps the rebuild lock (fail closed after the timeout)', async () => {
    const { store, databasePath } = await openTestStore({
      foreignHolderScanner: quietScanner,
      recoverFtsOnOpen: false,
      rebuildLockTimeoutMs: 150,
    });
    await seedMessages(store, 20);
    corruptFtsIndex(databasePath);
    await store.appendMessage('chat', { role: 'user', content: 'eta' });
    // The search's catch-up meets the broken index and detaches it.
    expect(store.searchMessages('eta').mode).toBe('like');
    const lockPath = `${databasePath}.fts_rebuild.lock`;
    const live = currentProcessIdentity(); // a live holder: never broken
    writeFileSync(lockPath, JSON.stringify({ ...live, acquiredAt: Date.now() / 1000 }));
    expect(await store.rebuildFts()).toBe(0);
    expect(store.isFtsStale()).toBe(true);
    expect(ftsTriggerCount(databasePath)).toBe(0);
    await rm(lockPath);
    expect(await store.rebuildFts()).toBe(1);
    expect(store.isFtsStale()).toBe(false);
  });

  it('counts a failed holder scan as held (fail closed)', async () => {
    const { databasePath } = await openTestStore();
    const holders = await scanForeignHolders({ databasePath, procRoot: '/nonexistent-proc' });
    expect(holders).toEqual([expect.objectContaining({ pid: -1 })]);
    const throwing = await reopenStore(databasePath, {
      foreignHolderScanner: async () => {
        throw new Error('scan exploded');
      },
    });
    expect(await throwing.rebuildFts()).toBe(0);
  });

  it('retries deferred recovery at most once per cooldown', async () => {
    const clock = manualClock();
    let held = true;
    const { store, databasePath } = await openTestStore({
      clock,
      recoverFtsOnOpen: false,
      foreignHolderScanner: async () => (held ? [{ pid: 99999, reason: 'test holder' }] : []),
    });
    await seedMessages(store, 10);
    corruptFtsIndex(databasePath);
    await store.appendMessage('chat', { role: 'user', content: 'epsilon' });
    // The search's catch-up meets the broken index and detaches it.
    expect(store.searchMessages('epsilon').mode).toBe('like');
    expect(await store.retryDeferredFtsRecovery()).toBe(0);
    held = false;
    expect(await store.retryDeferredFtsRecovery()).toBe(0); // still inside the cooldown
    expect(store.isFtsStale()).toBe(true);
    clock.advance(300_000);
    expect(await store.retryDeferredFtsRecovery()).toBe(1);
    expect(store.isFtsStale()).toBe(false);
    clock.advance(300_000); // past the cooldown: only the clean index keeps it from rebuilding
    expect(await store.retryDeferredFtsRecovery()).toBe(0); // nothing stale
  });

  it('exposes the exact skip message', () => {
    expect(ERROR_MESSAGES.ftsRebuildSkipped('pid 1: x')).toBe(
      'Skipping Session DB FTS rebuild while foreign processes hold the database or WAL sidecars (pid 1: x); canonical transcript writes remain available.',
    );
  });
});

describe('FTS failures beyond corruption fail open too', () => {
  it('a dropped FTS table: appends and deletes succeed, search answers with LIKE, a rebuild restores it', async () => {
    const { store, databasePath } = await openTestStore({ foreignHolderScanner: quietScanner });
    await seedMessages(store, 50);
    breakFtsIndex(databasePath, 'missing table');
    const id = await store.appendMessage('chat', { role: 'user', content: 'kappa after the drop' });
    expect(store.getMessages('chat', { afterId: id - 1 }).map((row) => row.content)).toEqual([
      'kappa after the drop',
    ]);
    expect(store.isFtsStale()).toBe(true);
    expect(store.searchMessages('kappa')).toMatchObject({
      mode: 'like',
      hits: [expect.objectContaining({ messageId: id })],
    });
    await store.createSession({ id: 'doomed', source: 'cli' });
    await store.appendMessage('doomed', { role: 'user', content: 'bye' });
    expect(await store.deleteSession('doomed')).toBe(true);
    expect(await store.rebuildFts()).toBe(1);
    expect(store.searchMessages('kappa')).toMatchObject({ mode: 'fts', hits: [{ messageId: id }] });
    expect(ftsTriggerCount(databasePath)).toBe(3);
  });

  it('a search that meets a dropped FTS table answers with LIKE, not "invalid search query"', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await seedMessages(store, 20);
    breakFtsIndex(databasePath, 'missing table');
    const result = store.searchMessages('number 17');
    expect(result.mode).toBe('like');
    expect(result.hits.map((hit) => hit.snippet)).toEqual(['alpha message >>>number<<< >>>17<<<']);
    expect(store.isFtsStale()).toBe(true);
  });

  it('a missing content view: search answers with LIKE', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await seedMessages(store, 20);
    breakFtsIndex(databasePath, 'missing content view');
    expect(store.searchMessages('alpha', { limit: 5 }).mode).toBe('like');
    expect(store.isFtsStale()).toBe(true);
  });

  it('an "invalid file format" index found at open is detached at once and rebuilt in the background', async () => {
    const { store, databasePath } = await openTestStore();
    await seedMessages(store, 50);
    await store.close();
    breakFtsIndex(databasePath, 'invalid file format');
    const warnings: string[] = [];
    const reopened = await reopenStore(databasePath, {
      recoverFtsOnOpen: false,
      logger: { warn: (message) => warnings.push(message) },
    });
    expect(warnings.join('\n')).toContain('invalid fts5 file format');
    expect(reopened.isFtsStale()).toBe(true);
    // Writes never meet the broken index.
    await reopened.appendMessage('chat', { role: 'user', content: 'lambda' });
    expect(await reopened.deleteSession('chat')).toBe(true);
    expect(reopened.getMessages('chat')).toEqual([]);
    await reopened.createSession({ id: 'after', source: 'cli' });
    const fresh = await reopened.appendMessage('after', { role: 'user', content: 'lambda again' });
    expect(reopened.searchMessages('lambda').mode).toBe('like');
    await reopened.close();
    // A default open rebuilds it in the background (the rebuild can drop an unreadable index).
    const recovered = await reopenStore(databasePath, { foreignHolderScanner: quietScanner });
    expect(await recovered.ftsRecovery).toBe(1);
    expect(recovered.isFtsStale()).toBe(false);
    expect(recovered.searchMessages('lambda')).toMatchObject({
      mode: 'fts',
      hits: [{ messageId: fresh }],
    });
  });

  it('a corrupt index does not make deleting a session throw', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await seedMessages(store, 2000);
    corruptFtsIndex(databasePath);
    expect(await store.deleteSession('chat')).toBe(true);
    expect(store.getSession('chat')).toBeUndefined();
    expect(store.getMessages('chat')).toEqual([]);
    expect(store.isFtsStale()).toBe(true);
  });
});
