import { readFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/** The frames of a WAL's current generation: the page number each one holds, in order. */
export interface WalGeneration {
  readonly salt: string;
  readonly pages: readonly number[];
}

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/**
 * Reads `<database>-wal` as SQLite's WAL format lays it out: a 32-byte header (page size at
 * offset 8, salts at 16 and 20), then frames of a 24-byte header (page number, commit size, the
 * salts) and one page. A frame belongs to the current generation while its salts match the
 * header's; a checkpoint restart rewrites from the start with new salts, so older frames beyond
 * the current end no longer match.
 */
export function readWalGeneration(databasePath: string): WalGeneration {
  let bytes: Buffer;
  try {
    bytes = readFileSync(`${databasePath}-wal`);
  } catch {
    return { salt: '', pages: [] };
  }
  if (bytes.length < WAL_HEADER_BYTES) return { salt: '', pages: [] };
  const pageSize = bytes.readUInt32BE(8);
  const salt = bytes.subarray(16, 24).toString('hex');
  const pages: number[] = [];
  for (
    let offset = WAL_HEADER_BYTES;
    offset + FRAME_HEADER_BYTES + pageSize <= bytes.length;
    offset += FRAME_HEADER_BYTES + pageSize
  ) {
    if (bytes.subarray(offset + 8, offset + 16).toString('hex') !== salt) break;
    pages.push(bytes.readUInt32BE(offset));
  }
  return { salt, pages };
}

/** The pages written to the WAL between two readings (a restart in between starts a new generation). */
export function pagesWrittenSince(before: WalGeneration, after: WalGeneration): number[] {
  if (after.salt === before.salt && after.pages.length >= before.pages.length)
    return after.pages.slice(before.pages.length);
  return [...after.pages];
}

/** Measures the WAL frames `work` appends to the database's WAL. */
export async function walFramesOf(databasePath: string, work: () => Promise<unknown>) {
  const before = readWalGeneration(databasePath);
  await work();
  return pagesWrittenSince(before, readWalGeneration(databasePath));
}

/** Names the b-tree (table or index) each page belongs to, through SQLite's `dbstat`. */
export function nameBtrees(databasePath: string, pages: readonly number[]): string[] {
  const database = new BetterSqlite3(databasePath, { readonly: true });
  try {
    const owner = new Map(
      (
        database.prepare('SELECT pageno, name FROM dbstat').all() as {
          pageno: number;
          name: string;
        }[]
      ).map((row) => [row.pageno, row.name]),
    );
    return pages.map((page) => owner.get(page) ?? `page ${page}`);
  } finally {
    database.close();
  }
}
