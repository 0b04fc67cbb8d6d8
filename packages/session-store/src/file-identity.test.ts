import { copyFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { ERROR_MESSAGES, openSessionStore } from './index.js';

describe('a state.db replaced or removed under an open store', () => {
  it('an unlinked database fails the next write loudly instead of writing to the orphaned file', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    for (const file of [databasePath, `${databasePath}-wal`, `${databasePath}-shm`])
      rmSync(file, { force: true });
    await expect(
      store.appendMessage('s', { role: 'user', content: 'lost?' }),
    ).rejects.toMatchObject({
      code: 'database_replaced',
      message: ERROR_MESSAGES.databaseReplaced(databasePath),
    });
    await expect(store.createSession({ id: 't', source: 'cli' })).rejects.toMatchObject({
      code: 'database_replaced',
    });
  });

  it('a database replaced by another file fails the next write; the new file is untouched', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'original', source: 'cli' });
    const elsewhere = await tempHome();
    const otherPath = path.join(elsewhere.path, 'state.db');
    const other = await openSessionStore({ path: otherPath, journalMode: 'delete' });
    await other.createSession({ id: 'replacement', source: 'cli' });
    await other.close();
    // Moved aside with its sidecars (a restore from backup, a sync tool), another file put back.
    for (const suffix of ['', '-wal', '-shm']) {
      renameSync(`${databasePath}${suffix}`, `${databasePath}.old${suffix}`);
    }
    copyFileSync(otherPath, databasePath);
    await expect(store.endSession('original', 'agent_close')).rejects.toMatchObject({
      code: 'database_replaced',
    });
    const reader = await reopenStore(databasePath);
    expect(reader.getSession('replacement')).toBeDefined();
    expect(reader.getSession('original')).toBeUndefined();
  });

  it('a deleted WAL fails the next write with wal_generation_deleted', async () => {
    const { store, databasePath } = await openTestStore();
    expect(store.journalMode).toBe('wal');
    await store.createSession({ id: 's', source: 'cli' });
    rmSync(`${databasePath}-wal`);
    await expect(store.endSession('s', 'agent_close')).rejects.toMatchObject({
      code: 'wal_generation_deleted',
      message: ERROR_MESSAGES.walGenerationDeleted(databasePath),
    });
  });

  it('the same files keep working (a checkpoint truncating the WAL is not a replacement)', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    for (let index = 0; index < 120; index += 1) {
      await store.appendMessage('s', { role: 'user', content: `message ${index}` });
    }
    store.checkpoint();
    const other = new BetterSqlite3(databasePath);
    // The store's own checkpoint on its worker (every 50 writes) may still be running: a
    // truncating checkpoint is busy until it is done, so try again for a while.
    let busy = 1;
    for (let attempt = 0; attempt < 100 && busy !== 0; attempt += 1) {
      busy = other.pragma('wal_checkpoint(TRUNCATE)', { simple: true }) as number;
      if (busy !== 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(busy).toBe(0);
    other.close();
    expect(await store.endSession('s', 'agent_close')).toBe(true);
  });
});
