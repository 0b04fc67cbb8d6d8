import { statSync } from 'node:fs';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';

interface Identity {
  readonly dev: number;
  readonly ino: number;
}

function identityOf(filePath: string): Identity | null {
  const stats = statSync(filePath, { throwIfNoEntry: false });
  return stats ? { dev: stats.dev, ino: stats.ino } : null;
}

function same(left: Identity | null, right: Identity | null): boolean {
  return left !== null && right !== null && left.dev === right.dev && left.ino === right.ino;
}

/**
 * The device and inode of the database (and, in WAL mode, of its `-wal`) as opened. SQLite keeps
 * writing through its open descriptors after the path is unlinked or replaced, so such writes
 * would succeed and be invisible to every new opener; checking the path before each write turns
 * that into a loud error. (While any connection is open SQLite never removes the WAL itself.)
 */
export class DatabaseFileIdentity {
  readonly #filePath: string;
  readonly #database: Identity | null;
  readonly #wal: Identity | null;

  constructor(filePath: string, options: { wal: boolean }) {
    this.#filePath = filePath;
    this.#database = identityOf(filePath);
    this.#wal = options.wal ? identityOf(`${filePath}-wal`) : null;
  }

  /** Throws `database_replaced` / `wal_generation_deleted` when the files are no longer the ones opened. */
  assertUnchanged(): void {
    if (!same(this.#database, identityOf(this.#filePath))) {
      throw new SessionStoreError({
        code: 'database_replaced',
        message: ERROR_MESSAGES.databaseReplaced(this.#filePath),
      });
    }
    if (this.#wal !== null && !same(this.#wal, identityOf(`${this.#filePath}-wal`))) {
      throw new SessionStoreError({
        code: 'wal_generation_deleted',
        message: ERROR_MESSAGES.walGenerationDeleted(this.#filePath),
      });
    }
  }
}
