import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { isBusyError, isNotADatabaseError } from './sqlite-errors.js';

/** Errors thrown by a caller's own callback (`withWriteTransaction`, `alongside`): never wrapped. */
const callerErrors = new WeakSet<object>();

/** Runs a caller-supplied callback, marking what it throws as the caller's own. */
export function runCallerCallback<T>(callback: () => T): T {
  try {
    return callback();
  } catch (error) {
    if (typeof error === 'object' && error !== null && !isSqliteError(error))
      callerErrors.add(error);
    throw error;
  }
}

function isSqliteError(error: object): boolean {
  return (
    (error as { name?: unknown }).name === 'SqliteError' ||
    String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_')
  );
}

/**
 * What leaves the store is a `SessionStoreError`: SQLite failures get a code by kind (locked,
 * corrupt, anything else `database_error`), a bad value the driver refused to bind is
 * `invalid_argument`, anything else `database_error`. The original error is the `cause`. A
 * caller's own errors (thrown by its callbacks) pass unchanged.
 */
export function normalizeStoreError(error: unknown): unknown {
  if (SessionStoreError.isInstance(error)) return error;
  if (typeof error !== 'object' || error === null || callerErrors.has(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isSqliteError(error)) {
    const code = String((error as { code?: unknown }).code ?? 'SQLITE_ERROR');
    if (isBusyError(error)) {
      return new SessionStoreError({
        code: 'database_locked',
        message: ERROR_MESSAGES.databaseError(message, code),
        cause: error,
      });
    }
    return new SessionStoreError({
      code: isNotADatabaseError(error) ? 'database_corrupt' : 'database_error',
      message: ERROR_MESSAGES.databaseError(message, code),
      cause: error,
    });
  }
  if (error instanceof TypeError || error instanceof RangeError) {
    // better-sqlite3 refuses values it cannot bind (objects, functions, symbols) this way.
    return new SessionStoreError({
      code: 'invalid_argument',
      message: `Invalid argument: ${message}`,
      cause: error,
    });
  }
  // A file-system failure (opening the store's folder, its files) or anything else unforeseen.
  return new SessionStoreError({
    code: 'database_error',
    message: `Session store failed: ${message}`,
    cause: error,
  });
}
