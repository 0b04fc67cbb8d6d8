import BetterSqlite3 from 'better-sqlite3';

/** Corrupts the FTS index through a raw connection (defensive mode off). */
export function corruptFtsIndex(databasePath: string): void {
  const raw = new BetterSqlite3(databasePath);
  try {
    raw.unsafeMode(true);
    // A deterministic wreck of the structure record (id 10): every later FTS read or write reports
    // SQLITE_CORRUPT_VTAB "corrupt structure record".
    raw.exec(
      "UPDATE messages_fts_data SET block = unhex(replace(hex(zeroblob(length(block))), '00', '0F')) WHERE id = 10",
    );
  } finally {
    raw.close();
  }
}

export function ftsTriggerCount(databasePath: string): number {
  const raw = new BetterSqlite3(databasePath, { readonly: true });
  try {
    return raw
      .prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts_%'",
      )
      .pluck()
      .get() as number;
  } finally {
    raw.close();
  }
}

/** Breaks the FTS index through a raw connection in ways other than corruption. */
export function breakFtsIndex(
  databasePath: string,
  how: 'missing table' | 'invalid file format' | 'missing content view',
): void {
  const raw = new BetterSqlite3(databasePath);
  try {
    raw.unsafeMode(true);
    if (how === 'missing table') raw.exec('DROP TABLE messages_fts');
    if (how === 'invalid file format')
      raw.exec("UPDATE messages_fts_config SET v = 99 WHERE k = 'version'");
    if (how === 'missing content view') raw.exec('DROP VIEW messages_fts_src');
  } finally {
    raw.close();
  }
}
