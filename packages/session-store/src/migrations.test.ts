import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ftsIndexReport } from '../test/fts-index.js';
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

  it('keeps the FTS objects defined only in the custom FTS migrations, which the rebuild runs in order', () => {
    const statements = ftsMigrationStatements().join('\n');
    expect(statements).toContain('CREATE VIRTUAL TABLE IF NOT EXISTS `messages_fts` USING fts5');
    expect(statements).toContain("VALUES ('rebuild')");
    // 0008 after 0001: its triggers replace 0001's, and it sets the watermark.
    expect(statements.indexOf("'fts_indexed_through'")).toBeGreaterThan(
      statements.indexOf("VALUES ('rebuild')"),
    );
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

describe('migrating a file written by schema version 7', () => {
  it('keeps the leases held during the upgrade and stores each lease table in one b-tree, without an expiry index', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const old = new BetterSqlite3(databasePath);
    old.pragma('journal_mode = WAL');
    for (const migration of loadMigrations().slice(0, 7))
      for (const statement of migration.statements) old.exec(statement);
    old.pragma('user_version = 7');
    old.exec(`INSERT INTO sessions (id, source, started_at, lineage_root_id, lineage_active_at)
      VALUES ('root', 'cli', 1, 'root', 1)`);
    // Held by this (live) process until far in the future, as a running turn and compression
    // of another process still on the previous version would hold them.
    const holder = `pid=${process.pid} token=upgrade`;
    const expiresAt = Date.now() / 1000 + 3600;
    old
      .prepare(
        'INSERT INTO session_turn_leases (conversation_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)',
      )
      .run('root', holder, 1, expiresAt);
    old
      .prepare(
        'INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)',
      )
      .run('root', holder, 1, expiresAt);
    old.close();

    const store = await openSessionStore({ path: databasePath });
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(store.getTurnLease('root')).toEqual({
        conversationId: 'root',
        holder,
        acquiredAt: 1,
        expiresAt,
        active: true,
      });
      expect(await store.acquireTurnLease('root')).toBeNull();
      expect(await store.acquireCompressionLease('root')).toBeNull();
      const objects = await store.withWriteTransaction(
        (database) =>
          database
            .prepare(
              `SELECT type, name, sql FROM sqlite_master
               WHERE tbl_name IN ('session_turn_leases', 'compression_locks') ORDER BY name`,
            )
            .all() as { type: string; name: string; sql: string | null }[],
      );
      // A WITHOUT ROWID table is its primary key's b-tree: no automatic index beside it, and
      // no expiry index either.
      expect(objects).toEqual([
        expect.objectContaining({
          type: 'table',
          name: 'compression_locks',
          sql: expect.stringContaining('WITHOUT ROWID'),
        }),
        expect.objectContaining({
          type: 'table',
          name: 'session_turn_leases',
          sql: expect.stringContaining('WITHOUT ROWID'),
        }),
      ]);
      expect(await store.releaseTurnLease('root', holder)).toBe(true);
      expect(await store.releaseCompressionLease('root', holder)).toBe(true);
      expect(await store.acquireTurnLease('root')).toMatch(/^pid=/);
    } finally {
      await store.close();
    }
  });
});

describe('migrating a file written by schema version 8 (messages indexed by a trigger)', () => {
  it('keeps every row searchable, sets the watermark to the highest id handed out, and indexes later rows after their commit', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const old = new BetterSqlite3(databasePath);
    old.pragma('journal_mode = WAL');
    for (const migration of loadMigrations().slice(0, 8))
      for (const statement of migration.statements) old.exec(statement);
    old.pragma('user_version = 8');
    old.exec(`INSERT INTO sessions (id, source, started_at, lineage_root_id, lineage_active_at)
      VALUES ('kept', 'cli', 1, 'kept', 1)`);
    const insert = old.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('kept', ?, ?, 1)",
    );
    for (let index = 0; index < 30; index += 1)
      insert.run(index % 3 === 0 ? 'tool' : 'user', `old row ${index} about ferries`);
    // The highest id handed out was deleted: a later row must still land above the watermark.
    old.exec('DELETE FROM messages WHERE id = 30');
    old.close();

    const store = await openSessionStore({ path: databasePath });
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(ftsIndexReport(databasePath)).toMatchObject({
        integrity: 'ok',
        through: 30,
        newest: 29,
        indexedRows: 29,
      });
      expect(store.searchMessages('ferries', { limit: 100 }).hits).toHaveLength(29);
      const fresh = await store.appendMessage('kept', { role: 'user', content: 'new ferries' });
      expect(fresh).toBe(31);
      await store.withWriteTransaction((database) => {
        database.prepare('DELETE FROM messages WHERE id IN (1, 2)').run();
        database.prepare("UPDATE messages SET content = 'old row edited' WHERE id = 3").run();
      });
      expect(
        store
          .searchMessages('ferries', { limit: 100 })
          .hits.map((hit) => hit.messageId)
          .slice(0, 2),
      ).toEqual([31, 29]);
      expect(store.searchMessages('edited').hits.map((hit) => hit.messageId)).toEqual([3]);
    } finally {
      await store.close();
    }
    expect(ftsIndexReport(databasePath)).toMatchObject({ integrity: 'ok', indexedRows: 28 });
  });
});

describe('migrating a file written by schema version 9', () => {
  it('makes the parent and session-key indexes partial: root sessions stay out of them, lookups by either still use them', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const old = new BetterSqlite3(databasePath);
    old.pragma('journal_mode = WAL');
    for (const migration of loadMigrations().slice(0, 9))
      for (const statement of migration.statements) old.exec(statement);
    old.pragma('user_version = 9');
    old.exec(`INSERT INTO sessions (id, source, session_key, started_at, lineage_root_id, lineage_active_at)
      VALUES ('keyed', 'api_server', 'peer-1', 1, 'keyed', 1), ('root', 'cli', NULL, 2, 'root', 2)`);
    old.close();

    const store = await openSessionStore({ path: databasePath });
    try {
      const child = await store.createSession({
        source: 'cli',
        parentSessionId: 'root',
      });
      expect(
        store.findLatestGatewaySessionForPeer({ source: 'api_server', sessionKey: 'peer-1' }),
      ).toMatchObject({ id: 'keyed' });
      await store.withWriteTransaction((database) => {
        // Only rows with a value are in each index.
        const entries = (name: string, column: string) =>
          database
            .prepare(`SELECT count(*) FROM sessions INDEXED BY ${name} WHERE ${column} IS NOT NULL`)
            .pluck()
            .get();
        const definition = (name: string) =>
          database.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name);
        expect(definition('idx_sessions_parent')).toMatch(
          /WHERE "sessions"\."parent_session_id" IS NOT NULL$/,
        );
        expect(definition('idx_sessions_session_key')).toMatch(
          /WHERE "sessions"\."session_key" IS NOT NULL$/,
        );
        expect(entries('idx_sessions_parent', 'parent_session_id')).toBe(1);
        expect(entries('idx_sessions_session_key', 'session_key')).toBe(1);
        // The store's lookups are equalities, which imply IS NOT NULL: the planner still uses the
        // partial indexes for each shape of them.
        const plan = (sql: string) =>
          (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('x') as { detail: string }[])
            .map((row) => row.detail)
            .join('\n');
        for (const sql of [
          "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_edge = 'compression'",
          'UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?',
          `WITH RECURSIVE chain(id) AS (SELECT ? UNION
             SELECT s.id FROM sessions s JOIN chain ON s.parent_session_id = chain.id)
           SELECT id FROM chain`,
        ])
          expect(plan(sql), sql).toContain('USING INDEX idx_sessions_parent');
        for (const sql of [
          'SELECT id FROM sessions s WHERE s.session_key = ? AND s.source = 1',
          'UPDATE sessions SET resume_pending = 0 WHERE session_key = ? AND resume_pending = 1',
        ])
          expect(plan(sql), sql).toContain('USING INDEX idx_sessions_session_key');
      });
      expect(child.parentSessionId).toBe('root');
    } finally {
      await store.close();
    }
  });
});
