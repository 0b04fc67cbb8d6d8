import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startModelServer } from './model-server.js';

describe('startModelServer', () => {
  it('round-trips a streamed tool call through the official openai client', async () => {
    const server = await startModelServer({
      script: [
        {
          toolCalls: [
            { id: 'call_1', name: 'read_file', arguments: { path: '/etc/hosts', lines: 20 } },
          ],
          chunkSize: 5,
        },
        { text: 'The file lists localhost.' },
      ],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'test-key', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'test-model',
        stream: true,
        messages: [{ role: 'user', content: 'read /etc/hosts' }],
        tools: [
          { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
        ],
      });
      let name = '';
      let args = '';
      let callId = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        for (const delta of choice?.delta.tool_calls ?? []) {
          callId ||= delta.id ?? '';
          name += delta.function?.name ?? '';
          args += delta.function?.arguments ?? '';
        }
        finish = choice?.finish_reason ?? finish;
      }
      expect(callId).toBe('call_1');
      expect(name).toBe('read_file');
      expect(JSON.parse(args)).toEqual({ path: '/etc/hosts', lines: 20 });
      expect(finish).toBe('tool_calls');

      const final = await client.chat.completions.create({
        model: 'test-model',
        messages: [
          { role: 'user', content: 'read /etc/hosts' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: args } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '127.0.0.1 localhost' },
        ],
      });
      expect(final.choices[0]?.message.content).toBe('The file lists localhost.');
      expect(server.modelRequests).toHaveLength(2);
      const second = server.modelRequests[1]?.body as { messages: Array<{ role: string }> };
      expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
      expect(server.requests[0]?.headers.authorization).toBe('Bearer test-key');
    } finally {
      await server.close();
    }
  });

  it("lets the official client's streaming tool runner call the tool and finish the turn", async () => {
    const server = await startModelServer({
      script: [
        {
          text: 'Let me look.',
          toolCalls: [{ id: 'call_7', name: 'add', arguments: { a: 2, b: 40 } }],
          chunkSize: 3,
        },
        (request) => {
          const messages = (request.body as { messages: Array<{ role: string; content: string }> })
            .messages;
          return { text: `The sum is ${messages.at(-1)?.content}.`, chunkSize: 4 };
        },
      ],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const calls: unknown[] = [];
      const runner = client.chat.completions.runTools({
        model: 'test-model',
        stream: true,
        messages: [{ role: 'user', content: 'what is 2 + 40?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'add',
              description: 'Adds two numbers.',
              parameters: {
                type: 'object',
                properties: { a: { type: 'number' }, b: { type: 'number' } },
              },
              parse: JSON.parse,
              function: (args: { a: number; b: number }) => {
                calls.push(args);
                return String(args.a + args.b);
              },
            },
          },
        ],
      });
      expect(await runner.finalContent()).toBe('The sum is 42.');
      expect(calls).toEqual([{ a: 2, b: 40 }]);
      const assistant = runner.messages.find((message) => message.role === 'assistant');
      expect(assistant).toMatchObject({
        content: 'Let me look.',
        tool_calls: [{ id: 'call_7', function: { name: 'add', arguments: '{"a":2,"b":40}' } }],
      });
      const second = server.modelRequests[1]?.body as {
        stream: boolean;
        messages: Array<{ role: string; tool_call_id?: string }>;
      };
      expect(second.stream).toBe(true);
      expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_7' });
    } finally {
      await server.close();
    }
  });

  it('answers a non-streamed tool call with tool_calls and finish_reason tool_calls', async () => {
    const server = await startModelServer({
      script: [{ toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' }] }],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
      });
      const choice = completion.choices[0];
      expect(choice?.finish_reason).toBe('tool_calls');
      expect(choice?.message.content).toBeNull();
      expect(choice?.message.tool_calls).toEqual([
        { id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
      ]);
    } finally {
      await server.close();
    }
  });

  it('streams plain text in several deltas', async () => {
    const server = await startModelServer({
      script: [{ text: 'hello there, general', chunkSize: 4 }],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi' }],
      });
      const deltas: string[] = [];
      let usage: unknown;
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) deltas.push(content);
        if (chunk.usage) usage = chunk.usage;
      }
      expect(deltas.join('')).toBe('hello there, general');
      expect(deltas.length).toBeGreaterThan(1);
      expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
    } finally {
      await server.close();
    }
  });

  it('injects 429 with Retry-After and 500 errors, then recovers', async () => {
    const server = await startModelServer({
      script: [
        { error: { status: 429, message: 'slow down', retryAfterS: 1 } },
        { error: { status: 500 } },
        { text: 'ok' },
      ],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const call = () =>
        client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
      const rateLimited = await call().catch((error: unknown) => error);
      expect(rateLimited).toBeInstanceOf(OpenAI.RateLimitError);
      expect(
        (rateLimited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'),
      ).toBe('1');
      await expect(call()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
      expect((await call()).choices[0]?.message.content).toBe('ok');
      await expect(call()).rejects.toThrow(/script exhausted/);
    } finally {
      await server.close();
    }
  });

  it('delays a reply by the scripted amount', async () => {
    const server = await startModelServer({ script: [{ text: 'late', delayMs: 150 }] });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const started = performance.now();
      await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    } finally {
      await server.close();
    }
  });

  it('answers /v1/responses and /v1/models, and computes replies from the request', async () => {
    const server = await startModelServer({
      models: ['alpha', 'beta'],
      script: [(request) => ({ text: `echo: ${(request.body as { input: string }).input}` })],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const response = await client.responses.create({ model: 'alpha', input: 'ping' });
      expect(response.output_text).toBe('echo: ping');
      const models = await client.models.list();
      expect(models.data.map((model) => model.id)).toEqual(['alpha', 'beta']);
    } finally {
      await server.close();
    }
  });

  it('rejects a wrong API key when one is required', async () => {
    const server = await startModelServer({ apiKey: 'right', script: [{ text: 'never' }] });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'wrong', maxRetries: 0 });
      await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      expect(server.remaining).toBe(1);
    } finally {
      await server.close();
    }
  });
  it('resets the connection when scripted to, then answers the next request', async () => {
    const server = await startModelServer({ script: [{ reset: true }, { text: 'back' }] });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const call = () =>
        client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
      await expect(call()).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
      expect((await call()).choices[0]?.message.content).toBe('back');
    } finally {
      await server.close();
    }
  });

  it('reports cached and reasoning token details in usage', async () => {
    const server = await startModelServer({
      script: [
        {
          text: 'ok',
          usage: { promptTokens: 40, completionTokens: 7, cachedTokens: 30, reasoningTokens: 3 },
        },
      ],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(30);
      expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('streams Responses reasoning, text and function calls', async () => {
    const server = await startModelServer({
      script: [
        {
          reasoning: 'thinking it over',
          text: 'calling',
          toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a' } }],
        },
      ],
    });
    try {
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'k', maxRetries: 0 });
      const stream = await client.responses.create({ model: 'm', input: 'x', stream: true });
      const types: string[] = [];
      let reasoning = '';
      let final: { output: { type: string; call_id?: string; encrypted_content?: string }[] } = {
        output: [],
      };
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.reasoning_summary_text.delta') reasoning += event.delta;
        if (event.type === 'response.completed') final = event.response as typeof final;
      }
      expect(reasoning).toBe('thinking it over');
      expect(types).toContain('response.output_item.done');
      expect(final.output.map((item) => item.type)).toEqual([
        'reasoning',
        'message',
        'function_call',
      ]);
      expect(final.output[2]?.call_id).toBe('call_1');
      expect(final.output[0]?.encrypted_content).toMatch(/^enc_/);
    } finally {
      await server.close();
    }
  });
});
