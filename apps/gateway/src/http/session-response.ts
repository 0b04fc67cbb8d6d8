import type { MessageInput, MessageRecord, SessionRecord } from '@hermes/session-store';

type SessionLike = SessionRecord & {
  readonly lastActive?: number;
  readonly preview?: string | null;
};

/**
 * The API view of a session: only safe keys — never the system prompt or the model config
 * themselves, only whether they exist.
 */
export function sessionResponse(session: SessionLike) {
  return {
    id: session.id,
    source: session.source,
    user_id: session.userId,
    model: session.model,
    title: session.title,
    started_at: session.startedAt,
    ended_at: session.endedAt,
    end_reason: session.endReason,
    message_count: session.messageCount,
    tool_call_count: session.toolCallCount,
    input_tokens: session.inputTokens,
    output_tokens: session.outputTokens,
    cache_read_tokens: session.cacheReadTokens,
    cache_write_tokens: session.cacheWriteTokens,
    reasoning_tokens: session.reasoningTokens,
    estimated_cost_usd: session.estimatedCostUsd,
    actual_cost_usd: null,
    api_call_count: session.apiCallCount,
    parent_session_id: session.parentSessionId,
    last_active: session.lastActive ?? session.lastActivityAt ?? session.startedAt,
    preview: session.preview ?? null,
    _lineage_root_id: session.lineageRootId,
    pinned: session.pinned === 1,
    archived: session.archived === 1,
    hidden: session.hidden === 1,
    has_system_prompt: session.systemPromptHash !== null,
    has_model_config: session.modelConfig !== null,
  };
}

function parseJsonText(value: string | null): unknown {
  if (value === null) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** A stored row as the input that stores it again (fork copies a transcript this way). */
export function messageInputFromRecord(row: MessageRecord): MessageInput {
  return {
    role: row.role as MessageInput['role'],
    content: row.content,
    timestamp: row.timestamp,
    ...(row.toolCalls !== null ? { toolCalls: parseJsonText(row.toolCalls) } : {}),
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    tokenCount: row.tokenCount,
    finishReason: row.finishReason,
    reasoning: row.reasoning,
    reasoningContent: row.reasoningContent,
    ...(row.reasoningDetails !== null
      ? { reasoningDetails: parseJsonText(row.reasoningDetails) }
      : {}),
    ...(row.codexReasoningItems !== null
      ? { codexReasoningItems: parseJsonText(row.codexReasoningItems) }
      : {}),
    ...(row.codexMessageItems !== null
      ? { codexMessageItems: parseJsonText(row.codexMessageItems) }
      : {}),
    platformMessageId: row.platformMessageId,
    compressedSummary: row.compressedSummary === 1,
    displayKind: row.displayKind,
    apiContent: row.apiContent,
  };
}
