import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { ftsProblem } from './fts-health.js';
import { FtsWatermarkError, readFtsIndexState } from './fts-watermark.js';
import { FTS_STALE_KEY, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from './limits.js';
import { shapePreview } from './preview.js';
import {
  parseSearchTerms,
  rawQueryLikeTerms,
  type SearchSyntax,
  type SearchTerm,
  toFtsQuery,
} from './search-query.js';
import { isFtsIndexFailure, sqliteErrorMessage } from './sqlite-errors.js';
import type { StoreContext } from './store-context.js';
import { safeCutIndex } from './text-length.js';
import { pageSize } from './validation.js';

export function readMeta(context: StoreContext, key: string): string | null {
  return (
    (context.statement('SELECT value FROM state_meta WHERE key = ?').pluck().get(key) as
      | string
      | undefined) ?? null
  );
}

export function writeMeta(context: StoreContext, key: string, value: string | null): void {
  if (value === null) {
    context.statement('DELETE FROM state_meta WHERE key = ?').run(key);
  } else {
    context
      .statement(
        'INSERT INTO state_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }
}

/** Stale means the index is detached: search uses LIKE until a rebuild succeeds. */
export function isFtsStale(context: StoreContext): boolean {
  return readMeta(context, FTS_STALE_KEY) !== null;
}

export function dropFtsTriggers(context: StoreContext): number {
  const names = context.db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts_%'")
    .pluck()
    .all() as string[];
  for (const name of names) context.db.exec(`DROP TRIGGER IF EXISTS "${name}"`);
  return names.length;
}

/**
 * Detaches a corrupt FTS index so transcript writes keep working: records `fts_stale` and drops
 * the triggers in one transaction. Search falls back to LIKE until a rebuild clears the flag.
 */
export function enterFtsFailOpen(context: StoreContext, reason: string): void {
  context.db
    .transaction(() => {
      writeMeta(context, FTS_STALE_KEY, JSON.stringify({ since: context.clock.now(), reason }));
      dropFtsTriggers(context);
    })
    .immediate();
}

export interface SearchMessagesOptions {
  readonly limit?: number;
  /**
   * `terms` (default): the query is what a person typed — words and quoted phrases, ANDed, a
   * trailing `*` for a prefix; nothing in it is an operator, so any text searches. `fts5`: the
   * query is raw FTS5 syntax (operators, column filters, NEAR); a syntax error is
   * `invalid_search_query`.
   */
  readonly syntax?: SearchSyntax;
  readonly sessionId?: string;
  readonly source?: string;
  readonly includeHidden?: boolean;
}

export interface MessageSearchHit {
  readonly messageId: number;
  readonly sessionId: string;
  readonly role: string;
  readonly snippet: string;
  readonly timestamp: number;
  readonly session: {
    readonly id: string;
    readonly title: string | null;
    readonly source: string;
    readonly startedAt: number;
    readonly lineageRootId: string;
  };
}

export interface MessageSearchResult {
  readonly hits: MessageSearchHit[];
  /**
   * `fts` normally (rows committed but not indexed yet are searched the same way and merged in);
   * `like` while the index is stale (fail-open).
   */
  readonly mode: 'fts' | 'like';
}

const SNIPPET_OPEN = '>>>';
const SNIPPET_CLOSE = '<<<';

interface HitRow {
  messageId: number;
  sessionId: string;
  role: string;
  snippet: string;
  timestamp: number;
  title: string | null;
  source: string;
  startedAt: number;
  lineageRootId: string;
}

function filters(options: SearchMessagesOptions): {
  sql: string;
  parameters: Record<string, unknown>;
} {
  const parts = [
    'm.active = 1',
    "(m.display_kind IS NULL OR m.display_kind != 'hidden')",
    'm._compressed_summary = 0',
  ];
  const parameters: Record<string, unknown> = {};
  if (!options.includeHidden) parts.push('s.hidden = 0');
  if (options.sessionId) {
    parts.push('m.session_id = @sessionId');
    parameters.sessionId = options.sessionId;
  }
  if (options.source) {
    parts.push('s.source = @source');
    parameters.source = options.source;
  }
  return { sql: parts.join(' AND '), parameters };
}

function toHit(row: HitRow): MessageSearchHit {
  return {
    messageId: row.messageId,
    sessionId: row.sessionId,
    role: row.role,
    snippet: row.snippet,
    timestamp: row.timestamp,
    session: {
      id: row.sessionId,
      title: row.title,
      source: row.source,
      startedAt: row.startedAt,
      lineageRootId: row.lineageRootId,
    },
  };
}

/**
 * FTS5 search, newest matches first (rowid order is native to FTS5, so a common term stays
 * fast over millions of rows). A malformed user query is a clear `invalid_search_query` error.
 * A corrupt index puts the store into fail-open and the same call answers with LIKE.
 *
 * Rows above the index's watermark (committed, not indexed yet: see `fts-indexer.ts`) are searched
 * with the same MATCH (`searchPending`) and come first, as they are the newest. The watermark is
 * read once and bounds both halves, so a catch-up by another process in between can neither drop
 * a row nor return it twice.
 */
export function searchMessages(
  context: StoreContext,
  query: string,
  options: SearchMessagesOptions = {},
): MessageSearchResult {
  const limit = pageSize('limit', options.limit, {
    default: SEARCH_DEFAULT_LIMIT,
    max: SEARCH_MAX_LIMIT,
  });
  if (options.syntax !== undefined && options.syntax !== 'terms' && options.syntax !== 'fts5') {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('syntax', "'terms' or 'fts5'"),
    });
  }
  if (typeof query !== 'string') {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('query', 'a string'),
    });
  }
  const raw = options.syntax === 'fts5';
  const terms = raw ? rawQueryLikeTerms(query) : parseSearchTerms(query);
  const match = raw ? query.trim() : toFtsQuery(terms);
  if (!match) return { hits: [], mode: 'fts' };
  const state = readFtsIndexState(context);
  if (!state.stale) {
    const { sql, parameters } = filters(options);
    try {
      const through = state.through;
      if (through === null) throw new FtsWatermarkError('missing');
      const rows = context
        .statement(
          `SELECT m.id AS messageId, m.session_id AS sessionId, m.role AS role, m.timestamp AS timestamp,
             snippet(messages_fts, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '...', 12) AS snippet,
             s.title AS title, s.source AS source, s.started_at AS startedAt, s.lineage_root_id AS lineageRootId
           FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
           WHERE messages_fts MATCH @query AND messages_fts.rowid <= @through AND ${sql}
           ORDER BY messages_fts.rowid DESC LIMIT @limit`,
        )
        .all({ ...parameters, query: match, through, limit }) as HitRow[];
      const indexed = rows.map(toHit);
      if (state.newest <= through) return { hits: indexed, mode: 'fts' };
      const pending = searchPending(context, { match, terms, options, limit, through });
      return { hits: [...pending, ...indexed].slice(0, limit), mode: 'fts' };
    } catch (error) {
      // Is the index broken, or the query? A failure that names the index is the index's; for
      // anything else a cheap health probe decides. A broken index is detached (fail open) and
      // this call answers with LIKE; a healthy index means the query itself was at fault.
      const problem = isFtsIndexFailure(error)
        ? sqliteErrorMessage(error)
        : ftsProblem(context, { expectTriggers: false });
      if (problem === null) {
        if ((error as { code?: string }).code === 'SQLITE_ERROR') {
          throw new SessionStoreError({
            code: 'invalid_search_query',
            message: ERROR_MESSAGES.invalidSearchQuery(query, sqliteErrorMessage(error)),
            cause: error,
          });
        }
        throw error;
      }
      try {
        context.writeAttempt(() => enterFtsFailOpen(context, problem));
      } catch {
        // Another process holds the write lock: the LIKE answer below still serves this call,
        // and the next write that meets the broken index detaches it.
      }
    }
  }
  return { hits: likeSearch(context, terms, options, limit), mode: 'like' };
}

/**
 * The rows above the watermark, searched the way the index would search them: they are copied
 * into a small fts5 table in this connection's TEMP schema and the same MATCH runs there. Writing
 * TEMP takes no lock on the database file, so this works while another process holds the write
 * lock. Its tokenizer must stay the one `messages_fts` uses (0001_fts.sql: the default). If the
 * temporary table cannot be used, the rows are matched with LIKE, as in fail-open.
 */
function searchPending(
  context: StoreContext,
  search: {
    match: string;
    terms: readonly SearchTerm[];
    options: SearchMessagesOptions;
    limit: number;
    through: number;
  },
): MessageSearchHit[] {
  const { sql, parameters } = filters(search.options);
  try {
    context.db.exec(
      'CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_fts_pending USING fts5(content)',
    );
    context.statement('DELETE FROM temp.messages_fts_pending').run();
    context
      .statement(
        'INSERT INTO temp.messages_fts_pending(rowid, content) SELECT id, content FROM main.messages_fts_src WHERE id > ?',
      )
      .run(search.through);
    const rows = context
      .statement(
        `SELECT m.id AS messageId, m.session_id AS sessionId, m.role AS role, m.timestamp AS timestamp,
           snippet(messages_fts_pending, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '...', 12) AS snippet,
           s.title AS title, s.source AS source, s.started_at AS startedAt, s.lineage_root_id AS lineageRootId
         FROM temp.messages_fts_pending JOIN messages m ON m.id = messages_fts_pending.rowid
           JOIN sessions s ON s.id = m.session_id
         WHERE messages_fts_pending MATCH @query AND ${sql}
         ORDER BY messages_fts_pending.rowid DESC LIMIT @limit`,
      )
      .all({ ...parameters, query: search.match, limit: search.limit }) as HitRow[];
    context.statement('DELETE FROM temp.messages_fts_pending').run();
    return rows.map(toHit);
  } catch {
    return likeSearch(context, search.terms, search.options, search.limit, search.through);
  }
}

/** LIKE over every message, or only over those above `afterId` (the rows not indexed yet). */
function likeSearch(
  context: StoreContext,
  terms: readonly SearchTerm[],
  options: SearchMessagesOptions,
  limit: number,
  afterId?: number,
): MessageSearchHit[] {
  if (terms.length === 0) return [];
  const filtered = filters(options);
  const sql = afterId === undefined ? filtered.sql : `m.id > @afterId AND ${filtered.sql}`;
  const parameters =
    afterId === undefined ? filtered.parameters : { ...filtered.parameters, afterId };
  // Every term must appear (the same AND as the FTS query), as a case-insensitive substring.
  const likes: Record<string, string> = {};
  const conditions = terms.map((term, index) => {
    likes[`like${index}`] = `%${term.text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
    return `m.content LIKE @like${index} ESCAPE '\\'`;
  });
  const rows = context.db
    .prepare(
      `SELECT m.id AS messageId, m.session_id AS sessionId, m.role AS role, m.timestamp AS timestamp,
         m.content AS snippet, s.title AS title, s.source AS source, s.started_at AS startedAt,
         s.lineage_root_id AS lineageRootId
       FROM messages m JOIN sessions s ON s.id = m.session_id
       WHERE ${conditions.join(' AND ')} AND ${sql}
       ORDER BY m.id DESC LIMIT @limit`,
    )
    .all({ ...parameters, ...likes, limit }) as HitRow[];
  return rows.map((row) => toHit({ ...row, snippet: likeSnippet(row.snippet ?? '', terms) }));
}

/** About 40 characters either side of the first term, every term in it marked like FTS5 does. */
function likeSnippet(content: string, terms: readonly SearchTerm[]): string {
  const first = terms[0]?.text ?? '';
  const at = content.toLowerCase().indexOf(first.toLowerCase());
  if (at < 0) return shapePreview(content);
  // Never cut a surrogate pair in half (an emoji at the edge of the window).
  const start = safeCutIndex(content, Math.max(0, at - 40));
  const end = safeCutIndex(content, Math.min(content.length, at + first.length + 40));
  const pattern = new RegExp(
    terms.map((term) => term.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'giu',
  );
  const marked = content
    .slice(start, end)
    .replace(pattern, (found) => `${SNIPPET_OPEN}${found}${SNIPPET_CLOSE}`);
  return `${start > 0 ? '...' : ''}${marked}${end < content.length ? '...' : ''}`;
}
