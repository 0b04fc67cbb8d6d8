import { getTableColumns } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { messages, sessions } from './schema.js';

/**
 * SELECT lists that alias snake_case columns to the camelCase keys of the drizzle schema, so raw
 * prepared statements (used on hot paths for speed) return the schema's inferred row types.
 */
function selectList(table: SQLiteTable, alias: string): string {
  return Object.entries(getTableColumns(table))
    .map(([key, column]) => `${alias}."${column.name}" AS "${key}"`)
    .join(', ');
}

export const SESSION_COLUMNS = selectList(sessions, 's');
export const MESSAGE_COLUMNS = selectList(messages, 'm');
