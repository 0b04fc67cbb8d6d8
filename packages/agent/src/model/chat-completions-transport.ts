import type OpenAI from 'openai';
import type { ChatMessage, ModelTurn, ToolCall, Usage } from './chat-message.js';
import type { FunctionSchema } from './function-schema.js';
import type { ModelRoute } from './model-route.js';
import { applyRequestOverrides } from './request-overrides.js';
import { sanitizeMessagesForWire } from './sanitize-messages.js';

export interface TransportRequest {
  readonly route: ModelRoute;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly FunctionSchema[];
  readonly stream: boolean;
  readonly sessionId?: string;
}

export interface TransportCallbacks {
  readonly signal?: AbortSignal;
  readonly onTextDelta?: (text: string) => void;
  readonly onReasoningDelta?: (text: string) => void;
}

/** Models whose first system message is sent as a `developer` message. */
function usesDeveloperRole(model: string): boolean {
  return /^(openai\/)?(gpt-5|codex)/i.test(model);
}

function usesMaxCompletionTokens(model: string): boolean {
  return /^(openai\/)?(gpt-5|o\d)/i.test(model);
}

/**
 * The wire form of a tool list and its JSON, kept per list: an agent offers the same array call
 * after call, and its schemas are most of a short conversation's request bytes.
 */
const wireTools = new WeakMap<readonly FunctionSchema[], { tools: unknown[]; json: string }>();

function wireToolsOf(tools: readonly FunctionSchema[]): { tools: unknown[]; json: string } {
  let wire = wireTools.get(tools);
  if (!wire) {
    const mapped = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    wire = { tools: mapped, json: JSON.stringify(mapped) };
    wireTools.set(tools, wire);
  }
  return wire;
}

/** The `/chat/completions` request body for a turn (§7.3). */
export function buildChatCompletionsBody(request: TransportRequest): Record<string, unknown> {
  const { route } = request;
  const messages = sanitizeMessagesForWire(request.messages, route.model);
  if (usesDeveloperRole(route.model) && messages[0]?.role === 'system')
    messages[0] = { ...messages[0], role: 'developer' };
  const body: Record<string, unknown> = { model: route.model, messages };
  if (request.tools.length > 0) body.tools = wireToolsOf(request.tools).tools;
  if (route.maxTokens !== undefined)
    body[usesMaxCompletionTokens(route.model) ? 'max_completion_tokens' : 'max_tokens'] =
      route.maxTokens;
  if (route.reasoningEffort && route.reasoningEffort !== 'none')
    body.reasoning_effort = route.reasoningEffort;
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return applyRequestOverrides(body, route.requestOverrides);
}

/**
 * `body` as JSON, with the tool list's kept JSON spliced in when `body.tools` is still that list
 * (request overrides may replace it). The SDK sends a string body with a content type verbatim.
 */
export function chatCompletionsJson(
  body: Record<string, unknown>,
  tools: readonly FunctionSchema[],
): string {
  const wire = tools.length > 0 ? wireTools.get(tools) : undefined;
  if (!wire || body.tools !== wire.tools) return JSON.stringify(body);
  const { tools: _spliced, ...rest } = body;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head === '{}' ? '' : ','}"tools":${wire.json}}`;
}

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  cache_creation_input_tokens?: number;
}

export function chatUsage(raw: RawUsage | null | undefined): Partial<Usage> {
  if (!raw) return {};
  return {
    inputTokens: raw.prompt_tokens ?? 0,
    outputTokens: raw.completion_tokens ?? 0,
    cacheReadTokens: raw.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens:
      raw.prompt_tokens_details?.cache_write_tokens ?? raw.cache_creation_input_tokens ?? 0,
    reasoningTokens: raw.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

function reasoningOf(value: Record<string, unknown>): string {
  const text = value.reasoning_content ?? value.reasoning;
  return typeof text === 'string' ? text : '';
}

/** Fills `turn` from a non-streamed chat completion, whichever transport fetched it. */
export function applyChatCompletion(completion: unknown, turn: ModelTurn): void {
  const { choices, usage } = completion as {
    choices: { message?: unknown; finish_reason?: string | null }[];
    usage?: RawUsage;
  };
  const choice = choices[0];
  const message = (choice?.message ?? {}) as Record<string, unknown>;
  turn.content = typeof message.content === 'string' ? message.content : '';
  turn.reasoning = reasoningOf(message);
  turn.toolCalls = ((message.tool_calls as ToolCall[] | undefined) ?? []).map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.function.name, arguments: call.function.arguments ?? '' },
  }));
  turn.finishReason = choice?.finish_reason ?? null;
  turn.usage = chatUsage(usage);
}

/** Builds a streamed reply into a `ModelTurn`, chunk by chunk, whichever transport reads it. */
export interface ChatChunkReader {
  /** One parsed `chat.completion.chunk`: text and reasoning are passed on as they come. */
  chunk(chunk: unknown): void;
  /** The stream ended: the tool calls are assembled. */
  end(): void;
}

export function createChatChunkReader(
  turn: ModelTurn,
  callbacks: TransportCallbacks,
): ChatChunkReader {
  const calls: { id: string; name: string; arguments: string }[] = [];
  return {
    chunk(value) {
      const chunk = value as { usage?: RawUsage | null; choices?: unknown[] };
      if (chunk.usage) turn.usage = chatUsage(chunk.usage);
      const choice = chunk.choices?.[0] as
        | { delta?: unknown; finish_reason?: string | null }
        | undefined;
      if (!choice) return;
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      const reasoning = reasoningOf(delta);
      if (reasoning) {
        turn.reasoning += reasoning;
        callbacks.onReasoningDelta?.(reasoning);
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        turn.content += delta.content;
        callbacks.onTextDelta?.(delta.content);
      }
      const toolDeltas = delta.tool_calls as
        | { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]
        | undefined;
      for (const part of toolDeltas ?? []) {
        const index = part.index ?? calls.length;
        calls[index] ??= { id: '', name: '', arguments: '' };
        const call = calls[index];
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (choice.finish_reason) turn.finishReason = choice.finish_reason;
    },
    end() {
      turn.toolCalls = calls
        .filter((call) => call && call.name !== '')
        .map((call, index) => ({
          id: call.id || `call_${index}`,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }));
    },
  };
}

/**
 * Runs one chat-completions call over the `openai` SDK, writing into `turn` as data arrives, so a
 * caller that aborts mid-stream still holds what was said so far.
 */
export async function runChatCompletions(
  client: OpenAI,
  request: TransportRequest,
  turn: ModelTurn,
  callbacks: TransportCallbacks,
): Promise<void> {
  const body = buildChatCompletionsBody(request);
  const options = {
    ...(callbacks.signal ? { signal: callbacks.signal } : {}),
    ...(request.route.timeoutS ? { timeout: request.route.timeoutS * 1000 } : {}),
    // The request options' `body` replaces the encoded body (the SDK's documented escape hatch).
    body: chatCompletionsJson(body, request.tools),
    headers: { 'content-type': 'application/json' },
  };
  if (!request.stream) {
    const completion = await client.chat.completions.create(
      body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      options,
    );
    applyChatCompletion(completion, turn);
    return;
  }
  const stream = await client.chat.completions.create(
    body as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    options,
  );
  const reader = createChatChunkReader(turn, callbacks);
  for await (const chunk of stream) reader.chunk(chunk);
  reader.end();
}
