import { getTableColumns } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { MessageRecord, SessionRecord } from './records.js';
import { messages, sessions } from './schema.js';
import type { StoreContext } from './store-context.js';

/*
 * Rows read as arrays (better-sqlite3's raw mode) and shaped by one object literal each.
 * better-sqlite3 builds a result object through the V8 API one property at a time, which for the
 * 41 columns of a session costs about 4 µs per row — most of a 50-row listing (0.55 ms against
 * 0.2 ms with arrays, measured on the same page). An object literal of a fixed shape is what V8
 * builds fastest. The field order below is the SELECT order; `row-readers.test.ts` proves that
 * both lists hold every schema column and that a fully populated row reads back identically.
 */

export const SESSION_FIELDS = [
  'id',
  'source',
  'profileName',
  'userId',
  'sessionKey',
  'chatId',
  'chatType',
  'threadId',
  'model',
  'modelConfig',
  'cwd',
  'parentSessionId',
  'parentEdge',
  'lineageRootId',
  'lineageActiveAt',
  'startedAt',
  'lastActivityAt',
  'lastReadAt',
  'endedAt',
  'endReason',
  'title',
  'titleSource',
  'archived',
  'autoArchived',
  'pinned',
  'hidden',
  'resumePending',
  'resumeReason',
  'messageCount',
  'toolCallCount',
  'inputTokens',
  'outputTokens',
  'apiCallCount',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'estimatedCostUsd',
  'billingProvider',
  'billingBaseUrl',
  'systemPromptHash',
  'toolNames',
] as const satisfies readonly (keyof SessionRecord)[];

export const MESSAGE_FIELDS = [
  'id',
  'sessionId',
  'role',
  'content',
  'toolCallId',
  'toolCalls',
  'toolName',
  'timestamp',
  'tokenCount',
  'finishReason',
  'reasoning',
  'reasoningContent',
  'reasoningDetails',
  'codexReasoningItems',
  'codexMessageItems',
  'platformMessageId',
  'compressedSummary',
  'active',
  'displayKind',
  'apiContent',
] as const satisfies readonly (keyof MessageRecord)[];

function selectList(table: SQLiteTable, fields: readonly string[], alias: string): string {
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  return fields
    .map((field) => {
      const column = columns[field];
      if (!column) throw new Error(`no column for ${field}`);
      return `${alias}."${column.name}"`;
    })
    .join(', ');
}

/** The session columns in `SESSION_FIELDS` order (table alias `s`), for raw statements. */
export const SESSION_VALUES = selectList(sessions, SESSION_FIELDS, 's');
/** The message columns in `MESSAGE_FIELDS` order (table alias `m`), for raw statements. */
export const MESSAGE_VALUES = selectList(messages, MESSAGE_FIELDS, 'm');

type Values = readonly unknown[];

export function sessionFromValues(v: Values): SessionRecord {
  return {
    id: v[0] as string,
    source: v[1] as string,
    profileName: v[2] as string | null,
    userId: v[3] as string | null,
    sessionKey: v[4] as string | null,
    chatId: v[5] as string | null,
    chatType: v[6] as string | null,
    threadId: v[7] as string | null,
    model: v[8] as string | null,
    modelConfig: v[9] as string | null,
    cwd: v[10] as string | null,
    parentSessionId: v[11] as string | null,
    parentEdge: v[12] as string | null,
    lineageRootId: v[13] as string,
    lineageActiveAt: v[14] as number | null,
    startedAt: v[15] as number,
    lastActivityAt: v[16] as number | null,
    lastReadAt: v[17] as number | null,
    endedAt: v[18] as number | null,
    endReason: v[19] as string | null,
    title: v[20] as string | null,
    titleSource: v[21] as string | null,
    archived: v[22] as number,
    autoArchived: v[23] as number,
    pinned: v[24] as number,
    hidden: v[25] as number,
    resumePending: v[26] as number,
    resumeReason: v[27] as string | null,
    messageCount: v[28] as number,
    toolCallCount: v[29] as number,
    inputTokens: v[30] as number,
    outputTokens: v[31] as number,
    apiCallCount: v[32] as number,
    cacheReadTokens: v[33] as number,
    cacheWriteTokens: v[34] as number,
    reasoningTokens: v[35] as number,
    estimatedCostUsd: v[36] as number,
    billingProvider: v[37] as string | null,
    billingBaseUrl: v[38] as string | null,
    systemPromptHash: v[39] as string | null,
    toolNames: v[40] as string | null,
  };
}

export function messageFromValues(v: Values): MessageRecord {
  return {
    id: v[0] as number,
    sessionId: v[1] as string,
    role: v[2] as string,
    content: v[3] as string | null,
    toolCallId: v[4] as string | null,
    toolCalls: v[5] as string | null,
    toolName: v[6] as string | null,
    timestamp: v[7] as number,
    tokenCount: v[8] as number | null,
    finishReason: v[9] as string | null,
    reasoning: v[10] as string | null,
    reasoningContent: v[11] as string | null,
    reasoningDetails: v[12] as string | null,
    codexReasoningItems: v[13] as string | null,
    codexMessageItems: v[14] as string | null,
    platformMessageId: v[15] as string | null,
    compressedSummary: v[16] as number,
    active: v[17] as number,
    displayKind: v[18] as string | null,
    apiContent: v[19] as string | null,
  };
}

/** Every session row `sql` selects (its columns must be `SESSION_VALUES`). */
export function readSessions(
  context: StoreContext,
  sql: string,
  ...parameters: unknown[]
): SessionRecord[] {
  const rows = context.rawStatement(sql).all(...parameters) as Values[];
  const records = new Array<SessionRecord>(rows.length);
  for (let index = 0; index < rows.length; index += 1) {
    records[index] = sessionFromValues(rows[index] as Values);
  }
  return records;
}

/** The first session row `sql` selects (its columns must be `SESSION_VALUES`). */
export function readSession(
  context: StoreContext,
  sql: string,
  ...parameters: unknown[]
): SessionRecord | undefined {
  const row = context.rawStatement(sql).get(...parameters) as Values | undefined;
  return row === undefined ? undefined : sessionFromValues(row);
}

/** Every message row `sql` selects (its columns must be `MESSAGE_VALUES`). */
export function readMessages(
  context: StoreContext,
  sql: string,
  ...parameters: unknown[]
): MessageRecord[] {
  const rows = context.rawStatement(sql).all(...parameters) as Values[];
  const records = new Array<MessageRecord>(rows.length);
  for (let index = 0; index < rows.length; index += 1) {
    records[index] = messageFromValues(rows[index] as Values);
  }
  return records;
}
