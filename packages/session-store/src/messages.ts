import { getCompressionTip } from './compression-chain.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { MESSAGES_MAX_LIMIT } from './limits.js';
import type { MessageRecord } from './records.js';
import { MESSAGE_VALUES, readMessages } from './row-readers.js';
import type { StoreContext } from './store-context.js';
import { USAGE_ASSIGNMENTS, type UsageInput, usageParameters } from './usage.js';
import { nonNegativeInteger, pageSize } from './validation.js';

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

export interface MessageInput {
  readonly role: MessageRole;
  readonly content?: string | null;
  readonly toolCalls?: unknown;
  readonly toolCallId?: string | null;
  readonly toolName?: string | null;
  readonly timestamp?: number;
  readonly tokenCount?: number | null;
  readonly finishReason?: string | null;
  readonly reasoning?: string | null;
  readonly reasoningContent?: string | null;
  readonly reasoningDetails?: unknown;
  readonly codexReasoningItems?: unknown;
  readonly codexMessageItems?: unknown;
  readonly platformMessageId?: string | null;
  /** Marks a compaction carrier (handoff summary); detection is by this flag, never by text. */
  readonly compressedSummary?: boolean;
  readonly displayKind?: string | null;
  /** The text actually sent to the model, when it differs from `content`. */
  readonly apiContent?: string | null;
}

export type { MessageRecord } from './records.js';

const INSERT_MESSAGE = `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,
  token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
  codex_message_items, platform_message_id, _compressed_summary, display_kind, api_content)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

function invalidMessage(index: number, field: string, expected: string): SessionStoreError {
  return new SessionStoreError({
    code: 'invalid_argument',
    message: ERROR_MESSAGES.invalidArgument(`messages[${index}].${field}`, expected),
  });
}

/** Cheap checks on the hot path (no schema library): what SQLite would otherwise store or refuse. */
function validateMessage(input: MessageInput, index: number): void {
  if (typeof input !== 'object' || input === null)
    throw invalidMessage(index, 'role', 'a message object');
  if (!ROLES.has(input.role)) {
    throw invalidMessage(index, 'role', "'system', 'user', 'assistant' or 'tool'");
  }
  for (const field of [
    'content',
    'apiContent',
    'toolCallId',
    'toolName',
    'finishReason',
    'reasoning',
    'reasoningContent',
    'platformMessageId',
    'displayKind',
  ] as const) {
    const value = input[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw invalidMessage(index, field, 'a string or null');
    }
  }
  if (input.timestamp !== undefined && !Number.isFinite(input.timestamp)) {
    throw invalidMessage(index, 'timestamp', 'epoch seconds (a finite number)');
  }
  const tokens = input.tokenCount;
  if (tokens !== undefined && tokens !== null && !(Number.isInteger(tokens) && tokens >= 0)) {
    throw invalidMessage(index, 'tokenCount', 'a whole number of at least 0');
  }
}

function toolCallCount(value: unknown): number {
  return Array.isArray(value) ? value.length : value === undefined || value === null ? 0 : 1;
}

/** The session columns an append changes, over `@messageCount`, `@toolCalls` and `@latest`. */
const APPEND_ASSIGNMENTS = `message_count = message_count + @messageCount,
  tool_call_count = tool_call_count + @toolCalls,
  last_activity_at = max(coalesce(last_activity_at, 0), @latest),
  lineage_active_at = CASE WHEN lineage_root_id = id THEN max(coalesce(lineage_active_at, 0), @latest) ELSE lineage_active_at END`;

/**
 * Inserts messages and bumps the session's counters and the lineage's activity — call inside a
 * write transaction. The FTS triggers index the text in the same transaction.
 */
export function insertMessages(
  context: StoreContext,
  sessionId: string,
  inputs: readonly MessageInput[],
): number[] {
  return appendToSession(context, sessionId, inputs).ids;
}

/**
 * `insertMessages`, adding `usage` (as `recordUsage`) in the same UPDATE of the session row that
 * counts the messages — one statement and one write of the row where two would do the same —
 * and answering the session's lineage root, which that UPDATE returns. An invalid usage is
 * refused before anything is written.
 */
export function appendToSession(
  context: StoreContext,
  sessionId: string,
  inputs: readonly MessageInput[],
  usageInput?: UsageInput,
): { ids: number[]; lineageRootId: string | undefined } {
  const now = context.clock.now();
  const insert = context.statement(INSERT_MESSAGE);
  const ids: number[] = [];
  let toolCalls = 0;
  let latest = now;
  inputs.forEach(validateMessage);
  const usage = usageInput === undefined ? undefined : usageParameters(usageInput);
  try {
    for (const input of inputs) {
      const timestamp = input.timestamp ?? now;
      latest = Math.max(latest, timestamp);
      toolCalls += toolCallCount(input.toolCalls);
      const result = insert.run(
        sessionId,
        input.role,
        input.content ?? null,
        input.toolCallId ?? null,
        json(input.toolCalls),
        input.toolName ?? null,
        timestamp,
        input.tokenCount ?? null,
        input.finishReason ?? null,
        input.reasoning ?? null,
        input.reasoningContent ?? null,
        json(input.reasoningDetails),
        json(input.codexReasoningItems),
        json(input.codexMessageItems),
        input.platformMessageId ?? null,
        input.compressedSummary ? 1 : 0,
        input.displayKind ?? null,
        input.apiContent ?? null,
      );
      ids.push(Number(result.lastInsertRowid));
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
      throw new SessionStoreError({
        code: 'session_not_found',
        message: ERROR_MESSAGES.sessionNotFound(sessionId),
        cause: error,
      });
    }
    throw error;
  }
  // One statement for the common case (the session is its own lineage root); a compression
  // child also raises its root's activity so listings order the whole conversation by it.
  const appended = { id: sessionId, messageCount: inputs.length, latest };
  const lineageRootId = (
    usage === undefined
      ? context
          .statement(
            `UPDATE sessions SET ${APPEND_ASSIGNMENTS} WHERE id = @id RETURNING lineage_root_id`,
          )
          .pluck()
          .get({ ...appended, toolCalls })
      : context
          .statement(
            `UPDATE sessions SET ${APPEND_ASSIGNMENTS}, ${USAGE_ASSIGNMENTS} WHERE id = @id
             RETURNING lineage_root_id`,
          )
          .pluck()
          .get({ ...appended, ...usage.parameters, toolCalls: toolCalls + usage.toolCalls })
  ) as string | undefined;
  if (usage !== undefined && lineageRootId === undefined) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(sessionId),
    });
  }
  if (lineageRootId !== undefined && lineageRootId !== sessionId) {
    context
      .statement(
        'UPDATE sessions SET lineage_active_at = max(coalesce(lineage_active_at, 0), ?) WHERE id = ?',
      )
      .run(latest, lineageRootId);
  }
  return { ids, lineageRootId };
}

export interface GetMessagesOptions {
  /** Only rows with an id greater than this (paging forwards: the last id of the previous page). */
  readonly afterId?: number;
  /** Only rows with an id less than this (paging backwards: the first id of the previous page). */
  readonly beforeId?: number;
  /** Page size: default and maximum 500. */
  readonly limit?: number;
  readonly includeInactive?: boolean;
  /**
   * `oldest` (default): the page starts at the oldest matching row, in ascending id order.
   * `newest`: the page starts at the newest matching row, in descending id order — the latest
   * `limit` rows without reading the rest; pass the last (smallest) id back as `beforeId` for
   * the page before.
   */
  readonly order?: 'oldest' | 'newest';
}

const MESSAGE_ORDERS: ReadonlySet<string> = new Set(['oldest', 'newest']);

/**
 * The session's active messages (every row with `includeInactive`), one page in id order. Each
 * page is one range scan of the `(session_id, id)` index, whichever end it starts from.
 */
export function getMessages(
  context: StoreContext,
  sessionId: string,
  options: GetMessagesOptions = {},
): MessageRecord[] {
  const limit = pageSize('limit', options.limit, {
    default: MESSAGES_MAX_LIMIT,
    max: MESSAGES_MAX_LIMIT,
  });
  const afterId = nonNegativeInteger('afterId', options.afterId, 0);
  const beforeId = nonNegativeInteger('beforeId', options.beforeId, Number.MAX_SAFE_INTEGER);
  const order = options.order ?? 'oldest';
  if (!MESSAGE_ORDERS.has(order)) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('order', "'oldest' or 'newest'"),
    });
  }
  return readMessages(
    context,
    `SELECT ${MESSAGE_VALUES} FROM messages m
     WHERE m.session_id = ? AND m.id > ? AND m.id < ?${options.includeInactive ? '' : ' AND m.active = 1'}
     ORDER BY m.id ${order === 'newest' ? 'DESC' : 'ASC'} LIMIT ?`,
    sessionId,
    afterId,
    beforeId,
    limit,
  );
}

export interface RecentMessagesOptions {
  /** How many messages (default 10, at most 500). */
  readonly limit?: number;
  /** Only these roles (default `user` and `assistant`). */
  readonly roles?: readonly MessageRole[];
  /**
   * Skip rows without text: empty or whitespace-only content, such as an assistant message that
   * only called tools (default true).
   */
  readonly requireText?: boolean;
  /** Include compaction carriers (the summary a compressed segment starts with); default false. */
  readonly includeCompactionCarriers?: boolean;
  /** Include rows whose `displayKind` is `hidden` (steering the model, never shown); default false. */
  readonly includeHidden?: boolean;
}

export const RECENT_MESSAGES_DEFAULT_LIMIT = 10;

/**
 * The newest messages of the conversation `sessionId` belongs to, oldest first: read backwards
 * from its compression tip (the segment the model sees now — its handoff summary, the retained
 * tail and everything since), stopping as soon as `limit` rows matched, so the cost follows the
 * rows returned, not the length of the transcript. What `/review` snapshots.
 */
export function getRecentMessages(
  context: StoreContext,
  sessionId: string,
  options: RecentMessagesOptions = {},
): MessageRecord[] {
  const limit = pageSize('limit', options.limit, {
    default: RECENT_MESSAGES_DEFAULT_LIMIT,
    max: MESSAGES_MAX_LIMIT,
  });
  const roles = options.roles ?? ['user', 'assistant'];
  if (!Array.isArray(roles) || !roles.every((role) => ROLES.has(role))) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument(
        'roles',
        "a list of 'system', 'user', 'assistant' or 'tool'",
      ),
    });
  }
  const requireText = options.requireText ?? true;
  const tip = getCompressionTip(context, sessionId);
  const conditions = ['m.session_id = ?', 'm.id < ?', 'm.active = 1'];
  conditions.push('m.role IN (SELECT value FROM json_each(?))');
  if (!options.includeCompactionCarriers) conditions.push('m._compressed_summary = 0');
  if (!options.includeHidden)
    conditions.push("(m.display_kind IS NULL OR m.display_kind != 'hidden')");
  if (requireText) conditions.push("m.content IS NOT NULL AND m.content != ''");
  const sql = `SELECT ${MESSAGE_VALUES} FROM messages m WHERE ${conditions.join(' AND ')}
    ORDER BY m.id DESC LIMIT ?`;
  const found: MessageRecord[] = [];
  // Whitespace-only rows pass the SQL filter (SQLite's trim knows only spaces), so read in
  // batches a little larger than needed and keep reading while such rows were dropped.
  let beforeId = Number.MAX_SAFE_INTEGER;
  const rolesJson = JSON.stringify(roles);
  for (;;) {
    const want = limit - found.length + 4;
    const batch = readMessages(context, sql, tip, beforeId, rolesJson, want);
    for (const row of batch) {
      if (requireText && (row.content ?? '').trim() === '') continue;
      found.push(row);
      if (found.length === limit) return found.reverse();
    }
    const last = batch[batch.length - 1];
    if (batch.length < want || !last) return found.reverse();
    beforeId = last.id;
  }
}

/** Marks messages superseded (rewind / compaction); the rows stay for history. */
export function deactivateMessages(
  context: StoreContext,
  sessionId: string,
  fromId: number,
): number {
  return context
    .statement('UPDATE messages SET active = 0 WHERE session_id = ? AND id >= ? AND active = 1')
    .run(sessionId, fromId).changes;
}
