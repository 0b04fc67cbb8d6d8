import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSessionStore, SCHEMA_VERSION } from './index.js';
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

describe('migrating a file written by the previous schema', () => {
  it('swaps the listing and transcript indexes, adds stored responses, and keeps every row', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const old = new BetterSqlite3(databasePath);
    old.pragma('journal_mode = WAL');
    const previous = loadMigrations().slice(0, 5); // the schema as released before these indexes
    for (const migration of previous)
      for (const statement of migration.statements) old.exec(statement);
    old.pragma('user_version = 5');
    old.exec(`INSERT INTO sessions (id, source, started_at, lineage_root_id, lineage_active_at)
      VALUES ('kept', 'cli', 1, 'kept', 1)`);
    old.exec(
      `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('kept', 'user', 'still here', 1)`,
    );
    old.close();

    const store = await openSessionStore({ path: databasePath });
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      const indexes = await store.withWriteTransaction(
        (database) =>
          database
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'")
            .pluck()
            .all() as string[],
      );
      expect(indexes).toEqual(
        expect.arrayContaining([
          'idx_sessions_listing',
          'idx_sessions_compression_children',
          'idx_messages_session_id',
          'idx_stored_responses_used',
        ]),
      );
      for (const dropped of [
        'idx_sessions_lineage_active',
        'idx_sessions_effective_activity',
        'idx_messages_session',
        'idx_messages_session_active',
      ])
        expect(indexes).not.toContain(dropped);
      expect(store.listSessionsRich().sessions[0]).toMatchObject({
        id: 'kept',
        preview: 'still here',
      });
      expect(store.searchMessages('still').hits).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
