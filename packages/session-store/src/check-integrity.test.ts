import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { checkStateDbIntegrity } from './check-integrity.js';
import { SessionStoreError } from './errors.js';
import { SCHEMA_VERSION } from './limits.js';
import { openSessionStore } from './open-session-store.js';

async function storeWithMessages(file: string, count: number) {
  const store = await openSessionStore({ path: file });
  const session = await store.createSession({ source: 'cli' });
  await store.appendMessages(
    session.id,
    Array.from({ length: count }, (_, index) => ({
      role: 'user' as const,
      content: `message ${index} ${'x'.repeat(400)}`,
    })),
  );
  await store.close();
}

describe('checkStateDbIntegrity', () => {
  it('passes a healthy store and reports its schema version, journal mode and FTS flag', async () => {
    const file = path.join((await tempHome()).path, 'state.db');
    await storeWithMessages(file, 20);
    const before = readFileSync(file);
    const result = await checkStateDbIntegrity(file);
    expect(result).toEqual({
      ok: true,
      problems: [],
      schemaVersion: SCHEMA_VERSION,
      journalMode: 'wal',
      ftsStale: false,
    });
    // Read-only: the file is byte for byte what it was.
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('passes a file whose newest messages are not indexed yet (a writer killed before its catch-up)', async () => {
    const file = path.join((await tempHome()).path, 'state.db');
    await storeWithMessages(file, 20);
    const raw = new BetterSqlite3(file);
    // Committed, above the FTS watermark: what a killed writer leaves for the next open.
    raw.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) SELECT session_id, 'user', 'pending', 1 FROM messages LIMIT 1",
    );
    expect(
      raw
        .prepare(
          "SELECT (SELECT max(id) FROM messages) > (SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = 'fts_indexed_through')",
        )
        .pluck()
        .get(),
    ).toBe(1);
    raw.close();
    expect(await checkStateDbIntegrity(file)).toMatchObject({ ok: true, problems: [] });
  });

  it('finds damaged pages in a file that still opens', async () => {
    const file = path.join((await tempHome()).path, 'state.db');
    await storeWithMessages(file, 400);
    const pageSize = 4096;
    const pages = statSync(file).size / pageSize;
    expect(pages).toBeGreaterThan(20);
    // Scribble over the middle pages, leaving the header and schema page alone.
    const fd = openSync(file, 'r+');
    const garbage = Buffer.alloc(pageSize * 4, 0x5a);
    writeSync(fd, garbage, 0, garbage.length, pageSize * Math.floor(pages / 2));
    closeSync(fd);
    const result = await checkStateDbIntegrity(file, { maxProblems: 5 });
    expect(result.ok).toBe(false);
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.problems.length).toBeLessThanOrEqual(5);
  });

  it('reports a file that is not SQLite instead of throwing, and throws for a missing file', async () => {
    const home = (await tempHome()).path;
    const junk = path.join(home, 'junk.db');
    writeFileSync(junk, 'this is not a database at all, just text '.repeat(200));
    const result = await checkStateDbIntegrity(junk);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatch(/SQLITE_NOTADB/);
    await expect(checkStateDbIntegrity(path.join(home, 'missing.db'))).rejects.toSatisfy(
      (error: unknown) => SessionStoreError.isInstance(error) && error.code === 'database_error',
    );
  });
});
