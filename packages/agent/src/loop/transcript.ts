import {
  MESSAGES_MAX_LIMIT,
  type MessageInput,
  type MessageRecord,
  type SessionStore,
} from '@hermes/session-store';
import { TOOL_ERROR_MESSAGES } from '../errors.js';
import type { ChatMessage, ToolCall } from '../model/chat-message.js';

function parseJson<T>(text: string | null): T | undefined {
  if (text === null || text === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Every active message of a session, oldest first (paged through the store's limit). */
export function loadMessages(store: SessionStore, sessionId: string): MessageRecord[] {
  const rows: MessageRecord[] = [];
  for (;;) {
    const page = store.getMessages(sessionId, {
      limit: MESSAGES_MAX_LIMIT,
      ...(rows.length > 0 ? { afterId: (rows[rows.length - 1] as MessageRecord).id } : {}),
    });
    rows.push(...page);
    if (page.length < MESSAGES_MAX_LIMIT) return rows;
  }
}

/**
 * Stored rows → the conversation the model sees. The transcript is repaired on the way: an
 * assistant tool call without a stored result (the process died, or the turn was stopped,
 * mid-call) gets a synthetic error result, and a tool result without its call is dropped, so a
 * transcript cut at any point is still a valid request.
 */
export function rowsToMessages(rows: readonly MessageRecord[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // Calls of the latest assistant message that have no result yet, in call order.
  let open: string[] = [];
  const closeOpenCalls = () => {
    for (const id of open)
      messages.push({
        role: 'tool',
        tool_call_id: id,
        content: JSON.stringify({ error: TOOL_ERROR_MESSAGES.noResultRecorded }),
      });
    open = [];
  };
  for (const row of rows) {
    const content = row.apiContent ?? row.content ?? '';
    if (row.role === 'tool') {
      if (!row.toolCallId || !open.includes(row.toolCallId)) continue;
      open = open.filter((id) => id !== row.toolCallId);
      messages.push({
        role: 'tool',
        tool_call_id: row.toolCallId,
        content,
        ...(row.toolName ? { tool_name: row.toolName } : {}),
      });
      continue;
    }
    closeOpenCalls();
    if (row.role === 'assistant') {
      const toolCalls = parseJson<ToolCall[]>(row.toolCalls) ?? [];
      const reasoningItems = parseJson<unknown[]>(row.codexReasoningItems);
      messages.push({
        role: 'assistant',
        content: content === '' && toolCalls.length > 0 ? null : content,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        ...(row.reasoning ? { reasoning: row.reasoning } : {}),
        ...(reasoningItems && reasoningItems.length > 0
          ? { codex_reasoning_items: reasoningItems }
          : {}),
      });
      open = toolCalls.map((call) => call.id);
    } else if (row.role === 'user' || row.role === 'system') {
      messages.push({ role: row.role, content });
    }
  }
  closeOpenCalls();
  return messages;
}

/** A stored row, ready to be copied into another session (a compression child's retained tail). */
export function rowToMessageInput(row: MessageRecord): MessageInput {
  return {
    role: row.role as MessageInput['role'],
    content: row.content,
    apiContent: row.apiContent,
    toolCalls: parseJson(row.toolCalls) ?? null,
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    reasoning: row.reasoning,
    finishReason: row.finishReason,
    codexReasoningItems: parseJson(row.codexReasoningItems) ?? null,
    displayKind: row.displayKind,
    timestamp: row.timestamp,
  };
}
