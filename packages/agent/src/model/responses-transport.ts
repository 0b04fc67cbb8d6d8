import { createHash } from 'node:crypto';
import type OpenAI from 'openai';
import { AgentError } from '../errors.js';
import { hostOf } from './api-mode.js';
import type { TransportCallbacks, TransportRequest } from './chat-completions-transport.js';
import type { ChatMessage, ModelTurn, Usage } from './chat-message.js';
import { applyRequestOverrides } from './request-overrides.js';

/** Sent as `instructions` when a turn has no system prompt. */
export const DEFAULT_RESPONSES_INSTRUCTIONS = 'You are Hermes, a helpful AI assistant.';

function inputItems(messages: readonly ChatMessage[]): unknown[] {
  const items: unknown[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        items.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        for (const item of message.codex_reasoning_items ?? []) items.push(item);
        if (message.content) items.push({ role: 'assistant', content: message.content });
        for (const call of message.tool_calls ?? [])
          items.push({
            type: 'function_call',
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          });
        break;
      case 'tool':
        items.push({
          type: 'function_call_output',
          call_id: message.tool_call_id,
          output: message.content,
        });
        break;
    }
  }
  return items;
}

function reasoningEffortFor(effort: string, host: string): string {
  if (effort === 'minimal') return 'low';
  if (host === 'api.x.ai' && (effort === 'xhigh' || effort === 'max')) return 'high';
  return effort;
}

/** The Responses API request body for a turn (§7.4). */
export function buildResponsesBody(request: TransportRequest): Record<string, unknown> {
  const { route } = request;
  const system = request.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n\n');
  const instructions = system || DEFAULT_RESPONSES_INSTRUCTIONS;
  const body: Record<string, unknown> = {
    model: route.model,
    instructions,
    input: inputItems(request.messages),
    store: false,
  };
  const tools = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }));
  if (tools.length > 0) {
    body.tools = tools;
    body.tool_choice = 'auto';
    body.parallel_tool_calls = true;
  }
  const sortedTools = [...tools].sort((left, right) => left.name.localeCompare(right.name));
  body.prompt_cache_key = instructions
    ? `pck_${createHash('sha256')
        .update(instructions + JSON.stringify(sortedTools))
        .digest('hex')
        .slice(0, 24)}`
    : request.sessionId;
  const host = hostOf(route.baseUrl);
  if (route.reasoningEffort && route.reasoningEffort !== 'none')
    body.reasoning = { effort: reasoningEffortFor(route.reasoningEffort, host), summary: 'auto' };
  body.include = ['reasoning.encrypted_content'];
  if (host === 'chatgpt.com') body.text = { verbosity: 'medium' };
  if (route.maxTokens !== undefined) body.max_output_tokens = route.maxTokens;
  if (request.stream) body.stream = true;
  return applyRequestOverrides(body, route.requestOverrides);
}

interface RawResponse {
  status?: string;
  output?: Record<string, unknown>[];
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    input_tokens_details?: { cached_tokens?: number } | null;
    output_tokens_details?: { reasoning_tokens?: number } | null;
  } | null;
  error?: { message?: string } | null;
  incomplete_details?: { reason?: string } | null;
}

function responsesUsage(raw: RawResponse['usage']): Partial<Usage> {
  if (!raw) return {};
  return {
    inputTokens: raw.input_tokens ?? 0,
    outputTokens: raw.output_tokens ?? 0,
    cacheReadTokens: raw.input_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: raw.output_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** Reads a final Responses object into `turn` (text only when streaming did not deliver it). */
export function readResponse(response: RawResponse, turn: ModelTurn, streamed: boolean): void {
  let text = '';
  let reasoning = '';
  for (const item of response.output ?? []) {
    if (item.type === 'message') {
      for (const part of (item.content as Record<string, unknown>[] | undefined) ?? [])
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    } else if (item.type === 'function_call') {
      turn.toolCalls.push({
        id: String(item.call_id ?? item.id ?? `call_${turn.toolCalls.length}`),
        type: 'function',
        function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
      });
    } else if (item.type === 'reasoning') {
      for (const part of (item.summary as Record<string, unknown>[] | undefined) ?? [])
        if (typeof part.text === 'string') reasoning += part.text;
      if (item.encrypted_content) turn.reasoningItems.push(item);
    }
  }
  if (!streamed || turn.content === '') turn.content = text;
  if (!streamed || turn.reasoning === '') turn.reasoning = reasoning;
  turn.usage = responsesUsage(response.usage);
  turn.finishReason =
    response.status === 'incomplete'
      ? (response.incomplete_details?.reason ?? 'length')
      : turn.toolCalls.length > 0
        ? 'tool_calls'
        : 'stop';
}

function failure(message: string | undefined, provider: string): AgentError {
  return new AgentError({
    code: 'provider_error',
    message: message || 'the provider reported a failed response',
    provider,
  });
}

export async function runResponses(
  client: OpenAI,
  request: TransportRequest,
  turn: ModelTurn,
  callbacks: TransportCallbacks,
): Promise<void> {
  const body = buildResponsesBody(request);
  const options = {
    ...(callbacks.signal ? { signal: callbacks.signal } : {}),
    ...(request.route.timeoutS ? { timeout: request.route.timeoutS * 1000 } : {}),
  };
  if (!request.stream) {
    const response = (await client.responses.create(
      body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
      options,
    )) as unknown as RawResponse;
    if (response.status === 'failed')
      throw failure(response.error?.message, request.route.provider);
    readResponse(response, turn, false);
    return;
  }
  const stream = await client.responses.create(
    body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming,
    options,
  );
  for await (const event of stream as AsyncIterable<Record<string, unknown>>) {
    switch (event.type) {
      case 'response.output_text.delta':
        if (typeof event.delta === 'string' && event.delta !== '') {
          turn.content += event.delta;
          callbacks.onTextDelta?.(event.delta);
        }
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof event.delta === 'string' && event.delta !== '') {
          turn.reasoning += event.delta;
          callbacks.onReasoningDelta?.(event.delta);
        }
        break;
      case 'response.completed':
      case 'response.incomplete':
        readResponse(event.response as RawResponse, turn, true);
        break;
      case 'response.failed':
        throw failure(
          (event.response as RawResponse | undefined)?.error?.message,
          request.route.provider,
        );
      case 'error':
        throw failure(
          typeof event.message === 'string' ? event.message : undefined,
          request.route.provider,
        );
    }
  }
}
