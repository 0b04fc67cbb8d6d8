import { getTableColumns } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { MESSAGE_FIELDS, SESSION_FIELDS } from './row-readers.js';
import { MESSAGE_COLUMNS, SESSION_COLUMNS } from './rows.js';
import { messages, sessions } from './schema.js';

describe('row readers', () => {
  it('list every schema column once', () => {
    expect([...SESSION_FIELDS].sort()).toEqual(Object.keys(getTableColumns(sessions)).sort());
    expect([...MESSAGE_FIELDS].sort()).toEqual(Object.keys(getTableColumns(messages)).sort());
  });

  it('read a row with every column set exactly as SQLite’s own named columns do', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.appendMessage('p', { role: 'user', content: 'x' });
    // Every column gets a distinct non-null value, so a value read into the wrong field shows.
    const expected = await store.withWriteTransaction((database) => {
      const columns = Object.values(getTableColumns(sessions)).map((column) => column.name);
      const values = columns.map((name, index) =>
        name === 'id' ? 'full' : name === 'lineage_root_id' ? 'full' : index * 3 + 0.5,
      );
      database
        .prepare(
          `INSERT INTO sessions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        )
        .run(...values.map((value, index) => (columns[index] === 'title' ? 'T' : value)));
      const messageColumns = Object.values(getTableColumns(messages))
        .map((column) => column.name)
        .filter((name) => name !== 'id');
      database
        .prepare(
          `INSERT INTO messages (${messageColumns.join(', ')}) VALUES (${messageColumns
            .map((name, index) => (name === 'session_id' ? "'full'" : String(index * 7 + 1)))
            .join(', ')})`,
        )
        .run();
      return {
        session: database
          .prepare(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = 'full'`)
          .get(),
        message: database
          .prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = 'full'`)
          .get(),
      };
    });
    const session = store.getSession('full');
    expect(session).toEqual(expected.session);
    expect(Object.keys(session ?? {})).toEqual([...SESSION_FIELDS]);
    expect(store.getMessages('full', { includeInactive: true })[0]).toEqual(expected.message);
  });
});
