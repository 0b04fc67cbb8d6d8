import { randomUUID } from 'node:crypto';
import {
  BOT_CHAT_TITLE,
  forkSession,
  LIST_SESSIONS_DEFAULT_LIMIT,
  LIST_SESSIONS_MAX_LIMIT,
  MESSAGES_MAX_LIMIT,
  type MessageRecord,
  messageResponse,
  readAllMessages,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
  sanitizeTitle,
} from '@hermes/session-store';
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { turnPlace } from '../../runtime/conversation-busy.js';
import { parseJsonText, readCappedText, readJsonBody } from '../body.js';
import { HttpError, httpErrors } from '../errors.js';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';
import { ifNoneMatchHits, RenderedPageCache } from '../rendered-pages.js';
import { sessionResponse, storedSessionResponse } from '../session-response.js';

/** `offset` ceiling of `GET /api/sessions` (the reference's). */
export const SESSIONS_OFFSET_MAX = 1_000_000;
export const MESSAGES_DEFAULT_LIMIT = 100;
/** Ids a client may choose: letters, digits, `.`, `_`, `:`, `-`; 1–128 long. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** End reasons a client may set: the catalogue's shape (`agent_close`, `session_reset`, …). */
const END_REASON_PATTERN = /^[a-z][a-z_]{0,63}$/;

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off', '']);

/** Query booleans: `1` / `true` / `yes` / `on` (any case); absent is false; anything else 400. */
function queryBoolean(context: Context, name: string): boolean {
  const value = context.req.query(name);
  if (value === undefined) return false;
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new HttpError({
    status: 400,
    code: 'invalid_request',
    message: `'${name}' must be a boolean (1/true/yes/on or 0/false/no/off)`,
    param: name,
  });
}

/** The sessions a lineage-wide change touches, as a 409 asking for `confirm_cascade` lists them. */
function affectedSessions(store: SessionStore, lineage: readonly string[]) {
  return lineage.map((sessionId) => {
    const row = store.getSession(sessionId);
    return { id: sessionId, title: row?.title ?? null, ended_at: row?.endedAt ?? null };
  });
}

/**
 * A query integer is plain decimal digits: `Number()` would also read `0x10`, `1e1`, `+5`,
 * ` 5` and `5.0`, a typo answered as some other page.
 */
const DecimalDigitsSchema = v.pipe(v.string(), v.regex(/^[0-9]+$/));

function queryInteger(
  context: Context,
  name: string,
  options: { fallback: number; min: number; max: number; lenient?: boolean },
): number {
  const raw = context.req.query(name);
  if (raw === undefined || raw === '') return options.fallback;
  if (!v.is(DecimalDigitsSchema, raw)) {
    // The reference treats an unparsable offset as the default; other integers must be integers.
    if (options.lenient) return options.fallback;
    throw new HttpError({
      status: 400,
      code: 'invalid_request',
      message: `'${name}' must be a whole number in decimal digits`,
      param: name,
    });
  }
  // Digits past MAX_SAFE_INTEGER only ever mean "as many as allowed".
  return Math.min(options.max, Math.max(options.min, Number(raw)));
}

/**
 * 409 `session_busy` while the session's conversation runs a turn, in this gateway or in any
 * process sharing the profile's `state.db` (`turnPlace`). `action` finishes the message.
 */
function refuseWhileTurnRuns(
  context: Context<GatewayEnv>,
  deps: GatewayDeps,
  input: { store: SessionStore; id: string; action: string; param?: string },
): void {
  const place = turnPlace({
    turns: deps.turns,
    profile: context.get('runtime').name,
    store: input.store,
    sessionId: input.id,
  });
  if (place === 'idle') return;
  throw sessionBusy(input);
}

function sessionBusy(input: { id: string; action: string; param?: string }): HttpError {
  return new HttpError({
    status: 409,
    code: 'session_busy',
    message: `Session ${input.id} is running a turn; ${input.action}`,
    param: input.param ?? null,
  });
}

/**
 * The store refuses a delete itself (`session_busy`, nothing deleted) when a turn took its lease
 * after `refuseWhileTurnRuns` looked: the same 409.
 */
async function deleteUnlessTurnRuns<T>(id: string, remove: () => Promise<T>): Promise<T> {
  try {
    return await remove();
  } catch (error) {
    if (SessionStoreError.isInstance(error) && error.code === 'session_busy')
      throw sessionBusy({ id, action: 'stop it before deleting the session' });
    throw error;
  }
}

export function newApiSessionId(): string {
  // The first 8 hex digits of a v4 UUID are random (32 bits; drawn from a pooled buffer).
  return `api_${Math.floor(Date.now() / 1000)}_${randomUUID().slice(0, 8)}`;
}

/** The store of the addressed profile, or 503 `session_db_unavailable`. */
export async function storeOf(context: Context<GatewayEnv>): Promise<SessionStore> {
  try {
    return await context.get('runtime').store();
  } catch (error) {
    throw httpErrors.sessionDbUnavailable(
      `Session database unavailable: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export function requireSessionRow(store: SessionStore, id: string): SessionRecord {
  const row = store.getSession(id);
  if (!row) throw httpErrors.sessionNotFound(id);
  return row;
}

function titleError(message: string): HttpError {
  return new HttpError({ status: 400, code: 'invalid_title', message, param: 'title' });
}

/** Maps the store's title refusals to 400 `invalid_title`. */
function asTitleError(store: SessionStore, title: string, error: unknown): HttpError | undefined {
  if (!SessionStoreError.isInstance(error)) return undefined;
  if (error.code === 'title_in_use') {
    const holder = store.getSessionByTitle(title, { includeHidden: true });
    return titleError(`Title already in use by session ${holder?.id ?? 'another session'}`);
  }
  if (error.code === 'title_too_long' || error.code === 'canonical_title_locked')
    return titleError(error.message);
  return undefined;
}

const CreateSessionSchema = v.looseObject({
  id: v.optional(v.string()),
  session_id: v.optional(v.string()),
  title: v.optional(v.nullable(v.string())),
  source: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64))),
  model: v.optional(v.nullable(v.string())),
  user_id: v.optional(v.nullable(v.string())),
  hidden: v.optional(v.boolean()),
  pinned: v.optional(v.boolean()),
});

const PATCH_FIELDS = [
  'title',
  'end_reason',
  'pinned',
  'archived',
  'hidden',
  'unread',
  'confirm_cascade',
] as const;
const PATCH_FLAGS = ['pinned', 'archived', 'hidden', 'unread', 'confirm_cascade'] as const;
/** PATCH fields refused (409 `session_busy`) while the session's turn runs. */
const PATCH_TURN_BOUND_FIELDS = ['title', 'archived', 'end_reason'] as const;

const ForkSchema = v.object({
  title: v.optional(v.nullable(v.string())),
  /** Copy the transcript up to and including this message id (default: all of it). */
  message_id: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

async function listPage(
  store: SessionStore,
  options: {
    limit: number;
    offset: number;
    title: string | undefined;
    includeHidden: boolean;
    source: string | undefined;
    includeChildren: boolean;
  },
) {
  const page = store.listSessionsRich({
    limit: options.limit,
    offset: options.offset,
    includePinned: true,
    includeChildren: options.includeChildren,
    // include_hidden is honoured only together with a title: no blanket hidden listing.
    includeHidden: options.title !== undefined && options.includeHidden,
    ...(options.title !== undefined ? { searchQuery: options.title } : {}),
    ...(options.source !== undefined ? { source: options.source } : {}),
  });
  const sessions =
    options.title === undefined
      ? page.sessions
      : page.sessions.filter((session) => session.title === options.title);
  return { sessions, hasMore: page.hasMore };
}

export function registerSessionRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  const limit = deps.maxRequestBytes;
  const pages = new RenderedPageCache();

  app.get('/api/sessions', async (context) => {
    const store = await storeOf(context);
    const pageLimit = queryInteger(context, 'limit', {
      fallback: LIST_SESSIONS_DEFAULT_LIMIT,
      min: 1,
      max: LIST_SESSIONS_MAX_LIMIT,
    });
    const offset = queryInteger(context, 'offset', {
      fallback: 0,
      min: 0,
      max: SESSIONS_OFFSET_MAX,
      lenient: true,
    });
    const rawTitle = context.req.query('title');
    let title: string | undefined;
    if (rawTitle !== undefined) {
      try {
        title = sanitizeTitle(rawTitle) ?? undefined;
      } catch (error) {
        throw titleError(error instanceof Error ? error.message : String(error));
      }
    }
    const source = context.req.query('source')?.trim() || undefined;
    const options = {
      limit: pageLimit,
      offset,
      title,
      includeHidden: queryBoolean(context, 'include_hidden'),
      source,
      includeChildren: queryBoolean(context, 'include_children'),
    };
    // Served from the rendered page while the store has not changed (any process's commit
    // changes its contentVersion); a client holding the page gets 304.
    const key = JSON.stringify([
      pageLimit,
      offset,
      title,
      options.includeHidden,
      source,
      options.includeChildren,
    ]);
    const page = await pages.page(store, key, async () => {
      let result = await listPage(store, options);
      let cacheable = true;
      if (title === BOT_CHAT_TITLE && result.sessions.length === 0) {
        // A reaped canonical chat comes back instead of making the client create a duplicate.
        // The write is a short awaited transaction (never a wait on the event loop); any error
        // here just leaves the list empty — and uncached, so the next lookup tries again.
        cacheable = false;
        try {
          const holder = store.getSessionByTitle(title, { includeHidden: true });
          if (
            holder &&
            holder.archived === 1 &&
            (await store.unarchiveRecoverableSession(holder.id))
          )
            result = await listPage(store, options);
        } catch (error) {
          deps.logger.warn({ err: error }, 'Bot Chat resurrection failed');
        }
      }
      return {
        cacheable,
        value: {
          object: 'list',
          data: result.sessions.map(sessionResponse),
          limit: pageLimit,
          offset,
          has_more: result.hasMore,
        },
      };
    });
    const headers = { etag: page.etag, 'cache-control': 'private, no-cache' };
    if (ifNoneMatchHits(context.req.header('if-none-match'), page.etag))
      return context.body(null, 304, headers);
    return context.body(page.body, 200, { ...headers, 'content-type': 'application/json' });
  });

  app.post('/api/sessions', async (context) => {
    const body = await readJsonBody(context, CreateSessionSchema, { limit, emptyAsObject: true });
    const store = await storeOf(context);
    if (body.id !== undefined && body.session_id !== undefined && body.id !== body.session_id) {
      throw new HttpError({
        status: 400,
        code: 'invalid_session_id',
        message: "'id' and 'session_id' name different sessions; send one of them",
        param: 'session_id',
      });
    }
    const id = body.id ?? body.session_id;
    if (id !== undefined && !SESSION_ID_PATTERN.test(id)) {
      throw new HttpError({
        status: 400,
        code: 'invalid_session_id',
        message: 'Session id must be 1-128 characters from A-Z, a-z, 0-9, ".", "_", ":", "-"',
        param: 'id',
      });
    }
    if (id !== undefined && store.getSession(id)) {
      throw new HttpError({
        status: 409,
        code: 'session_exists',
        message: `Session already exists: ${id}`,
        param: 'id',
      });
    }
    const title = body.title ?? null;
    let session: SessionRecord;
    try {
      session = await store.createSession({
        // A generated id that is taken is drawn again by the store.
        ...(id !== undefined ? { id } : { newId: newApiSessionId }),
        source: body.source ?? 'api_server',
        title,
        profileName: context.get('runtime').name,
        ...(body.model ? { model: body.model } : {}),
        ...(body.user_id ? { userId: body.user_id } : {}),
        ...(body.hidden !== undefined ? { hidden: body.hidden } : {}),
        ...(body.pinned !== undefined ? { pinned: body.pinned } : {}),
      });
    } catch (error) {
      if (SessionStoreError.isInstance(error) && error.code === 'session_exists') {
        throw new HttpError({
          status: 409,
          code: 'session_exists',
          message: id !== undefined ? `Session already exists: ${id}` : error.message,
          param: 'id',
        });
      }
      throw (title !== null ? asTitleError(store, title, error) : undefined) ?? error;
    }
    return context.json({ object: 'hermes.session', session: sessionResponse(session) }, 201);
  });

  app.get('/api/sessions/:id', async (context) => {
    const store = await storeOf(context);
    const session = requireSessionRow(store, context.req.param('id'));
    return context.json({
      object: 'hermes.session',
      session: storedSessionResponse(store, session),
    });
  });

  app.patch('/api/sessions/:id', async (context) => {
    const body = parseJsonText(await readCappedText(context, limit));
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw httpErrors.invalidRequest('Request body must be a JSON object');
    const fields = body as Record<string, unknown>;
    const unknown = Object.keys(fields).filter(
      (key) => !(PATCH_FIELDS as readonly string[]).includes(key),
    );
    if (unknown.length > 0) {
      throw new HttpError({
        status: 400,
        code: 'unsupported_session_field',
        message: `Unsupported session fields: ${unknown.sort().join(', ')}`,
      });
    }
    for (const flag of PATCH_FLAGS) {
      if (flag in fields && typeof fields[flag] !== 'boolean') {
        throw new HttpError({
          status: 400,
          code: 'invalid_session_field',
          message: `'${flag}' must be a boolean`,
          param: flag,
        });
      }
    }
    if ('title' in fields && fields.title !== null && typeof fields.title !== 'string') {
      throw new HttpError({
        status: 400,
        code: 'invalid_session_field',
        message: "'title' must be a string or null",
        param: 'title',
      });
    }
    if (
      'end_reason' in fields &&
      (typeof fields.end_reason !== 'string' || !END_REASON_PATTERN.test(fields.end_reason.trim()))
    ) {
      throw new HttpError({
        status: 400,
        code: 'invalid_session_field',
        message: "'end_reason' must be a reason such as 'agent_close' (lowercase letters and _)",
        param: 'end_reason',
      });
    }
    const store = await storeOf(context);
    const id = context.req.param('id');
    requireSessionRow(store, id);
    // What the running turn depends on waits for it, as `/title`, DELETE and fork do: its title
    // (the turn may title the conversation itself), whether it is archived, whether it ended.
    // Pin, hidden and unread are how a client shows the chat, and apply at once.
    const turnBound = PATCH_TURN_BOUND_FIELDS.find((field) => field in fields);
    if (turnBound !== undefined) {
      refuseWhileTurnRuns(context, deps, {
        store,
        id,
        action: `change its ${turnBound.replace('_', ' ')} after the turn finishes`,
        param: turnBound,
      });
    }
    if (fields.archived === true && fields.confirm_cascade !== true) {
      const lineage = store.getLineageIds(id);
      if (lineage.length > 1) {
        throw new HttpError({
          status: 409,
          code: 'archive_cascade_requires_confirmation',
          message: `Archiving this session archives its whole lineage (${lineage.length} sessions); send "confirm_cascade": true to proceed`,
          details: { affected_sessions: affectedSessions(store, lineage) },
        });
      }
    }
    // The title goes first: it is the one change that can be refused, and a refusal must leave
    // everything else untouched. Then archived, hidden, pinned (so pin wins over hidden).
    if ('title' in fields) {
      const title = fields.title as string | null;
      try {
        await store.setTitle(id, title, { source: 'user' });
      } catch (error) {
        throw (title !== null ? asTitleError(store, title, error) : undefined) ?? error;
      }
    }
    if (typeof fields.end_reason === 'string') await store.endSession(id, fields.end_reason.trim());
    if (typeof fields.archived === 'boolean') await store.setArchived(id, fields.archived);
    if (typeof fields.hidden === 'boolean') await store.setHidden(id, fields.hidden);
    if (typeof fields.pinned === 'boolean') await store.setPinned(id, fields.pinned);
    if (typeof fields.unread === 'boolean') await store.setRead(id, !fields.unread);
    const session = requireSessionRow(store, id);
    return context.json({
      object: 'hermes.session',
      session: storedSessionResponse(store, session),
    });
  });

  app.delete('/api/sessions/:id', async (context) => {
    // Read before anything else: a malformed value is refused even where no cascade is asked for.
    const confirmCascade = queryBoolean(context, 'confirm_cascade');
    const store = await storeOf(context);
    const id = context.req.param('id');
    requireSessionRow(store, id);
    refuseWhileTurnRuns(context, deps, {
      store,
      id,
      action: 'stop it before deleting the session',
    });
    // A compressed conversation is one unit (as archiving it is): deleting one of its sessions
    // alone would leave the rest listed under another id, untitled.
    const lineage = store.getLineageIds(id);
    if (lineage.length > 1) {
      if (!confirmCascade) {
        throw new HttpError({
          status: 409,
          code: 'delete_cascade_requires_confirmation',
          message: `Deleting this session deletes its whole lineage (${lineage.length} sessions); send ?confirm_cascade=true to proceed`,
          details: { affected_sessions: affectedSessions(store, lineage) },
        });
      }
      const deletedSessions = await deleteUnlessTurnRuns(id, () => store.deleteLineage(id));
      return context.json({
        object: 'hermes.session.deleted',
        id,
        deleted: deletedSessions.length > 0,
        deleted_sessions: deletedSessions,
      });
    }
    const deleted = await deleteUnlessTurnRuns(id, () => store.deleteSession(id));
    return context.json({ object: 'hermes.session.deleted', id, deleted, deleted_sessions: [id] });
  });

  app.get('/api/sessions/:id/messages', async (context) => {
    const store = await storeOf(context);
    const id = context.req.param('id');
    requireSessionRow(store, id);
    const pageLimit = queryInteger(context, 'limit', {
      fallback: MESSAGES_DEFAULT_LIMIT,
      min: 1,
      max: MESSAGES_MAX_LIMIT,
    });
    const afterId = queryInteger(context, 'after_id', {
      fallback: 0,
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
    });
    const order = context.req.query('order') ?? 'oldest';
    if (order !== 'oldest' && order !== 'latest') {
      throw new HttpError({
        status: 400,
        code: 'invalid_request',
        message: "'order' must be 'oldest' or 'latest'",
        param: 'order',
      });
    }
    const tip = store.getCompressionTip(id);
    let rows: MessageRecord[];
    let hasMore: boolean;
    if (order === 'oldest') {
      const page = store.getMessages(tip, {
        afterId,
        limit: Math.min(pageLimit + 1, MESSAGES_MAX_LIMIT),
      });
      hasMore = page.length > pageLimit;
      rows = page.slice(0, pageLimit);
    } else {
      // The newest `limit` rows, oldest first (the store pages forward only).
      const window: MessageRecord[] = [];
      let cursor = afterId;
      let total = 0;
      for (;;) {
        const page = store.getMessages(tip, { afterId: cursor, limit: MESSAGES_MAX_LIMIT });
        total += page.length;
        window.push(...page);
        if (window.length > pageLimit) window.splice(0, window.length - pageLimit);
        if (page.length < MESSAGES_MAX_LIMIT) break;
        cursor = page[page.length - 1]?.id ?? cursor;
      }
      rows = window;
      hasMore = total > pageLimit;
    }
    return context.json({
      object: 'list',
      session_id: tip,
      data: rows.map((row) => messageResponse(row)),
      has_more: hasMore,
    });
  });

  app.post('/api/sessions/:id/fork', async (context) => {
    const body = await readJsonBody(context, ForkSchema, { limit, emptyAsObject: true });
    const store = await storeOf(context);
    const id = context.req.param('id');
    const parent = requireSessionRow(store, id);
    const tip = store.getCompressionTip(id);
    const tipRow = requireSessionRow(store, tip);
    refuseWhileTurnRuns(context, deps, {
      store,
      id: parent.id,
      action: 'fork it after the turn finishes',
    });
    const rows = readAllMessages(store, tip);
    let copied = rows;
    if (body.message_id !== undefined) {
      const index = rows.findIndex((row) => row.id === body.message_id);
      if (index === -1) {
        throw new HttpError({
          status: 404,
          code: 'message_not_found',
          message: `Message ${body.message_id} is not in session ${tip}`,
          param: 'message_id',
        });
      }
      copied = rows.slice(0, index + 1);
    }
    const title = body.title ?? null;
    let child: SessionRecord;
    try {
      ({ child } = await forkSession(store, {
        sessionId: tipRow.id,
        newChildId: newApiSessionId,
        title,
        rows: copied,
      }));
    } catch (error) {
      throw (title !== null ? asTitleError(store, title, error) : undefined) ?? error;
    }
    return context.json(
      {
        object: 'hermes.session',
        session: storedSessionResponse(store, requireSessionRow(store, child.id)),
        forked_from: tip,
        copied_messages: copied.length,
      },
      201,
    );
  });
}
