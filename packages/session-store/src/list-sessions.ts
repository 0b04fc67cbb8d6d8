import * as v from 'valibot';
import { toSqlList } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import {
  INTERNAL_LISTING_SOURCES,
  LIST_SESSIONS_DEFAULT_LIMIT,
  LIST_SESSIONS_MAX_LIMIT,
} from './limits.js';
import { getCompressionChain } from './lineage.js';
import { sessionPreview } from './preview.js';
import type { SessionRecord } from './records.js';
import { SESSION_COLUMNS } from './rows.js';
import type { StoreContext } from './store-context.js';
import { nonNegativeInteger, optionalInteger, pageSize } from './validation.js';

export interface ListSessionsOptions {
  /** Page size: default 50, clamped to 1…200. */
  readonly limit?: number;
  readonly offset?: number;
  /** Opaque keyset cursor from a previous page's `nextCursor` (ignores `offset`). */
  readonly cursor?: string | null;
  readonly includeHidden?: boolean;
  readonly includeArchived?: boolean;
  /** Only archived rows — hidden ones included, so an archived hidden chat can be found again. */
  readonly archivedOnly?: boolean;
  /** Substring of a title or id anywhere in the lineage, searched in SQL over every row. */
  readonly searchQuery?: string | null;
  readonly source?: string | null;
  /** Only these sources (internal ones included when named). */
  readonly sources?: readonly string[] | null;
  /** Never these sources. */
  readonly excludeSources?: readonly string[] | null;
  /** Only conversations whose working directory is this path or under it (path-aware). */
  readonly cwdPrefix?: string | null;
  /** Only conversations with at least this many messages (summed over the lineage). */
  readonly minMessageCount?: number | null;
  /** Substring of an id anywhere in the lineage. */
  readonly idQuery?: string | null;
  /** Only the messaging peer with this session key. */
  readonly sessionKey?: string | null;
  /** Count every row the filters match (before paging, pinned back-fill excluded) into `total`. */
  readonly includeTotal?: boolean;
  /** Compression children too (normally projected onto their root). */
  readonly includeChildren?: boolean;
  /** Add pinned rows missing from the page (default true). */
  readonly includePinned?: boolean;
  /** Show each compressed lineage with its tip's fields (default true). */
  readonly projectCompressionTips?: boolean;
}

export interface SessionListItem extends SessionRecord {
  readonly lastActive: number;
  readonly preview: string | null;
  readonly unread: boolean;
  readonly lineageIds: readonly string[];
  /** True for pinned rows added back after paging. */
  readonly pinnedBackfill: boolean;
}

export interface SessionListPage {
  readonly sessions: SessionListItem[];
  /** With `includeTotal`: how many rows the filters match in all; otherwise null. */
  readonly total: number | null;
  readonly hasMore: boolean;
  readonly nextCursor: string | null;
}

const INTERNAL_SOURCES_SQL = toSqlList(INTERNAL_LISTING_SOURCES);
// Set on insert and raised by every append, so the plain column (and its index) orders the list.
const ORDER_KEY = 's.lineage_active_at';

function encodeCursor(activeAt: number, id: string): string {
  return Buffer.from(JSON.stringify([activeAt, id])).toString('base64url');
}

// Cursors travel through clients (HTTP query strings, RPC params): validated on the way back in.
const CursorSchema = v.tuple([v.number(), v.string()]);

function decodeCursor(cursor: string): [number, string] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const parsed = v.safeParse(CursorSchema, value);
  if (!parsed.success) {
    throw new SessionStoreError({ code: 'invalid_cursor', message: ERROR_MESSAGES.invalidCursor });
  }
  return parsed.output;
}

function stringList(name: string, value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument(name, 'a list of strings'),
    });
  }
  return value;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * Lists conversations newest-activity first. Filters run in SQL over indexed columns; the page is
 * then projected (compression tips, previews, unread) row by row, which costs at most `limit`
 * small indexed lookups.
 */
export function listSessionsRich(
  context: StoreContext,
  options: ListSessionsOptions = {},
): SessionListPage {
  const limit = pageSize('limit', options.limit, {
    default: LIST_SESSIONS_DEFAULT_LIMIT,
    max: LIST_SESSIONS_MAX_LIMIT,
  });
  const requestedOffset = nonNegativeInteger('offset', options.offset, 0);
  const where: string[] = [];
  const parameters: Record<string, unknown> = {};
  if (!options.includeChildren) {
    where.push(
      `s.lineage_root_id = s.id AND coalesce(s.parent_edge, '') NOT IN ('delegate', 'tool')`,
    );
  }
  if (options.archivedOnly) where.push('s.archived = 1');
  else if (!options.includeArchived) where.push('s.archived = 0');
  if (!options.includeHidden && !options.archivedOnly) where.push('s.hidden = 0');
  const sources = stringList('sources', options.sources);
  const excluded = stringList('excludeSources', options.excludeSources);
  if (options.source || sources) {
    const wanted = [...(options.source ? [options.source] : []), ...(sources ?? [])];
    where.push('s.source IN (SELECT value FROM json_each(@sources))');
    parameters.sources = JSON.stringify(wanted);
  } else {
    where.push(`s.source NOT IN (${INTERNAL_SOURCES_SQL})`);
  }
  if (excluded) {
    where.push('s.source NOT IN (SELECT value FROM json_each(@excludeSources))');
    parameters.excludeSources = JSON.stringify(excluded);
  }
  if (options.sessionKey) {
    where.push('s.session_key = @sessionKey');
    parameters.sessionKey = options.sessionKey;
  }
  const cwd = options.cwdPrefix?.trim();
  if (cwd) {
    // Path-aware: `/work/app` matches `/work/app` and `/work/app/src`, never `/work/apple`.
    const directory = cwd.replace(/\/+$/, '');
    parameters.cwd = directory;
    parameters.cwdLike = `${escapeLike(directory)}/%`;
    where.push(`EXISTS (SELECT 1 FROM sessions c WHERE c.lineage_root_id = s.lineage_root_id
      AND (c.cwd = @cwd OR c.cwd LIKE @cwdLike ESCAPE '\\'))`);
  }
  const minimum = optionalInteger('minMessageCount', options.minMessageCount, { min: 0 });
  if (minimum !== undefined && minimum > 0) {
    parameters.minMessageCount = minimum;
    where.push(
      options.includeChildren
        ? 's.message_count >= @minMessageCount'
        : `(SELECT sum(c.message_count) FROM sessions c WHERE c.lineage_root_id = s.lineage_root_id) >= @minMessageCount`,
    );
  }
  const idNeedle = options.idQuery?.trim();
  if (idNeedle) {
    parameters.idLike = `%${escapeLike(idNeedle)}%`;
    where.push(`EXISTS (SELECT 1 FROM sessions c WHERE c.lineage_root_id = s.lineage_root_id
      AND c.id LIKE @idLike ESCAPE '\\')`);
  }
  const needle = options.searchQuery?.trim();
  if (needle) {
    const stripped = needle.replace(/[^\p{L}\p{N}\s]/gu, '').trim() || needle;
    parameters.like = `%${escapeLike(needle)}%`;
    parameters.strippedLike = `%${escapeLike(stripped)}%`;
    where.push(`EXISTS (SELECT 1 FROM sessions c WHERE c.lineage_root_id = s.lineage_root_id
      AND (c.title LIKE @like ESCAPE '\\' OR c.title LIKE @strippedLike ESCAPE '\\' OR c.id LIKE @like ESCAPE '\\'))`);
  }
  const filter = where.join(' AND ');
  const paged = [...where];
  if (options.cursor) {
    const [activeAt, id] = decodeCursor(options.cursor);
    paged.push(`(${ORDER_KEY} < @cursorAt OR (${ORDER_KEY} = @cursorAt AND s.id < @cursorId))`);
    parameters.cursorAt = activeAt;
    parameters.cursorId = id;
  }
  const offset = options.cursor ? 0 : requestedOffset;
  const rows = context
    .statement(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${paged.join(' AND ')}
       ORDER BY ${ORDER_KEY} DESC, s.id DESC LIMIT @take OFFSET @offset`,
    )
    .all({ ...parameters, take: limit + 1, offset }) as SessionRecord[];
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    hasMore && last ? encodeCursor(last.lineageActiveAt ?? last.startedAt, last.id) : null;
  const items = page.map((row) => project(context, row, options, false));
  if (options.includePinned ?? true) {
    const present = new Set(page.map((row) => row.id));
    const pinned = context
      .statement(
        `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.pinned = 1 AND ${filter} ORDER BY ${ORDER_KEY} DESC`,
      )
      .all(parameters) as SessionRecord[];
    for (const row of pinned) {
      if (!present.has(row.id)) items.push(project(context, row, options, true));
    }
  }
  const total = options.includeTotal
    ? (context
        .statement(`SELECT count(*) FROM sessions s WHERE ${filter}`)
        .pluck()
        .get(parameters) as number)
    : null;
  return { sessions: items, total, hasMore, nextCursor };
}

function project(
  context: StoreContext,
  root: SessionRecord,
  options: ListSessionsOptions,
  pinnedBackfill: boolean,
): SessionListItem {
  let row = root;
  let lineageIds: readonly string[] = [root.id];
  if ((options.projectCompressionTips ?? true) && root.lineageRootId === root.id) {
    const chain = getCompressionChain(context, root.id);
    const tipId = chain[chain.length - 1];
    if (chain.length > 1 && tipId) {
      const tip = context
        .statement(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`)
        .get(tipId) as SessionRecord | undefined;
      if (tip) {
        row = {
          ...tip,
          title: tip.title ?? root.title,
          lineageRootId: root.id,
          lineageActiveAt: root.lineageActiveAt,
        };
        lineageIds = chain;
      }
    }
  }
  const lastActive = root.lineageActiveAt ?? row.lastActivityAt ?? row.startedAt;
  return {
    ...row,
    lastActive,
    preview:
      sessionPreview(context, row.id) ??
      (row.id === root.id ? null : sessionPreview(context, root.id)),
    unread: row.lastReadAt !== null && lastActive > row.lastReadAt,
    lineageIds,
    pinnedBackfill,
  };
}
