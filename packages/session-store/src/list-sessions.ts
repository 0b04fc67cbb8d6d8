import * as v from 'valibot';
import { getCompressionChains } from './compression-chain.js';
import { toSqlList } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import {
  INTERNAL_LISTING_SOURCES,
  LIST_SESSIONS_DEFAULT_LIMIT,
  LIST_SESSIONS_MAX_LIMIT,
} from './limits.js';
import { sessionPreviews } from './preview.js';
import type { SessionRecord } from './records.js';
import { readSessions, SESSION_VALUES } from './row-readers.js';
import type { StoreContext } from './store-context.js';
import { sanitizeTitle } from './titles.js';
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
  /**
   * Only conversations where some row of the lineage has exactly this title (sanitised as
   * titles are; one lookup in the title index). Hidden rows still need `includeHidden`.
   */
  readonly title?: string | null;
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
  if (options.title !== undefined && options.title !== null) {
    const title = exactTitle(options.title);
    // No stored title can equal an over-long or empty one: the filter matches nothing.
    parameters.title = title;
    where.push(
      's.lineage_root_id IN (SELECT c.lineage_root_id FROM sessions c WHERE c.title = @title)',
    );
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
  const rows = readSessions(
    context,
    `SELECT ${SESSION_VALUES} FROM sessions s WHERE ${paged.join(' AND ')}
     ORDER BY ${ORDER_KEY} DESC, s.id DESC LIMIT @take OFFSET @offset`,
    { ...parameters, take: limit + 1, offset },
  );
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    hasMore && last ? encodeCursor(last.lineageActiveAt ?? last.startedAt, last.id) : null;
  let backfill: SessionRecord[] = [];
  if (options.includePinned ?? true) {
    const present = new Set(page.map((row) => row.id));
    backfill = readSessions(
      context,
      `SELECT ${SESSION_VALUES} FROM sessions s WHERE s.pinned = 1 AND ${filter} ORDER BY ${ORDER_KEY} DESC`,
      parameters,
    ).filter((row) => !present.has(row.id));
  }
  const items = projectPage(context, page, backfill, options.projectCompressionTips ?? true);
  const total = options.includeTotal
    ? (context
        .statement(`SELECT count(*) FROM sessions s WHERE ${filter}`)
        .pluck()
        .get(parameters) as number)
    : null;
  return { sessions: items, total, hasMore, nextCursor };
}

/**
 * Shapes a page in a fixed number of statements whatever its size: the compression chains of
 * every root on it (one statement), the tip rows of the compressed ones (one), and the previews
 * of every row shown plus the roots they fall back to (one).
 */
function projectPage(
  context: StoreContext,
  page: readonly SessionRecord[],
  backfill: readonly SessionRecord[],
  projectTips: boolean,
): SessionListItem[] {
  const roots = [...page, ...backfill];
  const chains = projectTips
    ? getCompressionChains(
        context,
        roots.filter((row) => row.lineageRootId === row.id).map((row) => row.id),
      )
    : new Map<string, string[]>();
  const tipIds: string[] = [];
  for (const chain of chains.values()) {
    if (chain.length > 1) tipIds.push(chain[chain.length - 1] as string);
  }
  const tips = new Map<string, SessionRecord>();
  if (tipIds.length > 0) {
    for (const tip of readSessions(
      context,
      `SELECT ${SESSION_VALUES} FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(tipIds),
    )) {
      tips.set(tip.id, tip);
    }
  }
  const shown = roots.map((root) => {
    const chain = chains.get(root.id);
    const tip = chain && chain.length > 1 ? tips.get(chain[chain.length - 1] as string) : undefined;
    return { root, chain: tip && chain ? chain : null, row: tip ?? root };
  });
  const previewIds = new Set<string>();
  for (const { root, row } of shown) {
    previewIds.add(row.id);
    previewIds.add(root.id);
  }
  const previews = sessionPreviews(context, [...previewIds]);
  return shown.map(({ root, chain, row }, index) => {
    const lastActive = root.lineageActiveAt ?? row.lastActivityAt ?? row.startedAt;
    return listItem(row, root, {
      lastActive,
      preview: previews.get(row.id) ?? (row === root ? null : (previews.get(root.id) ?? null)),
      lineageIds: chain ?? [root.id],
      pinnedBackfill: index >= page.length,
    });
  });
}

/**
 * One listing row: the shown row (the compression tip, or the root itself) carrying the root's
 * lineage fields and its title as a fallback. Written out field by field: spreading a 41-field
 * row into a new object with five more keys takes V8's slow path (about 20 µs a row, measured),
 * while a literal of a fixed shape is the fastest object to build.
 */
function listItem(
  row: SessionRecord,
  root: SessionRecord,
  extra: {
    lastActive: number;
    preview: string | null;
    lineageIds: string[];
    pinnedBackfill: boolean;
  },
): SessionListItem {
  return {
    id: row.id,
    source: row.source,
    profileName: row.profileName,
    userId: row.userId,
    sessionKey: row.sessionKey,
    chatId: row.chatId,
    chatType: row.chatType,
    threadId: row.threadId,
    model: row.model,
    modelConfig: row.modelConfig,
    cwd: row.cwd,
    parentSessionId: row.parentSessionId,
    parentEdge: row.parentEdge,
    lineageRootId: root.id === row.id ? row.lineageRootId : root.id,
    lineageActiveAt: root.lineageActiveAt,
    startedAt: row.startedAt,
    lastActivityAt: row.lastActivityAt,
    lastReadAt: row.lastReadAt,
    endedAt: row.endedAt,
    endReason: row.endReason,
    title: row.title ?? root.title,
    titleSource: row.titleSource,
    archived: row.archived,
    autoArchived: row.autoArchived,
    pinned: row.pinned,
    hidden: row.hidden,
    resumePending: row.resumePending,
    resumeReason: row.resumeReason,
    messageCount: row.messageCount,
    toolCallCount: row.toolCallCount,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    apiCallCount: row.apiCallCount,
    cacheReadTokens: row.cacheReadTokens,
    cacheWriteTokens: row.cacheWriteTokens,
    reasoningTokens: row.reasoningTokens,
    estimatedCostUsd: row.estimatedCostUsd,
    billingProvider: row.billingProvider,
    billingBaseUrl: row.billingBaseUrl,
    systemPromptHash: row.systemPromptHash,
    toolNames: row.toolNames,
    lastActive: extra.lastActive,
    preview: extra.preview,
    unread: row.lastReadAt !== null && extra.lastActive > row.lastReadAt,
    lineageIds: extra.lineageIds,
    pinnedBackfill: extra.pinnedBackfill,
  };
}

/** A title filter as stored titles are written (sanitised); null when no title can match. */
function exactTitle(title: string): string | null {
  if (typeof title !== 'string') {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('title', 'a string'),
    });
  }
  try {
    return sanitizeTitle(title);
  } catch {
    return null;
  }
}
