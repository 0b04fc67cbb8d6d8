import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  applyMigrations,
  ftsMigrationStatements,
  loadMigrations,
  splitStatements,
} from './migrations.js';

describe('migrations', () => {
  it('splits drizzle files on statement breakpoints', () => {
    expect(splitStatements('A;\n--> statement-breakpoint\nB;\n')).toEqual(['A;', 'B;']);
  });

  it('applies every shipped migration once and is a no-op on the second run', async () => {
    const home = await tempHome();
    const database = new BetterSqlite3(path.join(home.path, 'm.db'));
    try {
      const first = applyMigrations(database);
      expect(first).toEqual({ from: 0, to: loadMigrations().length });
      expect(applyMigrations(database)).toEqual({ from: first.to, to: first.to });
      const tables = database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .pluck()
        .all();
      expect(tables).toEqual(
        expect.arrayContaining([
          'sessions',
          'messages',
          'messages_fts',
          'delivery_obligations',
          'async_delegations',
          'state_meta',
        ]),
      );
    } finally {
      database.close();
    }
  });

  it('keeps the FTS objects defined only in the custom FTS migration', () => {
    const statements = ftsMigrationStatements().join('\n');
    expect(statements).toContain('CREATE VIRTUAL TABLE IF NOT EXISTS `messages_fts` USING fts5');
    expect(statements).toContain("VALUES ('rebuild')");
  });
});
