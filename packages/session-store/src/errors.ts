const MARKER = Symbol.for('@hermes/session-store.error');

export type SessionStoreErrorCode =
  | 'database_corrupt'
  | 'database_locked'
  | 'migration_failed'
  | 'store_closed'
  | 'session_not_found'
  | 'session_exists'
  | 'session_busy'
  | 'title_too_long'
  | 'title_in_use'
  | 'canonical_title_locked'
  | 'compression_lease_lost'
  | 'compression_parent_missing'
  | 'compression_parent_ended'
  | 'compression_handoff_missing'
  | 'invalid_search_query'
  | 'invalid_cursor'
  | 'fts_rebuild_failed'
  | 'invalid_argument'
  | 'database_error'
  | 'database_replaced'
  | 'wal_generation_deleted'
  | BotRelayErrorCode;

/** The codes of the bot relay (`openBotRelay`), a subset of `SessionStoreErrorCode`. */
export type BotRelayErrorCode =
  | 'invalid_envelope_id'
  | 'invalid_roster'
  | 'unknown_envelope'
  | 'envelope_expired'
  | 'not_hosted'
  | 'already_replied'
  | 'storage_failed';

/** The bot relay step a `storage_failed` error comes from (`prepare`: creating its folders). */
export type BotRelayOperation =
  | 'prepare'
  | 'roster'
  | 'queue'
  | 'drain'
  | 'read'
  | 'requeue'
  | 'reply';

export interface SessionStoreErrorOptions {
  code: SessionStoreErrorCode;
  message: string;
  cause?: unknown;
  /** For the bot relay's `storage_failed`: the step that failed. */
  operation?: BotRelayOperation;
}

/**
 * The one base error of `@hermes/session-store`. `code` is stable and meant for programs; the
 * message is for people and names the file, session or title involved.
 */
export class SessionStoreError extends Error {
  readonly code: SessionStoreErrorCode;
  /** For the bot relay's `storage_failed`: the step that failed (`prepare` = its folders). */
  readonly operation: BotRelayOperation | undefined;
  readonly [MARKER] = true;

  constructor(options: SessionStoreErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.operation = options.operation;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is SessionStoreError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** Exact user-facing texts, kept here so callers and tests import one copy. */
export const ERROR_MESSAGES = {
  notSqlite: (path: string, detail: string) =>
    `${path} is not a readable SQLite database (${detail}). It was left untouched; move it aside to let Hermes create a new store.`,
  databaseLocked: (seconds: number) =>
    `database is locked (another Hermes process held the state.db write lock for over ${seconds} s; try again once it finishes)`,
  titleTooLong: (length: number, max: number) => `Title too long (${length} chars, max ${max})`,
  titleInUse: (title: string, holderId: string) =>
    `Title '${title}' is already in use by session ${holderId}`,
  canonicalRename:
    "This is the bot's canonical Bot Chat — its name is its identity, and renaming it would orphan the conversation. To start fresh, create a new bot instead.",
  compressionParentEnded: 'Compression parent already ended',
  compressionLeaseLost: 'Compression lease lost before publication',
  compressionParentMissing: (id: string) => `Compression parent not found: ${id}`,
  compressionHandoffMissing: 'Compression needs a non-empty handoff summary',
  sessionNotFound: (id: string) => `Session not found: ${id}`,
  sessionExists: (id: string) => `Session already exists: ${id}`,
  sessionBusy: (id: string, pid: string | null) =>
    `Session ${id} is running a turn${pid === null ? '' : ` (process ${pid})`}; nothing was deleted`,
  invalidSearchQuery: (query: string, detail: string) =>
    `Invalid search query ${JSON.stringify(query)}: ${detail}`,
  ftsRebuildSkipped: (holders: string) =>
    `Skipping Session DB FTS rebuild while foreign processes hold the database or WAL sidecars (${holders}); canonical transcript writes remain available.`,
  delegationOwnerExited:
    'Delegation owner exited before recording a terminal result; outcome unknown.',
  storeClosed: 'The session store is closed',
  invalidCursor: 'Invalid listing cursor; start again without a cursor',
  invalidArgument: (name: string, expected: string) => `Invalid ${name}: expected ${expected}`,
  databaseError: (detail: string, code: string) => `SQLite failed: ${detail} (${code})`,
  databaseReplaced: (path: string) =>
    `${path} was replaced or removed while this store had it open; nothing was written (it would have gone to the old file, invisible to every new opener). Close and reopen the store.`,
  botRelayInvalidEnvelopeId: (id: string) =>
    `bot relay: invalid envelope id ${JSON.stringify(id)} (32 hex characters)`,
  botRelayInvalidRoster: 'bot relay: every roster entry needs a profile',
  botRelayNotHosted: (profile: string) =>
    `bot relay: no front end hosts the bot of profile ${profile} right now`,
  botRelayUnknownEnvelope: (id: string) => `bot relay: no claimed envelope ${id}`,
  botRelayAlreadyReplied: (id: string) => `bot relay: envelope ${id} already has a reply`,
  botRelayStorageFailed: (what: string, detail: string) => `bot relay: cannot ${what} (${detail})`,
  walGenerationDeleted: (path: string) =>
    `${path}-wal was deleted while this store had the database open; nothing was written (it would have gone to an orphaned WAL). Close and reopen the store.`,
} as const;
