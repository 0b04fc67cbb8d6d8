/**
 * Client projection of stored messages for the API and Desktop: hidden rows become content-free
 * placeholders (ids stay stable for paging), compaction carriers never leak their internals.
 */

/** Legacy and current prefixes of a compaction summary's text. */
export const COMPACTION_SUMMARY_PREFIXES = [
  '[CONTEXT SUMMARY]:',
  '[CONTEXT COMPACTION — REFERENCE ONLY]',
] as const;

/** Fields a compaction carrier never exposes. */
export const COMPACTION_INTERNAL_FIELDS = [
  'tool_calls',
  'finish_reason',
  'reasoning',
  'reasoning_content',
  'reasoning_details',
  'codex_reasoning_items',
  'codex_message_items',
] as const;

export const DISPLAY_KIND = { hidden: 'hidden', steer: 'steer' } as const;
/** Display kinds shown as placeholders, like hidden rows. */
export const PLACEHOLDER_DISPLAY_KINDS = ['hidden', 'diagnostic', 'notification'] as const;

/** A stored message (as returned by `getMessages`) or an agent-produced one. */
export interface ProjectableMessage {
  readonly id?: number | null;
  readonly sessionId?: string | null;
  readonly role: string;
  readonly content?: string | null;
  readonly toolCallId?: string | null;
  readonly toolCalls?: unknown;
  readonly toolName?: string | null;
  readonly timestamp?: number | null;
  readonly tokenCount?: number | null;
  readonly finishReason?: string | null;
  readonly reasoning?: string | null;
  readonly reasoningContent?: string | null;
  readonly reasoningDetails?: unknown;
  readonly codexReasoningItems?: unknown;
  readonly codexMessageItems?: unknown;
  readonly platformMessageId?: string | null;
  /** 1/true on a compaction carrier. */
  readonly compressedSummary?: number | boolean | null;
  readonly displayKind?: string | null;
}

/** The wire shape (snake_case, as the HTTP API sends it). */
export interface MessageResponse {
  id: number | null;
  session_id: string | null;
  role: string;
  content: string;
  timestamp: number | null;
  display_kind: string | null;
  platform_message_id?: string | null;
  tool_call_id?: string | null;
  tool_calls?: unknown;
  tool_name?: string | null;
  token_count?: number | null;
  finish_reason?: string | null;
  reasoning?: string | null;
  reasoning_content?: string | null;
  reasoning_details?: unknown;
  codex_reasoning_items?: unknown;
  codex_message_items?: unknown;
}

export type MessageClass = 'ordinary' | 'placeholder' | 'pure_carrier' | 'merged_carrier';

function startsWithSummaryPrefix(content: string): boolean {
  const trimmed = content.trimStart();
  return COMPACTION_SUMMARY_PREFIXES.some((prefix) => trimmed.startsWith(prefix));
}

/** Classifies a row once. Carriers are recognised by the flag; legacy rows by their prefix. */
export function classifyMessage(message: ProjectableMessage): MessageClass {
  const kind = message.displayKind ?? null;
  if (kind !== null && (PLACEHOLDER_DISPLAY_KINDS as readonly string[]).includes(kind))
    return 'placeholder';
  const content = message.content ?? '';
  const flagged = message.compressedSummary === true || message.compressedSummary === 1;
  if (flagged)
    return startsWithSummaryPrefix(content) || content.trim() === ''
      ? 'pure_carrier'
      : 'merged_carrier';
  return startsWithSummaryPrefix(content) ? 'pure_carrier' : 'ordinary';
}

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function placeholder(message: ProjectableMessage, displayKind: string): MessageResponse {
  return {
    id: message.id ?? null,
    session_id: message.sessionId ?? null,
    role: message.role,
    content: '',
    timestamp: message.timestamp ?? null,
    display_kind: displayKind,
    platform_message_id: message.platformMessageId ?? null,
  };
}

function projectClassified(message: ProjectableMessage, kind: MessageClass): MessageResponse {
  if (kind === 'placeholder')
    return placeholder(message, message.displayKind ?? DISPLAY_KIND.hidden);
  if (kind === 'pure_carrier') return placeholder(message, DISPLAY_KIND.hidden);
  const base: MessageResponse = {
    id: message.id ?? null,
    session_id: message.sessionId ?? null,
    role: message.role,
    content: message.content ?? '',
    timestamp: message.timestamp ?? null,
    display_kind: message.displayKind ?? null,
    platform_message_id: message.platformMessageId ?? null,
    tool_call_id: message.toolCallId ?? null,
    tool_name: message.toolName ?? null,
    token_count: message.tokenCount ?? null,
  };
  if (kind === 'merged_carrier') {
    // The real content stays; the summary's internals and any non-steer display kind go.
    base.display_kind = message.displayKind === DISPLAY_KIND.steer ? DISPLAY_KIND.steer : null;
    return base;
  }
  base.tool_calls = parseJson(message.toolCalls);
  base.finish_reason = message.finishReason ?? null;
  base.reasoning = message.reasoning ?? null;
  base.reasoning_content = message.reasoningContent ?? null;
  return base;
}

/** The API/Desktop view of one message. */
export function messageResponse(message: ProjectableMessage): MessageResponse {
  return projectClassified(message, classifyMessage(message));
}

export interface TurnTranscriptInput {
  /** The agent result's full message list (history + this turn). */
  readonly messages: readonly ProjectableMessage[];
  /** Messages that preceded this turn. */
  readonly priorHistoryLength: number;
  /** Whether the user prompt was appended after the prior history. */
  readonly promptAppended: boolean;
}

/** The `messages` of `run.completed`: this turn's assistant and tool rows, hidden ones dropped. */
export function turnTranscriptMessages(input: TurnTranscriptInput): MessageResponse[] {
  const start = Math.max(0, input.priorHistoryLength + (input.promptAppended ? 1 : 0));
  const projected: MessageResponse[] = [];
  for (const message of input.messages.slice(start)) {
    if (message.role !== 'assistant' && message.role !== 'tool') continue;
    const response = projectClassified(message, classifyMessage(message));
    if (response.display_kind !== DISPLAY_KIND.hidden) projected.push(response);
  }
  return projected;
}
