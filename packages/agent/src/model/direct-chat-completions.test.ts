import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { startModelServer } from '@hermes/testkit';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  type APIError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSourceScript } from '../../test/fixtures.js';
import { AgentError } from '../errors.js';
import { runChatCompletions } from './chat-completions-transport.js';
import { emptyModelTurn, type ModelTurn } from './chat-message.js';
import { directEndpoint, runDirectChatCompletions } from './direct-chat-completions.js';
import {
  createModelClient,
  createSdkModelClient,
  type ModelClientNotice,
  type ModelClientOptions,
} from './model-client.js';
import type { ModelRoute } from './model-route.js';
import { type FetchFunction, fetchForBaseUrl, sharedPlainHttpAgent } from './plain-http-fetch.js';
import { classifyFailure } from './retry-policy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => unknown;

interface Received {
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

/** A real `node:http` server on loopback recording each request's raw headers and body bytes. */
async function rawServer(handler: Handler) {
  const received: Received[] = [];
  const sockets: Socket[] = [];
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    received.push({ rawHeaders: request.rawHeaders, body: Buffer.concat(chunks) });
    await handler(request, response);
  });
  server.on('connection', (socket: Socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, baseUrl: `${url}/v1`, received, sockets, server };
}

async function modelServer(options: Parameters<typeof startModelServer>[0]) {
  const server = await startModelServer(options);
  cleanups.push(() => server.close());
  return server;
}

function route(baseUrl: string, overrides: Partial<ModelRoute> = {}): ModelRoute {
  return {
    provider: 'local',
    model: 'test-model',
    baseUrl,
    apiKey: 'sk-local',
    apiMode: 'chat_completions',
    ...overrides,
  };
}

function sse(chunk: Record<string, unknown>): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function delta(content: string, finishReason: string | null = null): string {
  return sse({
    id: 'c1',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content }, finish_reason: finishReason }],
  });
}

const hello = [{ role: 'user' as const, content: 'hello — “é” 🦊' }];
const tools = [
  { name: 'read_file', description: 'Read a "file"', parameters: { type: 'object' } },
  { name: 'noop', description: 'nothing', parameters: { type: 'object', properties: {} } },
];

interface Outcome {
  readonly turn: ModelTurn;
  readonly error: unknown;
  readonly notices: ModelClientNotice[];
}

/** One `complete` call over a client, with whatever it ends with. */
async function outcomeOf(
  create: (options: ModelClientOptions) => ReturnType<typeof createModelClient>,
  options: ModelClientOptions,
): Promise<Outcome> {
  const notices: ModelClientNotice[] = [];
  const turn = emptyModelTurn();
  const client = create({ ...options, onNotice: (notice) => notices.push(notice) });
  const error = await client
    .complete({ messages: hello, tools, turn })
    .then(() => undefined)
    .catch((caught: unknown) => caught);
  return { turn, error, notices };
}

/** The same call over the SDK and then over the direct transport. */
async function bothOutcomes(options: ModelClientOptions) {
  const sdk = await outcomeOf(createSdkModelClient, options);
  const direct = await outcomeOf(createModelClient, options);
  return { sdk, direct };
}

/** What one chat-completions call throws, straight from the SDK's or the direct transport. */
async function transportFailure(transport: 'sdk' | 'direct', baseUrl: string, stream: boolean) {
  const target = route(baseUrl);
  const client = new OpenAI({
    apiKey: target.apiKey,
    baseURL: target.baseUrl,
    maxRetries: 0,
    fetch: fetchForBaseUrl(baseUrl) as FetchFunction,
  });
  const request = { route: target, messages: hello, tools, stream };
  const turn = emptyModelTurn();
  try {
    if (transport === 'sdk') await runChatCompletions(client, request, turn, {});
    else {
      const endpoint = await directEndpoint(client, target, sharedPlainHttpAgent());
      await runDirectChatCompletions(endpoint, request, turn, {});
    }
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

function errorView(error: unknown) {
  const apiError = error as APIError;
  return {
    class: apiError.constructor.name,
    message: apiError.message,
    status: apiError.status,
    body: apiError.error,
    retryAfter: apiError.headers?.get?.('retry-after') ?? null,
    cause: String(apiError.cause),
    causeCode: (apiError.cause as { cause?: { code?: string } } | undefined)?.cause?.code,
    failure: classifyFailure(error),
  };
}

/** What the rest of the agent sees of a failure. */
function failureView(error: unknown) {
  if (!AgentError.isInstance(error)) return { thrown: String(error) };
  const cause = error.cause as APIError | undefined;
  return {
    code: error.code,
    message: error.message,
    status: error.status,
    causeClass: cause?.constructor.name,
    causeStatus: cause?.status,
    causeBody: cause?.error,
    retryAfter: cause?.headers?.get?.('retry-after'),
    failure: classifyFailure(cause),
  };
}

describe('the direct chat-completions transport, against the openai SDK', () => {
  it.each([
    [false, undefined],
    [true, undefined],
    [false, 30],
    [true, 30],
  ])(
    'sends the request the SDK sends, header for header and byte for byte (stream %s, timeout %s s)',
    async (stream, timeoutS) => {
      const server = await rawServer((_request, response) => {
        if (stream) {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.end(`${delta('ok', 'stop')}data: [DONE]\n\n`);
        } else {
          response.setHeader('content-type', 'application/json');
          response.end(
            JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }),
          );
        }
      });
      const routes = [route(server.baseUrl, { maxTokens: 64, ...(timeoutS ? { timeoutS } : {}) })];
      // Headers the SDK reads from the environment come along (its client is built per model client).
      vi.stubEnv('OPENAI_ORG_ID', 'org-local');
      vi.stubEnv('OPENAI_CUSTOM_HEADERS', 'X-Team: agents');
      const { sdk, direct } = await bothOutcomes({ routes, stream });
      expect(sdk.error).toBeUndefined();
      expect(direct.error).toBeUndefined();
      const [fromSdk, fromDirect] = server.received;
      expect(fromDirect?.rawHeaders).toEqual(fromSdk?.rawHeaders);
      expect(fromDirect?.body.equals(fromSdk?.body as Buffer)).toBe(true);
      // What the SDK sends, spelled out for the ones a provider reads.
      const headers = new Headers();
      for (let index = 0; index < (fromDirect?.rawHeaders.length ?? 0); index += 2)
        headers.append(
          fromDirect?.rawHeaders[index] as string,
          fromDirect?.rawHeaders[index + 1] as string,
        );
      expect(headers.get('authorization')).toBe('Bearer sk-local');
      expect(headers.get('content-type')).toBe('application/json');
      expect(headers.get('accept')).toBe('application/json');
      expect(headers.get('user-agent')).toMatch(/^OpenAI\/JS \d/);
      expect(headers.get('x-stainless-timeout')).toBe(timeoutS ? String(timeoutS) : null);
      expect(headers.get('openai-organization')).toBe('org-local');
      expect(headers.get('x-team')).toBe('agents');
      expect(JSON.parse(fromDirect?.body.toString('utf8') ?? '')).toMatchObject({
        model: 'test-model',
        messages: hello,
        max_tokens: 64,
        ...(stream ? { stream: true } : {}),
      });
      expect(direct.turn).toEqual(sdk.turn);
      expect(direct.turn.content).toBe('ok');
    },
  );

  it.each([false, true])(
    'builds the same turn from text, reasoning, tool calls and usage (stream %s)',
    async (stream) => {
      const reply = {
        text: 'Reading both.',
        reasoning: 'two files',
        chunkSize: 3,
        toolCalls: [
          { id: 'call_a', name: 'read_file', arguments: { path: 'a — é.txt' } },
          { id: 'call_b', name: 'noop' },
        ],
        usage: { promptTokens: 40, completionTokens: 9, cachedTokens: 8, reasoningTokens: 3 },
      };
      const model = await modelServer({ script: [reply, reply] });
      const { sdk, direct } = await bothOutcomes({ routes: [route(model.baseUrl)], stream });
      expect(direct.error).toBeUndefined();
      expect(direct.turn).toEqual(sdk.turn);
      expect(direct.turn).toMatchObject({
        content: 'Reading both.',
        reasoning: 'two files',
        finishReason: 'tool_calls',
        toolCalls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a — é.txt"}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'noop', arguments: '{}' } },
        ],
        usage: {
          inputTokens: 40,
          outputTokens: 9,
          cacheReadTokens: 8,
          reasoningTokens: 3,
          apiCalls: 1,
        },
      });
    },
  );

  it.each([
    ['a 400', { status: 400, message: 'bad tool schema' }, BadRequestError],
    [
      'a 429 with Retry-After',
      { status: 429, message: 'slow down', retryAfterS: 9 },
      RateLimitError,
    ],
    ['a 500', { status: 500, message: 'boom' }, InternalServerError],
  ])(
    'throws the SDK’s own error for %s: class, status, body, headers, classification',
    async (_name, error, errorClass) => {
      const model = await modelServer({ script: [{ error }, { error }, { error }, { error }] });
      for (const stream of [false, true]) {
        const sdk = await transportFailure('sdk', model.baseUrl, stream);
        const direct = await transportFailure('direct', model.baseUrl, stream);
        expect(direct).toBeInstanceOf(errorClass);
        expect(errorView(direct)).toEqual(errorView(sdk));
        expect(errorView(direct)).toMatchObject({
          status: error.status,
          body: { message: error.message },
          retryAfter: 'retryAfterS' in error ? '9' : null,
          failure: { message: error.message, status: error.status },
        });
      }
    },
  );

  it('throws the SDK’s connection errors: refused, and reset before the response', async () => {
    const probe = http.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const refused = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
    await new Promise((resolve) => probe.close(resolve));
    const model = await modelServer({ script: [{ reset: true }, { reset: true }] });
    for (const [baseUrl, code] of [
      [refused, 'ECONNREFUSED'],
      [model.baseUrl, 'ECONNRESET'],
    ] as const) {
      const sdk = await transportFailure('sdk', baseUrl, true);
      const direct = await transportFailure('direct', baseUrl, true);
      expect(direct).toBeInstanceOf(APIConnectionError);
      expect(errorView(direct)).toEqual(errorView(sdk));
      expect(errorView(direct).failure).toMatchObject({
        retryable: true,
        message: `connection failed: ${code}`,
      });
    }
  });

  it.each([
    [
      'a text/plain 502',
      502,
      { 'content-type': 'text/plain' },
      'bad gateway',
      ['provider_unavailable', 'provider_unavailable'],
    ],
    ['an empty 503', 503, {}, '', ['provider_unavailable', 'provider_unavailable']],
    ['a redirect', 302, { location: '/elsewhere' }, '', ['provider_error', 'provider_error']],
    // Not JSON: the SDK hands the text on as the completion; as a stream it holds no event.
    [
      'a 200 that is not JSON',
      200,
      { 'content-type': 'text/plain' },
      'hello',
      ['provider_error', 'completed'],
    ],
    ['a 204', 204, {}, '', ['provider_error', 'provider_error']],
    [
      'a gzip JSON 404',
      404,
      { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      gzipSync('{"error":{"message":"no such model"}}'),
      ['provider_error', 'provider_error'],
    ],
  ] as const)('answers %s exactly as over the SDK', async (_name, status, headers, body, codes) => {
    const server = await rawServer((_request, response) => {
      response.writeHead(status, headers);
      response.end(body);
    });
    for (const stream of [false, true]) {
      const { sdk, direct } = await bothOutcomes({
        routes: [route(server.baseUrl)],
        maxRetries: 0,
        stream,
      });
      expect(failureView(direct.error)).toEqual(failureView(sdk.error));
      expect(direct.turn).toEqual(sdk.turn);
      const ended = direct.error === undefined ? 'completed' : (direct.error as AgentError).code;
      expect(ended).toBe(codes[stream ? 1 : 0]);
    }
  });

  it('throws the SDK’s error for an error answer whose body is cut short', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.write('{"error":', () => response.socket?.destroy());
    });
    const sdk = await transportFailure('sdk', server.baseUrl, true);
    const direct = await transportFailure('direct', server.baseUrl, true);
    expect(errorView(direct)).toEqual(errorView(sdk));
    expect(errorView(direct)).toMatchObject({ status: 503, message: '503 terminated' });
  });

  it('reads a gzip-encoded stream the server sends unasked, as fetch decodes it', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      response.end(gzipSync(`${delta('packed ')}${delta('text', 'stop')}data: [DONE]\n\n`));
    });
    const { sdk, direct } = await bothOutcomes({ routes: [route(server.baseUrl)] });
    expect(direct.turn).toEqual(sdk.turn);
    expect(direct.turn.content).toBe('packed text');
  });

  it('retries an error event inside the stream as the SDK does, naming its message', async () => {
    let calls = 0;
    const server = await rawServer((_request, response) => {
      calls += 1;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (calls % 2 === 1) response.end(sse({ error: { message: 'overloaded', type: 'server' } }));
      else response.end(`${delta('fine', 'stop')}data: [DONE]\n\n`);
    });
    const { sdk, direct } = await bothOutcomes({ routes: [route(server.baseUrl)] });
    const reasons = (notices: ModelClientNotice[]) =>
      notices.map((notice) => notice.type === 'model.retry' && notice.reason);
    expect(reasons(direct.notices)).toEqual(reasons(sdk.notices));
    expect(direct.notices).toEqual([
      expect.objectContaining({ type: 'model.retry', reason: 'overloaded' }),
    ]);
    expect(direct.turn.content).toBe('fine');
  });

  it('ends the call on an event that is not JSON, with the parse error the SDK gives', async () => {
    // The SDK logs the bad event before it throws; the direct transport only throws.
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`${delta('so far ')}data: {not json\n\n`);
    });
    const { sdk, direct } = await bothOutcomes({ routes: [route(server.baseUrl)] });
    expect(failureView(direct.error)).toEqual(failureView(sdk.error));
    expect((direct.error as AgentError).code).toBe('provider_error');
    expect((direct.error as AgentError).cause).toBeInstanceOf(SyntaxError);
    expect(direct.turn.content).toBe('so far ');
  });

  it('does not retry a connection dropped after text has streamed', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(delta('half a '), () => response.socket?.destroy());
    });
    const { sdk, direct } = await bothOutcomes({ routes: [route(server.baseUrl)] });
    expect(failureView(direct.error)).toEqual(failureView(sdk.error));
    expect(failureView(direct.error)).toMatchObject({
      code: 'provider_error',
      message: 'connection failed: ECONNRESET',
    });
    expect(direct.notices).toEqual([]);
    expect(direct.turn.content).toBe('half a ');
    expect(server.received).toHaveLength(2); // one call each
  });

  it('gives up waiting for headers after the route’s timeout, but not on a slow stream', async () => {
    const model = await modelServer({
      script: [
        { text: 'late', delayMs: 1_500 },
        { text: 'one two three four five', chunkSize: 4, chunkDelayMs: 150 },
        { text: 'late', delayMs: 1_500 },
        { text: 'one two three four five', chunkSize: 4, chunkDelayMs: 150 },
      ],
    });
    const { sdk, direct } = await bothOutcomes({
      routes: [route(model.baseUrl, { timeoutS: 0.5 })],
    });
    expect(direct.notices).toEqual([
      expect.objectContaining({ type: 'model.retry', reason: 'Request timed out.' }),
    ]);
    expect(direct.notices.map((notice) => notice.type === 'model.retry' && notice.reason)).toEqual(
      sdk.notices.map((notice) => notice.type === 'model.retry' && notice.reason),
    );
    expect(direct.turn.content).toBe('one two three four five');
    expect(sdk.turn.content).toBe('one two three four five');
  });

  it('names a timeout among connection errors as the SDK does', () => {
    expect(classifyFailure(new APIConnectionTimeoutError())).toMatchObject({
      retryable: true,
      message: 'Request timed out.',
    });
  });

  it('shares the keep-alive pool with SDK calls: one connection for consecutive calls', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`${delta('ok', 'stop')}data: [DONE]\n\n`);
    });
    const routes = [route(server.baseUrl)];
    await createSdkModelClient({ routes }).complete({ messages: hello });
    for (let call = 0; call < 3; call += 1)
      await createModelClient({ routes }).complete({ messages: hello });
    await createModelClient({ routes, stream: false })
      .complete({ messages: hello })
      .catch(() => {});
    expect(server.received).toHaveLength(5);
    expect(server.sockets).toHaveLength(1);
  });

  it('closes the connection of an aborted stream; the next call opens a fresh one', async () => {
    let calls = 0;
    const server = await rawServer((_request, response) => {
      calls += 1;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (calls === 1) response.write(delta('partial '));
      else response.end(`${delta('fresh', 'stop')}data: [DONE]\n\n`);
    });
    const client = createModelClient({ routes: [route(server.baseUrl)] });
    const controller = new AbortController();
    const error = await client
      .complete({
        messages: hello,
        signal: controller.signal,
        onTextDelta: () => controller.abort(),
      })
      .catch((caught: unknown) => caught);
    expect((error as AgentError).code).toBe('interrupted');
    const first = server.sockets[0] as Socket;
    if (!first.destroyed) await once(first, 'close');
    expect((await client.complete({ messages: hello })).turn.content).toBe('fresh');
    expect(server.sockets).toHaveLength(2);
  });

  it('lets a process that made a call exit: its pooled socket holds nothing open', async () => {
    const model = await modelServer({ script: [{ text: 'done' }] });
    const { code, stdout } = await runSourceScript([
      "const { createModelClient } = await import('./src/model/model-client.ts');",
      `const route = { provider: 'local', model: 'test-model', baseUrl: '${model.baseUrl}', apiKey: 'k', apiMode: 'chat_completions' };`,
      "const { turn } = await createModelClient({ routes: [route] }).complete({ messages: [{ role: 'user', content: 'hi' }] });",
      'await new Promise((resolve) => setImmediate(resolve));',
      // Handles keeping the event loop alive: a pooled socket must not be one of them.
      'console.log(JSON.stringify({ content: turn.content, active: process.getActiveResourcesInfo() }));',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout.trim()) as { content: string; active: string[] };
    expect(report.content).toBe('done');
    expect(report.active).not.toContain('TCPSocketWrap');
  });
});
