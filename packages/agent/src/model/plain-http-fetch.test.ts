import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { startModelServer } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { runSourceScript } from '../../test/fixtures.js';
import { AgentError } from '../errors.js';
import { emptyModelTurn } from './chat-message.js';
import {
  createModelClient as createDirectModelClient,
  createSdkModelClient,
  type ModelClientNotice,
} from './model-client.js';
import type { ModelRoute } from './model-route.js';
import { createPlainHttpFetch, fetchForBaseUrl } from './plain-http-fetch.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => unknown;

/** A real `node:http` server on loopback that records the connections it accepts. */
async function rawServer(handler: Handler) {
  const sockets: Socket[] = [];
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    void handler(request, response);
  });
  server.on('connection', (socket: Socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    sockets,
    get requests() {
      return requests;
    },
    keepIdleConnections() {
      server.keepAliveTimeout = 0;
    },
  };
}

async function modelServer(script: Parameters<typeof startModelServer>[0]) {
  const server = await startModelServer(script);
  cleanups.push(() => server.close());
  return server;
}

/** Resolves once the server's side of the connection has closed. */
function closed(socket: Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : once(socket, 'close').then(() => undefined);
}

async function readBody(request: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function sse(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function route(baseUrl: string): ModelRoute {
  return {
    provider: 'local',
    model: 'test-model',
    baseUrl,
    apiKey: 'k',
    apiMode: 'chat_completions',
  };
}

const hello = [{ role: 'user' as const, content: 'hello' }];

describe('fetchForBaseUrl', () => {
  it('picks the node:http transport for plain http and leaves https to the SDK', () => {
    const local = fetchForBaseUrl('http://127.0.0.1:11434/v1');
    expect(local).toBeTypeOf('function');
    expect(fetchForBaseUrl('HTTP://LOCALHOST:8000/v1')).toBe(local);
    expect(fetchForBaseUrl('https://api.openai.com/v1')).toBeUndefined();
    expect(fetchForBaseUrl('https://127.0.0.1:8443/v1')).toBeUndefined();
    expect(fetchForBaseUrl('not a url')).toBeUndefined();
  });
});

describe('createPlainHttpFetch', () => {
  it('sends string, byte and form bodies byte for byte with their length and content type', async () => {
    const server = await rawServer(async (request, response) => {
      const body = await readBody(request);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          method: request.method,
          length: request.headers['content-length'],
          type: request.headers['content-type'] ?? null,
          custom: request.headers['x-custom'] ?? null,
          body: body.toString('utf8'),
        }),
      );
    });
    const fetch = createPlainHttpFetch();
    const send = async (body?: RequestInit['body'], headers: Record<string, string> = {}) =>
      (
        await fetch(`${server.url}/echo`, { method: 'POST', headers, ...(body ? { body } : {}) })
      ).json();
    expect(
      await send('{"a":"é"}', { 'content-type': 'application/json', 'x-custom': '1' }),
    ).toEqual({
      method: 'POST',
      length: '10',
      type: 'application/json',
      custom: '1',
      body: '{"a":"é"}',
    });
    expect(await send('plain')).toMatchObject({ type: 'text/plain;charset=UTF-8', body: 'plain' });
    expect(await send(new TextEncoder().encode('bytes'))).toMatchObject({
      length: '5',
      type: null,
      body: 'bytes',
    });
    expect(await send(new TextEncoder().encode('xbuffer').buffer.slice(1))).toMatchObject({
      length: '6',
      body: 'buffer',
    });
    expect(await send(new URLSearchParams({ q: 'a b' }))).toMatchObject({
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
      body: 'q=a+b',
    });
    expect(await send(undefined)).toMatchObject({ length: '0', body: '' });
  });

  it('hands a body it does not send itself (FormData) to the global fetch', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      seen.push(request.headers);
      response.end('ok');
    });
    const form = new FormData();
    form.set('field', 'value');
    const response = await createPlainHttpFetch()(server.url, { method: 'POST', body: form });
    expect(await response.text()).toBe('ok');
    expect(seen[0]?.['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    // undici stamps every request with this; node:http does not.
    expect(seen[0]?.['sec-fetch-mode']).toBe('cors');
  });

  it('returns the status, reason phrase and repeated headers as the server sent them', async () => {
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      response.setHeader('x-multi', ['a', 'b']);
      response.setHeader('content-type', 'application/json');
      response.writeHead(418, 'Short And Stout');
      response.end('{"error":{"message":"teapot"}}');
    });
    const response = await createPlainHttpFetch()(`${server.url}/x`, { method: 'POST', body: '' });
    expect(response.status).toBe(418);
    expect(response.ok).toBe(false);
    expect(response.statusText).toBe('Short And Stout');
    expect(response.headers.get('x-multi')).toBe('a, b');
    expect(response.url).toBe(`${server.url}/x`);
    expect(await response.json()).toEqual({ error: { message: 'teapot' } });
  });

  it('returns a redirect as it came instead of following it', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(302, { location: '/elsewhere' });
      response.end();
    });
    const response = await createPlainHttpFetch()(`${server.url}/v1/models`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/elsewhere');
    expect(server.requests).toBe(1);
  });

  it('reuses one keep-alive connection for consecutive calls, also after HEAD and 204', async () => {
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      // Without a content-length Node's server closes the connection after a HEAD answer.
      if (request.url === '/empty') response.writeHead(204);
      else response.setHeader('content-length', '4');
      response.end('body');
    });
    const fetch = createPlainHttpFetch();
    expect(await (await fetch(server.url, { method: 'POST', body: 'a' })).text()).toBe('body');
    const head = await fetch(server.url, { method: 'HEAD' });
    expect(head.body).toBeNull();
    const empty = await fetch(`${server.url}/empty`, { method: 'POST', body: 'b' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await (await fetch(server.url, { method: 'POST', body: 'c' })).text()).toBe('body');
    expect(server.requests).toBe(4);
    expect(server.sockets).toHaveLength(1);
  });

  it('keeps a request open through a long wait for headers even when idle sockets time out fast', async () => {
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      await new Promise((resolve) => setTimeout(resolve, 300));
      response.end('late');
    });
    const fetch = createPlainHttpFetch({ idleTimeoutMs: 20 });
    expect(await (await fetch(server.url, { method: 'POST', body: 'x' })).text()).toBe('late');
  });

  it('decodes a gzip body although it asks for none', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = await rawServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end(gzipSync('data: compressed\n\n'));
    });
    const response = await createPlainHttpFetch()(server.url);
    expect(await response.text()).toBe('data: compressed\n\n');
    expect(seen[0]?.['accept-encoding']).toBeUndefined();
  });

  it('rejects a refused connection as fetch does, with the socket error as the cause', async () => {
    const port = await closedPort();
    const error = await createPlainHttpFetch()(`http://127.0.0.1:${port}/`).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('rejects an already aborted call with AbortError without connecting', async () => {
    const server = await rawServer((_request, response) => response.end());
    const error = await createPlainHttpFetch()(server.url, { signal: AbortSignal.abort() }).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('AbortError');
    expect(server.sockets).toHaveLength(0);
  });

  it('aborts while waiting for headers: rejects with AbortError and closes the connection', async () => {
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await rawServer(() => arrived());
    const controller = new AbortController();
    const pending = createPlainHttpFetch()(server.url, { signal: controller.signal });
    await requestArrived;
    controller.abort();
    const error = await pending.catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('AbortError');
    await closed(server.sockets[0] as Socket);
  });

  it('aborts mid-body: the body errors with AbortError and the connection closes', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    });
    const controller = new AbortController();
    const response = await createPlainHttpFetch()(server.url, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    controller.abort();
    const error = await reader.read().catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('AbortError');
    await closed(server.sockets[0] as Socket);
  });

  it('errors the body instead of ending it when the connection drops mid-body', async () => {
    const server = await rawServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n', () => response.socket?.destroy());
    });
    const response = await createPlainHttpFetch()(server.url);
    const error = await response.text().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('terminated');
    expect(((error as TypeError).cause as { code?: string }).code).toBe('ECONNRESET');
  });

  it('closes the connection when the body is cancelled, and the next call opens a fresh one', async () => {
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      if (request.url === '/hold') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: first\n\n');
      } else response.end('fresh');
    });
    const fetch = createPlainHttpFetch();
    const held = await fetch(`${server.url}/hold`);
    const reader = (held.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    await closed(server.sockets[0] as Socket);
    expect(await (await fetch(`${server.url}/next`)).text()).toBe('fresh');
    expect(server.sockets).toHaveLength(2);
  });

  it('lets a process that made a call exit: pooled sockets do not hold it open', async () => {
    const server = await rawServer(async (request, response) => {
      await readBody(request);
      response.end('done');
    });
    // The server never closes idle connections, so only an unref'd pooled socket lets the child end.
    server.keepIdleConnections();
    const { code, stdout } = await runSourceScript([
      "const { createPlainHttpFetch } = await import('./src/model/plain-http-fetch.ts');",
      'const fetch = createPlainHttpFetch({ idleTimeoutMs: 600_000 });',
      `const response = await fetch('${server.url}/', { method: 'POST', body: 'x' });`,
      'console.log(await response.text());',
    ]);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe('done');
    expect(server.sockets).toHaveLength(1);
  });
});

describe.each([
  ['direct node:http', createDirectModelClient],
  ['the openai SDK over plain-http fetch', createSdkModelClient],
])(
  'createModelClient over plain http, chat completions over %s',
  (_transport, createModelClient) => {
    it("sends model calls on an http route through node:http, without undici's fetch defaults", async () => {
      const model = await modelServer({ script: [{ text: 'ok' }] });
      const client = createModelClient({ routes: [route(model.baseUrl)] });
      expect((await client.complete({ messages: hello })).turn.content).toBe('ok');
      const headers = model.modelRequests[0]?.headers ?? {};
      expect(headers.authorization).toBe('Bearer k');
      expect(headers['sec-fetch-mode']).toBeUndefined();
      expect(headers['accept-encoding']).toBeUndefined();
    });

    it('streams deltas in order, each as it arrives', async () => {
      const words = ['one ', 'two ', 'three'];
      const acknowledgements: (() => void)[] = [];
      const server = await rawServer(async (request, response) => {
        await readBody(request);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(sse({ role: 'assistant', content: '' }));
        // The next word is sent only once the client has handed on the previous one: a transport
        // that buffered the body would never see a delta and the call would hang.
        for (const word of words) {
          const delivered = new Promise<void>((resolve) => acknowledgements.push(resolve));
          response.write(sse({ content: word }));
          await delivered;
        }
        response.write(sse({}, 'stop'));
        response.end('data: [DONE]\n\n');
      });
      const deltas: string[] = [];
      const client = createModelClient({ routes: [route(server.baseUrl)] });
      const { turn } = await client.complete({
        messages: hello,
        onTextDelta: (text) => {
          deltas.push(text);
          acknowledgements.shift()?.();
        },
      });
      expect(deltas).toEqual(words);
      expect(turn.content).toBe('one two three');
      expect(turn.finishReason).toBe('stop');
    });

    it('ends a call aborted mid-stream as interrupted and closes the connection', async () => {
      const server = await rawServer(async (request, response) => {
        await readBody(request);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(sse({ content: 'partial' }));
      });
      const controller = new AbortController();
      const turn = emptyModelTurn();
      const client = createModelClient({ routes: [route(server.baseUrl)] });
      const error = await client
        .complete({
          messages: hello,
          signal: controller.signal,
          turn,
          onTextDelta: () => controller.abort(),
        })
        .catch((caught: unknown) => caught);
      expect(AgentError.isInstance(error)).toBe(true);
      expect((error as AgentError).code).toBe('interrupted');
      expect(turn.content).toBe('partial');
      await closed(server.sockets[0] as Socket);
    });

    it('retries a connection dropped mid-body, before any text, as a connection failure', async () => {
      const server = await rawServer(async (request, response) => {
        await readBody(request);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        if (server.requests === 1) {
          response.write(sse({ role: 'assistant', content: '' }), () => response.socket?.destroy());
          return;
        }
        response.write(sse({ content: 'recovered' }));
        response.end('data: [DONE]\n\n');
      });
      const notices: ModelClientNotice[] = [];
      const client = createModelClient({
        routes: [route(server.baseUrl)],
        onNotice: (notice) => notices.push(notice),
      });
      expect((await client.complete({ messages: hello })).turn.content).toBe('recovered');
      expect(notices).toEqual([
        expect.objectContaining({
          type: 'model.retry',
          attempt: 1,
          reason: 'connection failed: ECONNRESET',
        }),
      ]);
      expect(server.requests).toBe(2);
    });

    it('classifies a refused connection as a connection failure', async () => {
      const port = await closedPort();
      const notices: ModelClientNotice[] = [];
      const client = createModelClient({
        routes: [route(`http://127.0.0.1:${port}/v1`)],
        maxRetries: 1,
        onNotice: (notice) => notices.push(notice),
      });
      const error = await client.complete({ messages: hello }).catch((caught: unknown) => caught);
      expect(notices.map((notice) => notice.type === 'model.retry' && notice.reason)).toEqual([
        'connection failed: ECONNREFUSED',
      ]);
      expect((error as AgentError).code).toBe('provider_unavailable');
      expect((error as AgentError).message).toBe(
        'provider local is unavailable (connection failed: ECONNREFUSED) and no fallback provider answered',
      );
    });

    it("ends on a non-2xx JSON error with the provider's own message", async () => {
      const model = await modelServer({
        script: [{ error: { status: 422, message: 'context length exceeded for test-model' } }],
      });
      const client = createModelClient({ routes: [route(model.baseUrl)] });
      const error = await client.complete({ messages: hello }).catch((caught: unknown) => caught);
      expect((error as AgentError).code).toBe('provider_error');
      expect((error as AgentError).status).toBe(422);
      expect((error as AgentError).message).toBe('context length exceeded for test-model');
    });
  },
);
