import { sql } from 'drizzle-orm';
import {
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

/**
 * The relational schema of state.db. drizzle-kit generates the SQL migrations in `drizzle/` from
 * this file; FTS5 objects live in a custom migration there (drizzle cannot express them).
 * Times are epoch seconds in REAL columns. The applied schema version is SQLite's `user_version`.
 */

export const stateMeta = sqliteTable('state_meta', {
  key: text('key').primaryKey(),
  value: text('value'),
});

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    source: text('source').notNull(),
    profileName: text('profile_name'),
    userId: text('user_id'),
    sessionKey: text('session_key'),
    chatId: text('chat_id'),
    chatType: text('chat_type'),
    threadId: text('thread_id'),
    model: text('model'),
    modelConfig: text('model_config'),
    cwd: text('cwd'),
    parentSessionId: text('parent_session_id'),
    /** Explicit edge type to the parent (compression, branch, reset, delegate, tool); see README. */
    parentEdge: text('parent_edge'),
    /** The root of this row's compression lineage (its own id when it is not a compression child). */
    lineageRootId: text('lineage_root_id').notNull(),
    /** On lineage roots: the newest activity anywhere in the compression chain (drives listings). */
    lineageActiveAt: real('lineage_active_at'),
    startedAt: real('started_at').notNull(),
    lastActivityAt: real('last_activity_at'),
    lastReadAt: real('last_read_at'),
    endedAt: real('ended_at'),
    endReason: text('end_reason'),
    title: text('title'),
    titleSource: text('title_source'),
    archived: integer('archived').notNull().default(0),
    autoArchived: integer('auto_archived').notNull().default(0),
    pinned: integer('pinned').notNull().default(0),
    hidden: integer('hidden').notNull().default(0),
    resumePending: integer('resume_pending').notNull().default(0),
    resumeReason: text('resume_reason'),
    messageCount: integer('message_count').notNull().default(0),
    toolCallCount: integer('tool_call_count').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    apiCallCount: integer('api_call_count').notNull().default(0),
    cacheReadTokens: integer('cache_read_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    reasoningTokens: integer('reasoning_tokens').notNull().default(0),
    estimatedCostUsd: real('estimated_cost_usd').notNull().default(0),
    billingProvider: text('billing_provider'),
    billingBaseUrl: text('billing_base_url'),
    /** sha256 of the system prompt, stored once in `system_prompts` (content-addressed). */
    systemPromptHash: text('system_prompt_hash'),
    /** JSON array of the tool names used in this session (sorted, unique). */
    toolNames: text('tool_names'),
  },
  (table) => [
    index('idx_sessions_source').on(table.source),
    // Partial: most sessions have no parent and no session key, and every lookup is by equality
    // (which implies IS NOT NULL), so a new root session writes neither index.
    index('idx_sessions_parent')
      .on(table.parentSessionId)
      .where(sql`${table.parentSessionId} IS NOT NULL`),
    index('idx_sessions_started').on(table.startedAt),
    index('idx_sessions_session_key')
      .on(table.sessionKey)
      .where(sql`${table.sessionKey} IS NOT NULL`),
    index('idx_sessions_lineage_root').on(table.lineageRootId),
    // The listing's order (newest lineage activity first) with every column its default filters
    // read, so rows the filters skip are judged from the index without touching the table.
    index('idx_sessions_listing').on(
      table.lineageActiveAt,
      table.id,
      table.archived,
      table.hidden,
      table.source,
      table.lineageRootId,
      table.parentEdge,
    ),
    // Compression children by lineage: the listing finds the chains of a whole page in one probe
    // per root (roots without compressions are not in this index at all).
    index('idx_sessions_compression_children')
      .on(table.lineageRootId)
      .where(sql`${table.parentEdge} = 'compression'`),
    index('idx_sessions_pinned').on(table.pinned).where(sql`${table.pinned} = 1`),
    index('idx_sessions_system_prompt').on(table.systemPromptHash),
    uniqueIndex('idx_sessions_title_unique').on(table.title).where(sql`${table.title} IS NOT NULL`),
  ],
);

export const messages = sqliteTable(
  'messages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    content: text('content'),
    toolCallId: text('tool_call_id'),
    toolCalls: text('tool_calls'),
    toolName: text('tool_name'),
    timestamp: real('timestamp').notNull(),
    tokenCount: integer('token_count'),
    finishReason: text('finish_reason'),
    reasoning: text('reasoning'),
    reasoningContent: text('reasoning_content'),
    reasoningDetails: text('reasoning_details'),
    codexReasoningItems: text('codex_reasoning_items'),
    codexMessageItems: text('codex_message_items'),
    platformMessageId: text('platform_message_id'),
    compressedSummary: integer('_compressed_summary').notNull().default(0),
    active: integer('active').notNull().default(1),
    displayKind: text('display_kind'),
    /** The text actually sent to the model when it differs from `content`. */
    apiContent: text('api_content'),
  },
  // One index: its entries are (session_id, id), so a page in id order — active rows, or every
  // row — is a range scan in either direction, and each append touches one index page, not two.
  (table) => [index('idx_messages_session_id').on(table.sessionId)],
);

export const deliveryObligations = sqliteTable(
  'delivery_obligations',
  {
    obligationId: text('obligation_id').primaryKey(),
    sessionKey: text('session_key').notNull(),
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    threadId: text('thread_id'),
    content: text('content').notNull(),
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    needsMarker: integer('needs_marker').notNull().default(0),
    ownerPid: integer('owner_pid'),
    ownerStartedAt: text('owner_started_at'),
    deliveryFence: integer('delivery_fence').notNull().default(0),
    lastError: text('last_error'),
    notBefore: real('not_before'),
    createdAt: real('created_at').notNull(),
    updatedAt: real('updated_at').notNull(),
  },
  (table) => [index('idx_delivery_obligations_state').on(table.state, table.platform)],
);

export const asyncDelegations = sqliteTable(
  'async_delegations',
  {
    delegationId: text('delegation_id').primaryKey(),
    sessionKey: text('session_key'),
    originUiSessionId: text('origin_ui_session_id'),
    parentSessionId: text('parent_session_id'),
    state: text('state').notNull().default('running'),
    deliveryState: text('delivery_state').notNull().default('pending'),
    ownerPid: integer('owner_pid').notNull(),
    ownerStartedAt: text('owner_started_at'),
    taskJson: text('task_json').notNull(),
    resultJson: text('result_json'),
    error: text('error'),
    dispatchedAt: real('dispatched_at').notNull(),
    completedAt: real('completed_at'),
    deliveryAttempts: integer('delivery_attempts').notNull().default(0),
    claimExpiresAt: real('claim_expires_at'),
    notBefore: real('not_before'),
    settledAt: real('settled_at'),
  },
  (table) => [index('idx_async_delegations_state').on(table.state, table.deliveryState)],
);

/**
 * The compression lease: one holder per session may compress it (TTL, dead-holder takeover).
 * A WITHOUT ROWID table (migration 0007; drizzle cannot say so): a regenerated rebuild of it must
 * keep that, as must `sessionTurnLeases`'s. No expiry index on either: a lease is only ever read
 * by its key.
 */
export const compressionLocks = sqliteTable('compression_locks', {
  sessionId: text('session_id').primaryKey(),
  holder: text('holder').notNull(),
  acquiredAt: real('acquired_at').notNull(),
  expiresAt: real('expires_at').notNull(),
});

/** System prompts, stored once per distinct text (sessions refer to them by hash). */
export const systemPrompts = sqliteTable('system_prompts', {
  hash: text('hash').primaryKey(),
  prompt: text('prompt').notNull(),
});

/** One running turn per conversation: keyed by the compression lineage root (WITHOUT ROWID, 0007). */
export const sessionTurnLeases = sqliteTable('session_turn_leases', {
  conversationId: text('conversation_id').primaryKey(),
  holder: text('holder').notNull(),
  acquiredAt: real('acquired_at').notNull(),
  expiresAt: real('expires_at').notNull(),
});

/** A fence per messaging peer: bumped whenever one of its sessions is ended. */
export const conversationGenerations = sqliteTable(
  'conversation_generations',
  {
    source: text('source').notNull(),
    sessionKey: text('session_key').notNull(),
    generation: integer('generation').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.source, table.sessionKey] })],
);

/**
 * Stored `/v1/responses` (the API server's `store: true`), so `previous_response_id` chains and
 * `GET|DELETE /v1/responses/:id` survive a restart. The conversation itself lives in `sessions` /
 * `messages`; a row maps a response id to where its turn ended. Pruned to the
 * `MAX_STORED_RESPONSES` most recently used.
 */
export const storedResponses = sqliteTable(
  'stored_responses',
  {
    responseId: text('response_id').primaryKey(),
    /** The session the response's turn ended in (its compression tip then). */
    sessionId: text('session_id').notNull(),
    /** The last message stored by that turn: a chained request continues from here. */
    lastMessageId: integer('last_message_id'),
    previousResponseId: text('previous_response_id'),
    /** The response object as JSON text. */
    body: text('body').notNull(),
    createdAt: real('created_at').notNull(),
    /** Stored or last used (chained from), epoch seconds. */
    usedAt: real('used_at').notNull(),
    /** Recency rank (one above the highest when stored or used): the lowest are pruned first. */
    usedSeq: integer('used_seq').notNull(),
  },
  (table) => [index('idx_stored_responses_used').on(table.usedSeq)],
);

export type SessionRow = typeof sessions.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type DeliveryObligationRow = typeof deliveryObligations.$inferSelect;
export type AsyncDelegationRow = typeof asyncDelegations.$inferSelect;
export type StoredResponseRow = typeof storedResponses.$inferSelect;
