import type { AgentErrorCode } from './errors.js';
import type { ToolCall, Usage } from './model/chat-message.js';

/** Every event names its run and the session it is writing to (a compression child after a hand-off). */
interface EventBase {
  readonly runId: string;
  readonly sessionId: string;
}

export type RunStartedEvent = EventBase & {
  readonly type: 'run.started';
  readonly provider: string;
  readonly model: string;
  readonly depth: number;
  /**
   * The session's newest message id before this turn's own rows (its user message first; 0 when
   * there was none), read in the transaction that took the turn lease: the turn's rows are the
   * session's rows above it, until a `session.compressed` moves the turn to a child. A mark read
   * before the turn could also count rows another process stored before the lease was taken. A
   * new conversation's earlier messages (`newSession.history`) are below it.
   */
  readonly previousMessageId: number;
};
export type MessageDeltaEvent = EventBase & {
  readonly type: 'message.delta';
  readonly text: string;
};
export type ReasoningDeltaEvent = EventBase & {
  readonly type: 'reasoning.delta';
  readonly text: string;
};
export type ToolStartedEvent = EventBase & {
  readonly type: 'tool.started';
  readonly callId: string;
  readonly name: string;
  /** The raw JSON arguments the model sent. */
  readonly arguments: string;
};
export type ToolCompletedEvent = EventBase & {
  readonly type: 'tool.completed';
  readonly callId: string;
  readonly name: string;
  /** What the model receives as the tool result. */
  readonly result: string;
  readonly durationMs: number;
};
export type ToolFailedEvent = EventBase & {
  readonly type: 'tool.failed';
  readonly callId: string;
  readonly name: string;
  readonly error: string;
  readonly durationMs: number;
};
export type MessageCompletedEvent = EventBase & {
  readonly type: 'message.completed';
  /** The stored row id of the assistant message. */
  readonly messageId: number;
  readonly content: string;
  readonly reasoning: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | null;
};
export type RunCompletedEvent = EventBase & {
  readonly type: 'run.completed';
  readonly finalResponse: string;
  /** `max_iterations` when the budget ran out (the grace call's answer is the final response). */
  readonly exitReason: 'completed' | 'max_iterations';
  readonly usage: Usage;
};
export type RunFailedEvent = EventBase & {
  readonly type: 'run.failed';
  readonly error: { readonly code: AgentErrorCode | 'internal_error'; readonly message: string };
  readonly usage: Usage;
};
export type RunInterruptedEvent = EventBase & {
  readonly type: 'run.interrupted';
  /** What the model had said when the turn stopped (stored too). */
  readonly partialResponse: string;
  readonly usage: Usage;
};
export type ModelRetryEvent = EventBase & {
  readonly type: 'model.retry';
  readonly provider: string;
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: string;
};
export type ModelFallbackEvent = EventBase & {
  readonly type: 'model.fallback';
  readonly from: string;
  readonly to: string;
  readonly reason: string;
};
export type SessionCompressedEvent = EventBase & {
  readonly type: 'session.compressed';
  readonly fromSessionId: string;
  readonly toSessionId: string;
  readonly summarizedMessages: number;
  readonly retainedMessages: number;
};
export type WarningEvent = EventBase & {
  readonly type: 'warning';
  readonly code:
    | 'compression_failed'
    | 'fallback_skipped'
    | 'fallback_without_key'
    | 'usage_not_recorded'
    | 'tool_results_not_recorded';
  readonly message: string;
};

export type SubagentStartedEvent = EventBase & {
  readonly type: 'subagent.started';
  readonly delegationId: string;
  readonly subagentId: string;
  readonly taskIndex: number;
  readonly taskCount: number;
  readonly goal: string;
  readonly model: string;
};
export type SubagentProgressEvent = EventBase & {
  readonly type: 'subagent.progress';
  readonly delegationId: string;
  readonly subagentId: string;
  /** `delegate_task: subagent running <tool> (iteration i/max)` */
  readonly text: string;
};
export type SubagentCompletedEvent = EventBase & {
  readonly type: 'subagent.completed';
  readonly delegationId: string;
  readonly subagentId: string;
  readonly taskIndex: number;
  readonly status: string;
  /** `✓|✗ [set n · i/N] <goal> (Ns) — <reason>` */
  readonly line: string;
};

/**
 * The one event stream every surface renders (gateway SSE, CLI, TUI bridge). A run emits
 * `run.started`, then deltas, tool and message events, and ends with exactly one of
 * `run.completed`, `run.failed` or `run.interrupted`.
 */
export type AgentEvent =
  | RunStartedEvent
  | MessageDeltaEvent
  | ReasoningDeltaEvent
  | ToolStartedEvent
  | ToolCompletedEvent
  | ToolFailedEvent
  | MessageCompletedEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunInterruptedEvent
  | ModelRetryEvent
  | ModelFallbackEvent
  | SessionCompressedEvent
  | WarningEvent
  | SubagentStartedEvent
  | SubagentProgressEvent
  | SubagentCompletedEvent;

export type AgentEventType = AgentEvent['type'];

export const AGENT_EVENT_TYPES = [
  'run.started',
  'message.delta',
  'reasoning.delta',
  'tool.started',
  'tool.completed',
  'tool.failed',
  'message.completed',
  'run.completed',
  'run.failed',
  'run.interrupted',
  'model.retry',
  'model.fallback',
  'session.compressed',
  'warning',
  'subagent.started',
  'subagent.progress',
  'subagent.completed',
] as const satisfies readonly AgentEventType[];

/** The events that end a run; exactly one is emitted per `runTurn`. */
export const TERMINAL_EVENT_TYPES = ['run.completed', 'run.failed', 'run.interrupted'] as const;
