import { getEventListeners } from 'node:events';
import { startModelServer } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError } from '../errors.js';
import { emptyModelTurn } from './chat-message.js';
import {
  createModelClient as createDirectModelClient,
  createSdkModelClient,
  type ModelClientNotice,
} from './model-client.js';
import type { ModelRoute } from './model-route.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function server(script: Parameters<typeof startModelServer>[0]) {
  const started = await startModelServer(script);
  servers.push(started);
  return started;
}

function route(baseUrl: string, overrides: Partial<ModelRoute> = {}): ModelRoute {
  return {
    provider: 'custom',
    model: 'test-model',
    baseUrl,
    apiKey: 'k',
    apiMode: 'chat_completions',
    ...overrides,
  };
}

const hello = [{ role: 'user' as const, content: 'hello' }];

// The testkit server is plain http: `createModelClient` sends chat completions straight over
// node:http, the SDK client through the openai SDK. Every behaviour below holds over both.
describe.each([
  ['direct node:http', createDirectModelClient],
  ['the openai SDK', createSdkModelClient],
])('createModelClient, chat completions over %s', (_transport, createModelClient) => {
  it('streams text deltas in order and returns the whole reply with usage', async () => {
    const model = await server({
      script: [
        {
          text: 'The quick brown fox jumps',
          reasoning: 'consider foxes',
          chunkSize: 4,
          usage: { promptTokens: 21, completionTokens: 6, cachedTokens: 5, reasoningTokens: 2 },
        },
      ],
    });
    const deltas: string[] = [];
    const reasoning: string[] = [];
    const client = createModelClient({ routes: [route(model.baseUrl)] });
    const { turn } = await client.complete({
      messages: hello,
      onTextDelta: (text) => deltas.push(text),
      onReasoningDelta: (text) => reasoning.push(text),
    });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('The quick brown fox jumps');
    expect(turn.content).toBe('The quick brown fox jumps');
    expect(reasoning.join('')).toBe('consider foxes');
    expect(turn.usage).toEqual({
      inputTokens: 21,
      outputTokens: 6,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
      reasoningTokens: 2,
      apiCalls: 1,
    });
    expect(model.modelRequests[0]?.body).toMatchObject({ stream: true });
  });

  it('waits out Retry-After on a 429, then succeeds on the same provider', async () => {
    const model = await server({
      script: [{ error: { status: 429, message: 'slow down', retryAfterS: 1 } }, { text: 'ok' }],
    });
    const notices: ModelClientNotice[] = [];
    const client = createModelClient({
      routes: [route(model.baseUrl)],
      onNotice: (notice) => notices.push(notice),
    });
    const started = performance.now();
    const { turn } = await client.complete({ messages: hello });
    const elapsed = performance.now() - started;
    expect(turn.content).toBe('ok');
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(notices).toEqual([
      {
        type: 'model.retry',
        provider: 'custom',
        attempt: 1,
        delayMs: 1000,
        reason: '429 slow down',
      },
    ]);
    expect(model.modelRequests).toHaveLength(2);
  });

  it('retries a 500 with backoff, then moves to the fallback provider', async () => {
    const primary = await server({
      script: [{ error: { status: 500 } }, { error: { status: 502 } }, { error: { status: 503 } }],
    });
    const backup = await server({ script: [{ text: 'from backup' }] });
    const notices: ModelClientNotice[] = [];
    const client = createModelClient({
      routes: [
        route(primary.baseUrl, { provider: 'main' }),
        route(backup.baseUrl, { provider: 'backup' }),
      ],
      onNotice: (notice) => notices.push(notice),
    });
    const result = await client.complete({ messages: hello });
    expect(result.turn.content).toBe('from backup');
    expect(result.route.provider).toBe('backup');
    expect(primary.modelRequests).toHaveLength(3);
    expect(result.turn.usage.apiCalls).toBe(4); // every request sent
    expect(notices.map((notice) => notice.type)).toEqual([
      'model.retry',
      'model.retry',
      'model.fallback',
    ]);
    const retries = notices.filter((notice) => notice.type === 'model.retry');
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(250);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(500);
    expect(retries[1]?.delayMs).toBeGreaterThanOrEqual(500);
    expect(retries[1]?.delayMs).toBeLessThanOrEqual(1000);
  });

  it('retries a connection reset, naming it in the retry notice', async () => {
    const model = await server({ script: [{ reset: true }, { text: 'recovered' }] });
    const notices: ModelClientNotice[] = [];
    const client = createModelClient({
      routes: [route(model.baseUrl)],
      onNotice: (notice) => notices.push(notice),
    });
    expect((await client.complete({ messages: hello })).turn.content).toBe('recovered');
    expect(notices).toEqual([
      expect.objectContaining({ type: 'model.retry', reason: 'connection failed: ECONNRESET' }),
    ]);
  });

  it("ends on a 4xx with the provider's own message, without retrying or falling back", async () => {
    const primary = await server({
      script: [{ error: { status: 400, message: 'model `nope` does not exist' } }],
    });
    const backup = await server({ script: [{ text: 'never' }] });
    const client = createModelClient({
      routes: [route(primary.baseUrl), route(backup.baseUrl)],
    });
    const error = await client.complete({ messages: hello }).catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as AgentError).code).toBe('provider_error');
    expect((error as AgentError).status).toBe(400);
    expect((error as AgentError).message).toBe('model `nope` does not exist');
    expect(backup.modelRequests).toHaveLength(0);
  });

  it('says the provider is unavailable when every route is spent', async () => {
    const model = await server({ script: [{ error: { status: 500, message: 'boom' } }] });
    const client = createModelClient({ routes: [route(model.baseUrl)], maxRetries: 0 });
    const turn = emptyModelTurn();
    const error = (await client
      .complete({ messages: hello, turn })
      .catch((caught) => caught)) as AgentError;
    expect(turn.usage.apiCalls).toBe(1); // the failed request was sent
    expect(error.code).toBe('provider_unavailable');
    expect(error.message).toBe(
      'provider custom is unavailable (500 boom) and no fallback provider answered',
    );
  });

  it('stops a stream on abort and keeps what arrived', async () => {
    const model = await server({
      script: [{ text: 'one two three four five six seven', chunkSize: 4, chunkDelayMs: 40 }],
    });
    const controller = new AbortController();
    const turn = emptyModelTurn();
    const client = createModelClient({ routes: [route(model.baseUrl)] });
    const error = await client
      .complete({
        messages: hello,
        signal: controller.signal,
        turn,
        onTextDelta: () => {
          if (turn.content.length >= 8) controller.abort();
        },
      })
      .catch((caught: unknown) => caught);
    expect((error as AgentError).code).toBe('interrupted');
    expect(turn.usage.apiCalls).toBe(1);
    expect(turn.content.length).toBeGreaterThanOrEqual(8);
    expect(turn.content.length).toBeLessThan('one two three four five six seven'.length);
  });

  it('speaks the Responses API with the reference request fields', async () => {
    const model = await server({
      script: [
        {
          reasoning: 'plan',
          toolCalls: [{ id: 'call_9', name: 'read_file', arguments: { path: 'a.txt' } }],
        },
      ],
    });
    const client = createModelClient({
      routes: [route(model.baseUrl, { apiMode: 'codex_responses', reasoningEffort: 'minimal' })],
    });
    const { turn } = await client.complete({
      sessionId: 's1',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'read a' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } },
          ],
          codex_reasoning_items: [{ type: 'reasoning', encrypted_content: 'enc_prior' }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"error":"x"}' },
      ],
      tools: [
        { name: 'read_file', description: 'read', parameters: { type: 'object' } },
        { name: 'patch', description: 'edit', parameters: { type: 'object' } },
      ],
    });
    expect(turn.toolCalls).toEqual([
      {
        id: 'call_9',
        type: 'function',
        function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
      },
    ]);
    expect(turn.reasoning).toBe('plan');
    expect(turn.reasoningItems).toHaveLength(1);
    const request = model.modelRequests[0];
    expect(request?.path).toBe('/v1/responses');
    const body = request?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'test-model',
      instructions: 'be brief',
      store: false,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
    expect(body.prompt_cache_key).toMatch(/^pck_[0-9a-f]{24}$/);
    expect(body.input).toEqual([
      { role: 'user', content: 'read a' },
      { type: 'reasoning', encrypted_content: 'enc_prior' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"error":"x"}' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'read_file',
        description: 'read',
        parameters: { type: 'object' },
        strict: false,
      },
      {
        type: 'function',
        name: 'patch',
        description: 'edit',
        parameters: { type: 'object' },
        strict: false,
      },
    ]);
  });

  it('omits tools, tool_choice and parallel_tool_calls on the Responses path when there are none', async () => {
    const model = await server({ script: [{ text: 'plain' }] });
    const client = createModelClient({
      routes: [route(model.baseUrl, { apiMode: 'codex_responses' })],
      stream: false,
    });
    expect((await client.complete({ messages: hello })).turn.content).toBe('plain');
    const body = model.modelRequests[0]?.body as Record<string, unknown>;
    expect(Object.keys(body)).not.toContain('tools');
    expect(Object.keys(body)).not.toContain('tool_choice');
    expect(Object.keys(body)).not.toContain('parallel_tool_calls');
    expect(body.instructions).toBe('You are Hermes, a helpful AI assistant.');
  });

  it('merges request overrides and their extra_body into the chat body, sanitising messages', async () => {
    const model = await server({ script: [{ text: 'ok' }] });
    const client = createModelClient({
      routes: [
        route(model.baseUrl, {
          requestOverrides: { temperature: 0.1, extra_body: { provider: { order: ['a'] } } },
          maxTokens: 99,
        }),
      ],
    });
    await client.complete({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y', reasoning: 'secret thoughts' },
      ],
    });
    const body = model.modelRequests[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ temperature: 0.1, provider: { order: ['a'] }, max_tokens: 99 });
    expect(body.messages).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'y' },
    ]);
  });

  it('sends the offered tools with every chat-completions call, streamed or not, as JSON', async () => {
    const model = await server({ script: [{ text: 'one' }, { text: 'two' }] });
    const tools = [
      { name: 'read_file', description: 'read "it"', parameters: { type: 'object' } },
      { name: 'patch', description: 'edit', parameters: { type: 'object' } },
    ];
    const wire = tools.map((tool) => ({ type: 'function', function: tool }));
    for (const stream of [false, true]) {
      const client = createModelClient({ routes: [route(model.baseUrl)], stream });
      await client.complete({ messages: hello, tools });
    }
    expect(model.modelRequests).toHaveLength(2);
    for (const request of model.modelRequests) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).toMatchObject({ model: 'test-model', messages: hello, tools: wire });
    }
    expect(model.modelRequests[1]?.body).toMatchObject({ stream: true });
  });

  it('leaves no listener on the caller’s signal however many calls a turn makes', async () => {
    const model = await server({ script: Array.from({ length: 12 }, () => ({ text: 'x' })) });
    const client = createModelClient({ routes: [route(model.baseUrl)] });
    const controller = new AbortController();
    for (let index = 0; index < 12; index += 1)
      await client.complete({ messages: hello, signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
