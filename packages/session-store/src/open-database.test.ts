import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import type { Database } from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  applyJournalMode,
  assertSqliteFile,
  filesystemTypeOf,
  isWalResetAffected,
} from './open-database.js';

/**
 * A stand-in for the driver's connection whose `journal_mode = WAL` fails the way SQLite does where
 * WAL is impossible (no shared memory, an authorizer, a flaky disk) — conditions a test machine
 * cannot produce on demand. It records the pragmas it was asked to run.
 */
function connectionFailingWal(failure: string): { database: Database; pragmas: string[] } {
  const pragmas: string[] = [];
  const database = {
    pragma(source: string) {
      pragmas.push(source);
      if (source === 'journal_mode') return 'delete';
      if (source === 'journal_mode = WAL') throw new Error(failure);
      return 'delete';
    },
    prepare: () => ({ pluck: () => ({ get: () => '3.53.2' }) }),
  } as unknown as Database;
  return { database, pragmas };
}

describe('open-database helpers', () => {
  it('knows which SQLite builds carry the WAL-reset bug', () => {
    expect(isWalResetAffected('3.7.0')).toBe(true);
    expect(isWalResetAffected('3.51.2')).toBe(true);
    expect(isWalResetAffected('3.51.3')).toBe(false);
    expect(isWalResetAffected('3.53.2')).toBe(false);
    expect(isWalResetAffected('3.6.23')).toBe(false);
  });

  it('accepts an absent or empty file and refuses a short or foreign one', async () => {
    const home = await tempHome();
    const file = path.join(home.path, 'state.db');
    expect(() => assertSqliteFile(file)).not.toThrow();
    writeFileSync(file, '');
    expect(() => assertSqliteFile(file)).not.toThrow();
    writeFileSync(file, 'SQLite format 3\u0000');
    expect(() => assertSqliteFile(file)).toThrow(
      expect.objectContaining({ code: 'database_corrupt' }),
    );
  });

  it('finds the filesystem type of a path on Linux', () => {
    if (process.platform !== 'linux') return;
    expect(typeof filesystemTypeOf('/')).toBe('string');
  });

  it.each(['locking protocol', 'not authorized', 'disk I/O error'])(
    'falls back to DELETE when enabling WAL fails with "%s"',
    (failure) => {
      const { database, pragmas } = connectionFailingWal(failure);
      expect(
        applyJournalMode(database, {
          requested: 'wal',
          filePath: '/x/state.db',
          filesystemType: 'ext4',
        }),
      ).toBe('delete');
      expect(pragmas).toContain('journal_mode = DELETE');
    },
  );

  it('does not hide other failures to enable WAL', () => {
    const { database } = connectionFailingWal('attempt to write a readonly database');
    expect(() =>
      applyJournalMode(database, {
        requested: 'wal',
        filePath: '/x/state.db',
        filesystemType: 'ext4',
      }),
    ).toThrow('readonly database');
  });
});
