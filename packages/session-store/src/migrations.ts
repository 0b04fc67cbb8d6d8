import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from 'better-sqlite3';
import { SessionStoreError } from './errors.js';
import { SCHEMA_VERSION_KEY } from './limits.js';

/**
 * The generated migrations ship in `drizzle/` beside `src/` and `dist/`, so one relative URL
 * resolves from sources (tests) and from the published bundle.
 */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle/', import.meta.url));

export interface Migration {
  readonly tag: string;
  readonly statements: readonly string[];
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

let cached: Migration[] | undefined;

export function splitStatements(sqlText: string): string[] {
  return sqlText
    .split('--> statement-breakpoint')
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

export function loadMigrations(folder = MIGRATIONS_FOLDER): Migration[] {
  if (folder === MIGRATIONS_FOLDER && cached) return cached;
  const journal = JSON.parse(readFileSync(`${folder}meta/_journal.json`, 'utf8')) as Journal;
  const migrations = [...journal.entries]
    .sort((left, right) => left.idx - right.idx)
    .map((entry) => ({
      tag: entry.tag,
      statements: splitStatements(readFileSync(`${folder}${entry.tag}.sql`, 'utf8')),
    }));
  if (folder === MIGRATIONS_FOLDER) cached = migrations;
  return migrations;
}

/** An FTS migration's tag: `0001_fts`, `0008_fts_indexed_through`. */
const FTS_MIGRATION_TAG = /^\d+_fts(_|$)/;

/**
 * The FTS migrations' statements, in order: the single definition the rebuild re-runs, so a
 * rebuilt index (its objects and its watermark) is exactly what a fresh migrate creates.
 */
export function ftsMigrationStatements(): readonly string[] {
  const migrations = loadMigrations().filter((entry) => FTS_MIGRATION_TAG.test(entry.tag));
  if (migrations.length === 0) throw new Error('FTS migration missing from drizzle/');
  return migrations.flatMap((migration) => migration.statements);
}

/**
 * Applies pending migrations inside one BEGIN IMMEDIATE transaction. The version (SQLite's
 * `user_version`) is read after the write lock is taken, so two processes opening a new file at
 * once cannot both apply a step: the second sees the first one's version and does nothing.
 * drizzle's own migrator assumes a single migrator, hence this small runner.
 */
export function applyMigrations(database: Database): { from: number; to: number } {
  const migrations = loadMigrations();
  const run = database.transaction(() => {
    const from = Number(database.pragma('user_version', { simple: true }));
    for (let index = from; index < migrations.length; index += 1) {
      const migration = migrations[index];
      if (!migration) break;
      for (const statement of migration.statements) {
        try {
          database.exec(statement);
        } catch (error) {
          throw new SessionStoreError({
            code: 'migration_failed',
            message: `Migration ${migration.tag} failed: ${(error as Error).message}`,
            cause: error,
          });
        }
      }
    }
    const to = Math.max(from, migrations.length);
    if (to !== from) database.pragma(`user_version = ${to}`);
    database
      .prepare(
        'INSERT INTO state_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(SCHEMA_VERSION_KEY, String(to));
    return { from, to };
  });
  return run.immediate();
}
