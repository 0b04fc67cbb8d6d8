/** Classification of better-sqlite3 `SqliteError`s by their `code` and message. */

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : '';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function isBusyError(error: unknown): boolean {
  const code = codeOf(error);
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** Corruption scoped to the FTS index (fail-open territory), as opposed to structural damage. */
export function isFtsCorruption(error: unknown): boolean {
  const code = codeOf(error);
  if (code === 'SQLITE_CORRUPT_VTAB') return true;
  const message = messageOf(error);
  return code.startsWith('SQLITE_CORRUPT') && /fts5|messages_fts/.test(message);
}

export function isNotADatabaseError(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}

export { messageOf as sqliteErrorMessage };
