import type { SessionRecord, SessionStore } from '@hermes/session-store';

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

/** One stored session's view, with the preview the listing shows for it. */
export function storedSessionResponse(store: SessionStore, session: SessionRecord) {
  return sessionResponse({ ...session, preview: store.getSessionPreview(session.id) });
}
