import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/index.js';
import { reopenStore } from './helpers.js';

/**
 * Real conditions under which SQLite cannot use WAL's shared-memory index at a path: something
 * other than a regular file sits where `state.db-shm` must go (left by a sync tool or a broken
 * restore). SQLite reports them as "disk I/O error", "unable to open database file" or "attempt
 * to write a readonly database" on the first use of the index, after the header already says
 * WAL. (A file system without shared mmap, such as some network and FUSE mounts, fails the same
 * way but needs root to mount.)
 */
const obstacles = {
  'a FIFO': (shmPath: string) => execFileSync('mkfifo', [shmPath]),
  'a directory': (shmPath: string) => mkdirSync(shmPath),
  'a symlink to /dev/null': (shmPath: string) => symlinkSync('/dev/null', shmPath),
} as const;

function journalModeOnDisk(databasePath: string): string {
  const probe = new BetterSqlite3(databasePath);
  try {
    return String(probe.pragma('journal_mode', { simple: true }));
  } finally {
    probe.close();
  }
}

describe('WAL → DELETE fallback on a real file-system condition', () => {
  it.each(Object.keys(obstacles) as (keyof typeof obstacles)[])(
    'a new state.db whose -shm path is %s runs in DELETE mode, for every opener',
    async (kind) => {
      const home = await tempHome();
      const databasePath = path.join(home.path, 'state.db');
      obstacles[kind](`${databasePath}-shm`);
      const warnings: string[] = [];
      const store = await openSessionStore({
        path: databasePath,
        logger: { warn: (message) => warnings.push(message) },
      });
      try {
        expect(store.journalMode).toBe('delete');
        expect(warnings.join('\n')).toContain('WAL cannot be used for');
        await store.createSession({ id: 's', source: 'cli' });
        await store.appendMessage('s', { role: 'user', content: 'still stored' });
        const second = await reopenStore(databasePath);
        expect(second.journalMode).toBe('delete');
        await second.appendMessage('s', { role: 'assistant', content: 'from another opener' });
        expect(store.getMessages('s').map((message) => message.content)).toEqual([
          'still stored',
          'from another opener',
        ]);
        expect(store.searchMessages('opener').hits).toHaveLength(1);
      } finally {
        await store.close();
      }
      expect(journalModeOnDisk(databasePath)).toBe('delete');
      // The obstacle is not ours to remove.
      expect(lstatSync(`${databasePath}-shm`).isFile()).toBe(false);
    },
  );

  it('a WAL database whose -shm path became unusable is put back to DELETE when nobody else has it open', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const first = await openSessionStore({ path: databasePath });
    expect(first.journalMode).toBe('wal');
    await first.createSession({ id: 'kept', source: 'cli' });
    await first.close();
    execFileSync('mkfifo', [`${databasePath}-shm`]);
    const store = await reopenStore(databasePath);
    expect(store.journalMode).toBe('delete');
    expect(store.getSession('kept')).toBeDefined();
    await store.endSession('kept', 'agent_close');
    expect(store.requireSession('kept').endReason).toBe('agent_close');
  });
});
