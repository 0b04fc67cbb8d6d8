import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from './clock.js';

/** What the query modules share: the writer connection, the clock and a prepared-statement cache. */
export class StoreContext {
  readonly #statements = new Map<string, Statement>();

  constructor(
    readonly db: Database,
    readonly clock: Clock,
  ) {}

  /** Prepares once per connection; better-sqlite3 re-prepares by itself after schema changes. */
  statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
