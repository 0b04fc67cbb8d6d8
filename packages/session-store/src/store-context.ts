import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from './clock.js';
import { runWriteAttempt } from './write-patience.js';

export interface BusyTimeouts {
  /** The longest one write attempt waits inside SQLite (it blocks the thread). */
  readonly attemptMs: number;
  /** The connection's timeout for reads (only DELETE journal mode ever waits). */
  readonly readMs: number;
}

/** What the query modules share: the writer connection, the clock and a prepared-statement cache. */
export class StoreContext {
  readonly #statements = new Map<string, Statement>();
  readonly #rawStatements = new Map<string, Statement>();

  constructor(
    readonly db: Database,
    readonly clock: Clock,
    readonly busyTimeouts: BusyTimeouts,
  ) {}

  /** One write attempt under the short attempt timeout (see `runWriteAttempt`). */
  writeAttempt<T>(attempt: () => T): T {
    return runWriteAttempt(this.db, this.busyTimeouts, attempt);
  }

  /** Prepares once per connection; better-sqlite3 re-prepares by itself after schema changes. */
  statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Like `statement`, in raw mode: rows come back as arrays (see `row-readers.ts`). */
  rawStatement(sql: string): Statement {
    let statement = this.#rawStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).raw(true);
      this.#rawStatements.set(sql, statement);
    }
    return statement;
  }
}
