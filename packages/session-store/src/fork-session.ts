import { END_REASON } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { MESSAGES_MAX_LIMIT } from './limits.js';
import { insertMessages, type MessageInput, type MessageRecord } from './messages.js';
import type { SessionRecord } from './records.js';
import type { SessionStore } from './session-store.js';
import { type CreateSessionInput, endSession, insertSession } from './sessions.js';
import type { StoreContext } from './store-context.js';
import { getSessionSystemPrompt, setSessionSystemPrompt } from './usage.js';

/** Every active message of one stored session, oldest first (paged through the store's limit). */
export function readAllMessages(store: SessionStore, sessionId: string): MessageRecord[] {
  const rows: MessageRecord[] = [];
  let afterId = 0;
  for (;;) {
    const page = store.getMessages(sessionId, { afterId, limit: MESSAGES_MAX_LIMIT });
    rows.push(...page);
    const last = page.at(-1);
    if (page.length < MESSAGES_MAX_LIMIT || !last) return rows;
    afterId = last.id;
  }
}

function parseStoredJson(value: string | null): unknown {
  if (value === null) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * A stored row as the input that stores it again, every field kept (tool plumbing, reasoning,
 * provider items, the compaction flag, display kind, the text sent to the model): a copied
 * transcript replays to the model exactly as the original did.
 */
export function messageInputFromRecord(row: MessageRecord): MessageInput {
  return {
    role: row.role as MessageInput['role'],
    content: row.content,
    timestamp: row.timestamp,
    ...(row.toolCalls !== null ? { toolCalls: parseStoredJson(row.toolCalls) } : {}),
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    tokenCount: row.tokenCount,
    finishReason: row.finishReason,
    reasoning: row.reasoning,
    reasoningContent: row.reasoningContent,
    ...(row.reasoningDetails !== null
      ? { reasoningDetails: parseStoredJson(row.reasoningDetails) }
      : {}),
    ...(row.codexReasoningItems !== null
      ? { codexReasoningItems: parseStoredJson(row.codexReasoningItems) }
      : {}),
    ...(row.codexMessageItems !== null
      ? { codexMessageItems: parseStoredJson(row.codexMessageItems) }
      : {}),
    platformMessageId: row.platformMessageId,
    compressedSummary: row.compressedSummary === 1,
    displayKind: row.displayKind,
    apiContent: row.apiContent,
  };
}

export interface ForkSessionInput {
  /** The session to branch from (its own rows are copied; pass its compression tip for the live end). */
  readonly sessionId: string;
  /** The child's id (default: a new session id). */
  readonly childId?: string;
  /** Generates the child's id when `childId` is not given, drawn again if taken (`createSession`'s `newId`). */
  readonly newChildId?: () => string;
  readonly title?: string | null;
  /** The rows to copy (default: every active message of `sessionId`); e.g. a prefix up to one message. */
  readonly rows?: readonly MessageRecord[];
  /** End the parent with `branched` once the child is complete (default true). */
  readonly endParent?: boolean;
}

export interface ForkSessionResult {
  readonly child: SessionRecord;
  /** How many messages were copied into the child. */
  readonly copied: number;
}

/**
 * Branches a conversation in one write transaction: the child row (edge `branch`,
 * `_branched_from` in its model config, the parent's source, profile, user, model and working
 * directory), the parent's system prompt and transcript copied into it, and the parent ended
 * `branched`. All or nothing, even for a process killed midway: no reader — in this process or
 * another — ever sees a child with part of its transcript. The write lock is held for the whole
 * copy (about 0.3 s for 10 000 messages, see the README).
 */
export async function forkSession(
  store: SessionStore,
  input: ForkSessionInput,
): Promise<ForkSessionResult> {
  const parent = store.getSession(input.sessionId);
  if (!parent) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(input.sessionId),
    });
  }
  const rows = input.rows ?? readAllMessages(store, parent.id);
  const child = await store.commitFork({
    parentId: parent.id,
    child: {
      ...(input.childId !== undefined ? { id: input.childId } : {}),
      ...(input.childId === undefined && input.newChildId ? { newId: input.newChildId } : {}),
      source: parent.source,
      title: input.title ?? null,
      profileName: parent.profileName,
      userId: parent.userId,
      parentSessionId: parent.id,
      parentEdge: 'branch',
      model: parent.model,
      cwd: parent.cwd,
      modelConfig: { _branched_from: parent.id },
    },
    messages: rows.map(messageInputFromRecord),
    endParent: input.endParent !== false,
  });
  return { child, copied: rows.length };
}

/** @internal What `SessionStore.commitFork` writes, in one transaction. */
export interface ForkCommit {
  readonly parentId: string;
  readonly child: CreateSessionInput;
  readonly messages: readonly MessageInput[];
  readonly endParent: boolean;
}

/** Call inside one write transaction; returns the child's id. */
export function writeFork(context: StoreContext, fork: ForkCommit): string {
  const childId = insertSession(context, fork.child);
  const prompt = getSessionSystemPrompt(context, fork.parentId);
  if (prompt !== null) setSessionSystemPrompt(context, childId, prompt);
  insertMessages(context, childId, fork.messages);
  if (fork.endParent) endSession(context, fork.parentId, END_REASON.branched);
  return childId;
}
