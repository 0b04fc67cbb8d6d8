import { describe, expect, it } from 'vitest';
import { buildChatCompletionsBody, chatCompletionsJson } from './chat-completions-transport.js';
import type { FunctionSchema } from './function-schema.js';
import type { ModelRoute } from './model-route.js';

const route: ModelRoute = {
  provider: 'custom',
  model: 'test-model',
  baseUrl: 'http://127.0.0.1:1/v1',
  apiKey: 'k',
  apiMode: 'chat_completions',
};
const tools: FunctionSchema[] = [
  {
    name: 'read_file',
    description: 'Read a "file"\nwith quotes',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'noop', description: 'nothing', parameters: { type: 'object', properties: {} } },
];
const messages = [{ role: 'user' as const, content: 'hi — “quoted” \u2028 text' }];

describe('the chat-completions request JSON', () => {
  it('is the body, whose tool list is serialised once and spliced into every request', () => {
    const request = { route, messages, tools, stream: false };
    const first = buildChatCompletionsBody(request);
    const second = buildChatCompletionsBody({ ...request, messages: [...messages, ...messages] });
    expect(second.tools).toBe(first.tools);
    expect(JSON.parse(chatCompletionsJson(first, tools))).toEqual(
      JSON.parse(JSON.stringify(first)),
    );
    expect(JSON.parse(chatCompletionsJson(second, tools))).toEqual(
      JSON.parse(JSON.stringify(second)),
    );
  });

  it('sends a tool list that request overrides put in place of the agent’s', () => {
    const replaced = [{ type: 'function', function: { name: 'other', parameters: {} } }];
    const body = buildChatCompletionsBody({
      route: { ...route, requestOverrides: { tools: replaced, temperature: 0.2 } },
      messages,
      tools,
      stream: true,
    });
    expect(JSON.parse(chatCompletionsJson(body, tools))).toMatchObject({
      tools: replaced,
      temperature: 0.2,
      stream: true,
    });
  });

  it('has no tools key when no tools are offered', () => {
    const body = buildChatCompletionsBody({ route, messages, tools: [], stream: false });
    expect(JSON.parse(chatCompletionsJson(body, []))).toEqual({ model: 'test-model', messages });
  });
});
