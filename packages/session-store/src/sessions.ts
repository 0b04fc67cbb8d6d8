import * as v from 'valibot';
import { END_REASON, RECOVERABLE_END_REASONS_SQL } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import type { TitleSource } from './limits.js';
import type { SessionRecord } from './records.js';
import { readSession, SESSION_VALUES } from './row-readers.js';
import { newSessionId } from './session-ids.js';
import type { StoreContext } from './store-context.js';
import { applyTitle } from './titles.js';
import { dropUnusedSystemPrompt } from './usage.js';
import { parseInput } from './validation.js';

export type { SessionRecord } from './records.js';
export type ParentEdge = 'compression' | 'branch' | 'reset' | 'delegate' | 'tool';

export interface CreateSessionInput {
  /** The id to use; taken already → `session_exists`. Without it one is generated. */
  readonly id?: string;
  /**
   * Generates the id when `id` is not given (default `YYYYMMDD_HHMMSS_<hex6>`); a generated id
   * that is taken is drawn again, up to 8 times.
   */
  readonly newId?: () => string;
  readonly source: string;
  readonly title?: string | null;
  readonly titleSource?: TitleSource;
  readonly profileName?: string | null;
  readonly userId?: string | null;
  readonly sessionKey?: string | null;
  readonly chatId?: string | null;
  readonly chatType?: string | null;
  readonly threadId?: string | null;
  readonly model?: string | null;
  readonly modelConfig?: Record<string, unknown> | null;
  readonly cwd?: string | null;
  readonly parentSessionId?: string | null;
  readonly parentEdge?: ParentEdge | null;
  readonly hidden?: boolean;
  readonly pinned?: boolean;
  readonly archived?: boolean;
  readonly startedAt?: number;
}

export function getSession(context: StoreContext, id: string): SessionRecord | undefined {
  return readSession(context, `SELECT ${SESSION_VALUES} FROM sessions s WHERE s.id = ?`, id);
}

export function requireSession(context: StoreContext, id: string): SessionRecord {
  const row = getSession(context, id);
  if (!row) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(id),
    });
  }
  return row;
}

const PARENT_EDGES: ReadonlySet<string> = new Set([
  'compression',
  'branch',
  'reset',
  'delegate',
  'tool',
]);

const OPTIONAL_TEXT_FIELDS = [
  'title',
  'profileName',
  'userId',
  'sessionKey',
  'chatId',
  'chatType',
  'threadId',
  'model',
  'cwd',
  'parentSessionId',
] as const;

function invalidSessionField(field: string, expected: string): SessionStoreError {
  return new SessionStoreError({
    code: 'invalid_argument',
    message: ERROR_MESSAGES.invalidArgument(field, expected),
  });
}

function requireIdText(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0)
    throw invalidSessionField('id', 'a non-empty string');
  return id;
}

/**
 * Cheap checks of what SQLite would otherwise refuse with a bare constraint error or store as
 * nonsense (a numeric id, an unknown parent edge).
 */
function validateCreateSession(input: CreateSessionInput): void {
  if (typeof input !== 'object' || input === null)
    throw invalidSessionField('source', 'a non-empty string');
  if (typeof input.source !== 'string' || input.source.length === 0)
    throw invalidSessionField('source', 'a non-empty string');
  if (input.id !== undefined) requireIdText(input.id);
  for (const field of OPTIONAL_TEXT_FIELDS) {
    const value = input[field];
    if (value !== undefined && value !== null && typeof value !== 'string')
      throw invalidSessionField(field, 'a string or null');
  }
  if (
    input.parentEdge !== undefined &&
    input.parentEdge !== null &&
    !PARENT_EDGES.has(input.parentEdge)
  )
    throw invalidSessionField('parentEdge', `one of ${[...PARENT_EDGES].join(', ')}`);
  if (
    input.startedAt !== undefined &&
    (typeof input.startedAt !== 'number' || !Number.isFinite(input.startedAt))
  )
    throw invalidSessionField('startedAt', 'epoch seconds (a finite number)');
}

/** Fresh ids tried when a generated one is taken (six hex digits: rare, but not impossible). */
const GENERATED_ID_ATTEMPTS = 8;

/**
 * Inserts a row (and claims its title) — call inside a write transaction. A generated id that
 * is already taken (two sessions started in the same second drew the same six hex digits) is
 * drawn again; a caller's own id that is taken is `session_exists`.
 */
export function insertSession(context: StoreContext, input: CreateSessionInput): string {
  return createSessionRow(context, input).id;
}

/** What `createSessionRow` inserted. */
export interface CreatedSessionRow {
  readonly id: string;
  readonly lineageRootId: string;
}

/**
 * `insertSession`, answering the new row's lineage root too (its own id unless it is a
 * compression child) so the caller's transaction need not read it back. `systemPromptHash` is
 * stored in the row as inserted — the caller stores the prompt's text in the same transaction
 * (`storeSystemPromptText`) — instead of a NULL the prompt's UPDATE would move in the index.
 */
export function createSessionRow(
  context: StoreContext,
  input: CreateSessionInput,
  stored: { readonly systemPromptHash?: string } = {},
): CreatedSessionRow {
  validateCreateSession(input);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return insertSessionRow(
        context,
        input,
        requireIdText(input.id ?? (input.newId ?? newSessionId)()),
        stored.systemPromptHash ?? null,
      );
    } catch (error) {
      const retry =
        input.id === undefined &&
        attempt < GENERATED_ID_ATTEMPTS &&
        SessionStoreError.isInstance(error) &&
        error.code === 'session_exists';
      if (!retry) throw error;
    }
  }
}

function insertSessionRow(
  context: StoreContext,
  input: CreateSessionInput,
  id: string,
  systemPromptHash: string | null,
): CreatedSessionRow {
  const startedAt = input.startedAt ?? context.clock.now();
  const edge = input.parentSessionId ? (input.parentEdge ?? 'branch') : null;
  let lineageRootId = id;
  if (input.parentSessionId && edge === 'compression') {
    lineageRootId = requireSession(context, input.parentSessionId).lineageRootId;
  }
  try {
    context
      .statement(
        `INSERT INTO sessions (id, source, profile_name, user_id, session_key, chat_id, chat_type, thread_id,
           model, model_config, cwd, parent_session_id, parent_edge, lineage_root_id, lineage_active_at,
           started_at, hidden, pinned, archived, system_prompt_hash)
         VALUES (@id, @source, @profileName, @userId, @sessionKey, @chatId, @chatType, @threadId,
           @model, @modelConfig, @cwd, @parentSessionId, @parentEdge, @lineageRootId, @startedAt,
           @startedAt, @hidden, @pinned, @archived, @systemPromptHash)`,
      )
      .run({
        id,
        source: input.source,
        profileName: input.profileName ?? null,
        userId: input.userId ?? null,
        sessionKey: input.sessionKey ?? null,
        chatId: input.chatId ?? null,
        chatType: input.chatType ?? null,
        threadId: input.threadId ?? null,
        model: input.model ?? null,
        modelConfig: input.modelConfig ? JSON.stringify(input.modelConfig) : null,
        cwd: input.cwd ?? null,
        parentSessionId: input.parentSessionId ?? null,
        parentEdge: edge,
        lineageRootId,
        startedAt,
        hidden: input.hidden ? 1 : 0,
        pinned: input.pinned ? 1 : 0,
        archived: input.archived ? 1 : 0,
        systemPromptHash,
      });
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw new SessionStoreError({
        code: 'session_exists',
        message: ERROR_MESSAGES.sessionExists(id),
        cause: error,
      });
    }
    throw error;
  }
  if (input.title !== undefined && input.title !== null) {
    applyTitle(context, { sessionId: id, title: input.title, source: input.titleSource ?? 'user' });
  }
  return { id, lineageRootId };
}

/**
 * The first end wins: only a live row is stamped. Ending a messaging peer's session bumps that
 * peer's `conversation_generations` fence, so a stale writer can tell its conversation is over.
 * Returns whether this call ended it.
 */
export function endSession(context: StoreContext, id: string, reason: string): boolean {
  if (typeof reason !== 'string' || reason.length === 0) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('reason', 'a non-empty end reason'),
    });
  }
  const ended = context
    .statement(
      `UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL
       RETURNING source, session_key AS sessionKey`,
    )
    .get(context.clock.now(), reason, id) as PeerKey | undefined;
  if (ended) bumpConversationGeneration(context, ended);
  return ended !== undefined;
}

interface PeerKey {
  source: string;
  sessionKey: string | null;
}

function bumpConversationGeneration(context: StoreContext, peer: PeerKey): void {
  if (!peer.sessionKey) return;
  context
    .statement(
      `INSERT INTO conversation_generations (source, session_key, generation) VALUES (?, ?, 1)
       ON CONFLICT(source, session_key) DO UPDATE SET generation = generation + 1`,
    )
    .run(peer.source, peer.sessionKey);
}

/** How many times a session of this peer has been ended (0 when never). */
export function getConversationGeneration(
  context: StoreContext,
  source: string,
  sessionKey: string,
): number {
  return (
    (context
      .statement(
        'SELECT generation FROM conversation_generations WHERE source = ? AND session_key = ?',
      )
      .pluck()
      .get(source, sessionKey) as number | undefined) ?? 0
  );
}

export function reopenSession(context: StoreContext, id: string): boolean {
  const result = context
    .statement(
      'UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL',
    )
    .run(id);
  return result.changes === 1;
}

/** Turns a live row, or one ended by accident (recoverable reason), into a `session_reset` boundary. */
export function promoteToSessionReset(context: StoreContext, id: string): boolean {
  const before = context
    .statement(
      'SELECT source, session_key AS sessionKey, ended_at AS endedAt FROM sessions WHERE id = ?',
    )
    .get(id) as (PeerKey & { endedAt: number | null }) | undefined;
  const changed =
    context
      .statement(
        `UPDATE sessions SET ended_at = coalesce(ended_at, ?), end_reason = '${END_REASON.sessionReset}'
         WHERE id = ? AND (ended_at IS NULL OR end_reason IN (${RECOVERABLE_END_REASONS_SQL}))`,
      )
      .run(context.clock.now(), id).changes === 1;
  // Only a live row is newly ended here; a recoverable end already bumped the fence.
  if (changed && before && before.endedAt === null) bumpConversationGeneration(context, before);
  return changed;
}

/**
 * Deletes one row (its messages cascade). Its children survive: each compression child becomes
 * the root of its own remaining chain, so the conversation stays listable.
 *
 * Leases go with the row, since an id may be created again and must not find them: the session's
 * compression lease, and the turn lease of the conversation it is the root of (keyed by the
 * root's id). A running turn may be on any chain the deletion splits off (a turn runs at the
 * tip), so each split-off chain gets the conversation's turn lease under its new root: its
 * holder keeps renewing and releasing it there, and nobody else starts a turn meanwhile.
 */
export function deleteSession(context: StoreContext, id: string): boolean {
  const conversationId = context
    .statement('SELECT lineage_root_id FROM sessions WHERE id = ?')
    .pluck()
    .get(id) as string | undefined;
  const children = context
    .statement(
      "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_edge = 'compression'",
    )
    .pluck()
    .all(id) as string[];
  for (const child of children) {
    context
      .statement(
        `WITH RECURSIVE chain(id) AS (
           SELECT ? UNION
           SELECT s.id FROM sessions s JOIN chain ON s.parent_session_id = chain.id WHERE s.parent_edge = 'compression')
         UPDATE sessions SET lineage_root_id = ? WHERE id IN (SELECT id FROM chain)`,
      )
      .run(child, child);
    context
      .statement(
        `UPDATE sessions SET parent_edge = NULL,
           lineage_active_at = (SELECT max(coalesce(last_activity_at, started_at)) FROM sessions WHERE lineage_root_id = ?)
         WHERE id = ?`,
      )
      .run(child, child);
    if (conversationId !== undefined)
      context
        .statement(
          `INSERT INTO session_turn_leases (conversation_id, holder, acquired_at, expires_at)
           SELECT ?, holder, acquired_at, expires_at FROM session_turn_leases WHERE conversation_id = ?
           ON CONFLICT(conversation_id) DO UPDATE SET holder = excluded.holder,
             acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
        )
        .run(child, conversationId);
  }
  context
    .statement('UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?')
    .run(id);
  context.statement('DELETE FROM compression_locks WHERE session_id = ?').run(id);
  if (conversationId === id)
    context.statement('DELETE FROM session_turn_leases WHERE conversation_id = ?').run(id);
  const deleted = context
    .statement('DELETE FROM sessions WHERE id = ? RETURNING system_prompt_hash AS hash')
    .get(id) as { hash: string | null } | undefined;
  if (deleted?.hash) dropUnusedSystemPrompt(context, deleted.hash);
  return deleted !== undefined;
}

const UpdateSessionSchema = v.strictObject({
  model: v.optional(v.nullable(v.string())),
  cwd: v.optional(v.nullable(v.string())),
  modelConfig: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
});

/** Fields `updateSession` may change; absent ones stay as they are. */
export interface UpdateSessionInput {
  model?: string | null;
  cwd?: string | null;
  modelConfig?: Record<string, unknown> | null;
}

/** @internal The schema's input type, checked against `UpdateSessionInput` in the tests. */
export type UpdateSessionSchemaInput = v.InferInput<typeof UpdateSessionSchema>;

/** Changes the model, working directory or model config of one row; absent fields stay. */
export function updateSession(context: StoreContext, id: string, input: UpdateSessionInput): void {
  const update = parseInput(UpdateSessionSchema, input, 'update');
  const changes = context
    .statement(
      `UPDATE sessions SET
         model = CASE WHEN @setModel THEN @model ELSE model END,
         cwd = CASE WHEN @setCwd THEN @cwd ELSE cwd END,
         model_config = CASE WHEN @setModelConfig THEN @modelConfig ELSE model_config END
       WHERE id = @id`,
    )
    .run({
      id,
      setModel: update.model === undefined ? 0 : 1,
      model: update.model ?? null,
      setCwd: update.cwd === undefined ? 0 : 1,
      cwd: update.cwd ?? null,
      setModelConfig: update.modelConfig === undefined ? 0 : 1,
      modelConfig: update.modelConfig ? JSON.stringify(update.modelConfig) : null,
    }).changes;
  if (changes !== 1) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(id),
    });
  }
}

export function setResumePending(
  context: StoreContext,
  id: string,
  reason: string | null,
): boolean {
  const result = context
    .statement('UPDATE sessions SET resume_pending = ?, resume_reason = ? WHERE id = ?')
    .run(reason === null ? 0 : 1, reason, id);
  return result.changes === 1;
}
