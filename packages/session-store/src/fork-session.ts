import { END_REASON } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { MESSAGES_MAX_LIMIT } from './limits.js';
import type { MessageInput, MessageRecord } from './messages.js';
import type { SessionRecord } from './records.js';
import type { SessionStore } from './session-store.js';

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
 * Branches a conversation: the child row first (edge `branch`, `_branched_from` in its model
 * config, the parent's source, profile, user, model and working directory), then the parent's
 * system prompt and transcript copied into it, then the parent ended `branched`. A failure while
 * copying removes the half-made child, so a fork is all or nothing.
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
  const child = await store.createSession({
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
  });
  try {
    const prompt = store.getSessionSystemPrompt(parent.id);
    if (prompt !== null) await store.setSessionSystemPrompt(child.id, prompt);
    for (let start = 0; start < rows.length; start += MESSAGES_MAX_LIMIT) {
      await store.appendMessages(
        child.id,
        rows.slice(start, start + MESSAGES_MAX_LIMIT).map(messageInputFromRecord),
      );
    }
  } catch (error) {
    await store.deleteSession(child.id).catch(() => {});
    throw error;
  }
  if (input.endParent !== false) await store.endSession(parent.id, END_REASON.branched);
  return { child: store.getSession(child.id) ?? child, copied: rows.length };
}
