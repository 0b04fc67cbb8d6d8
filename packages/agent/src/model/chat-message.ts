/** A tool call as the model sent it (OpenAI chat shape). */
export interface ToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * The conversation as the agent holds it: OpenAI chat messages. Keys starting with `_` and the
 * reference's internal keys may ride along (e.g. replayed Responses reasoning items); they are
 * stripped by `sanitizeMessages` before anything is sent.
 */
export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly tool_calls?: readonly ToolCall[];
      /** Reasoning text the provider returned (stored, never sent back). */
      readonly reasoning?: string;
      /** Encrypted Responses reasoning items, replayed on the `codex_responses` path. */
      readonly codex_reasoning_items?: readonly unknown[];
    }
  | {
      readonly role: 'tool';
      readonly tool_call_id: string;
      readonly content: string;
      readonly tool_name?: string;
    };

/** Token usage of one or more model calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  toolCalls: number;
}

export function emptyUsage(): Usage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    apiCalls: 0,
    toolCalls: 0,
  };
}

export function addUsage(total: Usage, part: Partial<Usage>): void {
  total.inputTokens += part.inputTokens ?? 0;
  total.outputTokens += part.outputTokens ?? 0;
  total.cacheReadTokens += part.cacheReadTokens ?? 0;
  total.cacheWriteTokens += part.cacheWriteTokens ?? 0;
  total.reasoningTokens += part.reasoningTokens ?? 0;
  total.apiCalls += part.apiCalls ?? 0;
  total.toolCalls += part.toolCalls ?? 0;
}

/** What one model call produced. */
export interface ModelTurn {
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: Partial<Usage>;
  /** Responses API reasoning items to replay on the next call. */
  reasoningItems: unknown[];
}

export function emptyModelTurn(): ModelTurn {
  return {
    content: '',
    reasoning: '',
    toolCalls: [],
    finishReason: null,
    usage: {},
    reasoningItems: [],
  };
}
