/** Constants shared with other packages (agent, gateway, tui-bridge). */

/** Applied migrations; must equal the number of entries in `drizzle/meta/_journal.json`. */
export const SCHEMA_VERSION = 10;

/** The canonical Bot Mode chat: its exact title is its identity. */
export const BOT_CHAT_TITLE = 'Bot Chat';
export const MAX_TITLE_LENGTH = 100;

/** Title provenance ranks: an automatic writer may not overwrite a higher-ranked title. */
export const TITLE_SOURCE_RANK = {
  derived: 0,
  llm: 1,
  user: 2,
  branch: 1,
  branch_fallback: 0,
} as const;
export type TitleSource = keyof typeof TITLE_SOURCE_RANK;

/** Upper bound on compression-chain walks. */
export const CHAIN_CAP = 1000;

export const LIST_SESSIONS_DEFAULT_LIMIT = 50;
export const LIST_SESSIONS_MAX_LIMIT = 200;
export const MESSAGES_MAX_LIMIT = 500;
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 200;

/** Sources kept out of user listings unless asked for by name. */
export const INTERNAL_LISTING_SOURCES = ['kanban', 'tool', 'oneshot'] as const;

/** Preview: 63 characters taken, shaped to 60 + "..." when longer. */
export const PREVIEW_TAKE = 63;
export const PREVIEW_MAX = 60;
export const CANONICAL_PREVIEW_MAX = 80;

/** FTS rows for tool output are truncated to this many characters (see drizzle/0001_fts.sql). */
export const FTS_TOOL_ROW_MAX_CHARS = 8192;

export const FTS_STALE_KEY = 'fts_stale';
/**
 * The FTS watermark (drizzle/0008_fts_indexed_through.sql): every message with an id at or below
 * it is in the index, none above it. Rows above it are pending until a catch-up indexes them.
 */
export const FTS_INDEXED_THROUGH_KEY = 'fts_indexed_through';
/**
 * A commit that leaves rows pending schedules one catch-up this long after it; later commits do
 * not push it back, so under a steady stream of writes the index still lags by at most about this.
 * One catch-up costs about one FTS commit (~0.1–0.2 ms) plus ~1.5 µs a row.
 */
export const FTS_CATCH_UP_DELAY_MS = 250;
/** With this many rows pending, a write catches up before it returns (timers may be starved). */
export const FTS_INLINE_CATCH_UP_ROWS = 256;
/**
 * One catch-up transaction indexes at most this many rows and this many characters (at least one
 * row): fts5 tokenizes about 60 MB/s here, so a batch holds the write lock for a few milliseconds.
 */
export const FTS_CATCH_UP_BATCH_ROWS = 256;
export const FTS_CATCH_UP_BATCH_CHARS = 262_144;
/**
 * At open (after a crash) and at close, at most this many batches are indexed; what is left stays
 * pending for the timer, the next writer or the next open (search finds it either way).
 */
export const FTS_OPEN_CATCH_UP_BATCHES = 16;
export const FTS_REBUILD_DEFERRAL_KEY = 'fts_rebuild_deferral';
export const SCHEMA_VERSION_KEY = 'schema_version';

/** Minimum spacing of deferred FTS recovery attempts. */
export const FTS_RETRY_COOLDOWN_MS = 300_000;
export const FTS_REBUILD_LOCK_TIMEOUT_MS = 120_000;
export const FTS_REBUILD_LOCK_POLL_MS = 100;
/** An unreadable lock file older than this is an orphan of a crashed writer. */
export const FTS_REBUILD_LOCK_ORPHAN_MS = 5_000;

/**
 * How long one write attempt may wait inside SQLite for another process's write lock: not at
 * all. SQLite's busy wait sleeps on the calling thread (better-sqlite3 is synchronous), and on a
 * loaded machine even a 10 ms budget stretched to 40+ ms of frozen event loop; the write-patience
 * loop does all the waiting on awaited timers instead.
 */
export const WRITE_ATTEMPT_BUSY_TIMEOUT_MS = 0;
/**
 * Busy timeout for reads. In WAL mode readers never wait for writers; in DELETE journal mode a
 * read may wait this long for a committing writer.
 */
export const READ_BUSY_TIMEOUT_MS = 1_000;
export const WRITE_PATIENCE_SECONDS = 20;
export const TRANSCRIPT_WRITE_PATIENCE_SECONDS = 60;
export const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
export const CHECKPOINT_EVERY_WRITES = 50;
/**
 * SQLite's own checkpoint inside a commit (`wal_autocheckpoint`, in WAL pages; its default is
 * 1000). The periodic checkpoint runs on a worker thread, and while writes keep coming the WAL
 * can only restart from its start through a checkpoint on the writer's thread, between two
 * writes; this threshold is that fallback. At 4000 pages (16 MB with 4 KB pages) a stream of
 * single-message appends (11 pages each) pays it once per ~360 writes instead of once per ~90.
 * It bounds the WAL's size, not durability: the worker's checkpoints sync the WAL every 50
 * writes, as before.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4000;
export const CHECKPOINT_INTERVAL_MS = 60_000;

/** Delivery obligations. */
export const OBLIGATION_MAX_ATTEMPTS = 3;
export const OBLIGATION_STALE_SECONDS = 24 * 3600;
export const OBLIGATION_RETENTION_SECONDS = 7 * 24 * 3600;
export const OBLIGATION_RETENTION_ROWS = 500;
export const OBLIGATION_RETRY_BACKOFF_SECONDS = [30, 120] as const;

/** Async delegations. */
export const DELEGATION_CLAIM_LEASE_SECONDS = 300;
export const DELEGATION_MAX_DELIVERY_ATTEMPTS = 8;
export const DELEGATION_RESTORE_MAX_AGE_SECONDS = 48 * 3600;
export const DELEGATION_RETENTION_SECONDS = 7 * 24 * 3600;
export const DELEGATION_RETENTION_ROWS = 50;

/** Stored `/v1/responses` kept per state.db (one per profile), the least recently used dropped. */
export const MAX_STORED_RESPONSES = 100;
