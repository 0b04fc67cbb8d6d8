/**
 * The row shapes the store returns, written out so the published types need nothing from
 * drizzle-orm (whose own declarations do not type-check without `skipLibCheck`).
 * `records.test.ts` proves at compile time that each one matches the drizzle schema exactly.
 * Times are epoch seconds; flags are 0 / 1; JSON-valued columns come back as JSON text.
 */

/** One conversation segment (`sessions` row). */
export interface SessionRecord {
  id: string;
  source: string;
  profileName: string | null;
  userId: string | null;
  /** The messaging peer's key (gateway sessions). */
  sessionKey: string | null;
  chatId: string | null;
  chatType: string | null;
  threadId: string | null;
  model: string | null;
  /** JSON text. */
  modelConfig: string | null;
  cwd: string | null;
  parentSessionId: string | null;
  /** `compression`, `branch`, `reset`, `delegate` or `tool` (null for a root). */
  parentEdge: string | null;
  lineageRootId: string;
  lineageActiveAt: number | null;
  startedAt: number;
  lastActivityAt: number | null;
  lastReadAt: number | null;
  endedAt: number | null;
  endReason: string | null;
  title: string | null;
  titleSource: string | null;
  archived: number;
  autoArchived: number;
  pinned: number;
  hidden: number;
  resumePending: number;
  resumeReason: string | null;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
  apiCallCount: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd: number;
  billingProvider: string | null;
  billingBaseUrl: string | null;
  /** sha256 of the system prompt (`getSessionSystemPrompt` reads the text). */
  systemPromptHash: string | null;
  /** JSON text: the sorted list of tools used. */
  toolNames: string | null;
}

/** One stored message (`messages` row). */
export interface MessageRecord {
  /** Monotonic; the paging cursor. */
  id: number;
  sessionId: string;
  role: string;
  content: string | null;
  toolCallId: string | null;
  /** JSON text. */
  toolCalls: string | null;
  toolName: string | null;
  timestamp: number;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  reasoningContent: string | null;
  /** JSON text. */
  reasoningDetails: string | null;
  /** JSON text. */
  codexReasoningItems: string | null;
  /** JSON text. */
  codexMessageItems: string | null;
  platformMessageId: string | null;
  /** 1 on a compaction carrier (handoff summary). */
  compressedSummary: number;
  /** 0 once superseded (rewind / compaction). */
  active: number;
  displayKind: string | null;
  /** What was sent to the model when it differs from `content`. */
  apiContent: string | null;
}

/** One reply that must reach a chat (`delivery_obligations` row). */
export interface DeliveryObligation {
  obligationId: string;
  sessionKey: string;
  platform: string;
  chatId: string;
  threadId: string | null;
  content: string;
  state: string;
  attempts: number;
  needsMarker: number;
  ownerPid: number | null;
  ownerStartedAt: string | null;
  deliveryFence: number;
  lastError: string | null;
  notBefore: number | null;
  createdAt: number;
  updatedAt: number;
}

/** One async delegation (`async_delegations` row). */
export interface AsyncDelegationRecord {
  delegationId: string;
  sessionKey: string | null;
  originUiSessionId: string | null;
  parentSessionId: string | null;
  state: string;
  deliveryState: string;
  ownerPid: number;
  ownerStartedAt: string | null;
  /** JSON text. */
  taskJson: string;
  /** JSON text. */
  resultJson: string | null;
  error: string | null;
  dispatchedAt: number;
  completedAt: number | null;
  deliveryAttempts: number;
  claimExpiresAt: number | null;
  notBefore: number | null;
  settledAt: number | null;
}
