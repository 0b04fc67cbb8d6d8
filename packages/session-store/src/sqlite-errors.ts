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

/**
 * A failure that names the FTS index: FTS-scoped corruption (`SQLITE_CORRUPT_VTAB`, or a corrupt
 * code with an fts5 message), a missing FTS table or view ("no such table: main.messages_fts"),
 * an fts5 "invalid file format", or any error whose message names `messages_fts`. Classified
 * broadly on purpose: failing open on a broken index costs search quality until a rebuild,
 * while failing a transcript write loses data.
 */
export function isFtsIndexFailure(error: unknown): boolean {
  const code = codeOf(error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return false;
  if (code === 'SQLITE_CORRUPT_VTAB') return true;
  const message = messageOf(error);
  if (/messages_fts/.test(message)) return true;
  if (/invalid fts5 file format|fts5: corrupt|vtable constructor failed/i.test(message))
    return true;
  return code.startsWith('SQLITE_CORRUPT') && /fts5/i.test(message);
}

export function isNotADatabaseError(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}

export { messageOf as sqliteErrorMessage };
