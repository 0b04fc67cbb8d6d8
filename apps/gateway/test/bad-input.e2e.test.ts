import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startConfiguredGateway, startGateway } from './gateway-process.js';

type Probe = {
  method: string;
  path: string;
  body?: string;
  json?: unknown;
  headers?: Record<string, string>;
};

/** The profile's store, opened beside the gateway and closed when the test finishes. */
async function openStore(home: string): Promise<SessionStore> {
  const store = await openSessionStore({ path: path.join(home, 'state.db') });
  onTestFinished(() => store.close());
  return store;
}

/**
 * Writes `bytes` on a new connection to `url` and resolves with everything the server wrote until
 * it closed the connection. `later` is written once the first bytes of the answer are back.
 */
function rawExchange(url: string, bytes: string, later = ''): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      if (chunks.length === 0 && later) socket.write(later);
      chunks.push(chunk);
    });
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** Every stored session, hidden, archived and children included. */
function everySession(store: SessionStore) {
  return store.listSessionsRich({
    includeHidden: true,
    includeArchived: true,
    includeChildren: true,
  });
}

describe('bad input on every route', () => {
  it('answers 4xx in the OpenAI shape, never 500, and changes nothing', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: { title: 'keep' },
    });
    const id = made.body.session.id;

    const bodies: { body?: string; json?: unknown }[] = [
      { body: '{not json' },
      { body: '' },
      { json: [] },
      { json: 'a string' },
      { json: null },
      { json: 42 },
    ];
    const posts = [
      '/api/sessions',
      `/api/sessions/${id}/fork`,
      `/api/sessions/${id}/chat`,
      `/api/sessions/${id}/chat/stream`,
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/runs',
    ];
    const probes: Probe[] = [];
    for (const pathname of posts)
      for (const body of bodies) {
        // An empty body is a valid "no options" for create and fork.
        if (body.body === '' && (pathname === '/api/sessions' || pathname.endsWith('/fork')))
          continue;
        probes.push({ method: 'POST', path: pathname, ...body });
      }
    for (const body of bodies)
      probes.push({ method: 'PATCH', path: `/api/sessions/${id}`, ...body });
    probes.push(
      // Wrong types and missing fields.
      { method: 'POST', path: '/api/sessions', json: { title: ['x'] } },
      { method: 'POST', path: '/api/sessions', json: { hidden: 'yes' } },
      { method: 'POST', path: '/api/sessions', json: { id: '' } },
      { method: 'POST', path: '/api/sessions', json: { title: 'x'.repeat(101) } },
      { method: 'POST', path: '/api/sessions', json: { id: 'chat-a', session_id: 'chat-b' } },
      { method: 'POST', path: `/api/sessions/${id}/chat`, json: {} },
      { method: 'POST', path: `/api/sessions/${id}/chat`, json: { message: '   ' } },
      { method: 'POST', path: `/api/sessions/${id}/chat`, json: { message: 7 } },
      { method: 'POST', path: `/api/sessions/${id}/chat`, json: { message: 'hi', wait: 'no' } },
      { method: 'POST', path: `/api/sessions/${id}/chat/stream`, json: { message: null } },
      { method: 'POST', path: `/api/sessions/${id}/fork`, json: { title: 5 } },
      { method: 'PATCH', path: `/api/sessions/${id}`, json: { title: 5 } },
      { method: 'PATCH', path: `/api/sessions/${id}`, json: { end_reason: '' } },
      { method: 'PATCH', path: `/api/sessions/${id}`, json: { archived: 1 } },
      { method: 'POST', path: '/v1/chat/completions', json: { messages: [] } },
      { method: 'POST', path: '/v1/chat/completions', json: { messages: 'hi' } },
      {
        method: 'POST',
        path: '/v1/chat/completions',
        json: { messages: [{ role: 'wizard', content: 'x' }] },
      },
      {
        method: 'POST',
        path: '/v1/chat/completions',
        json: { messages: [{ role: 'assistant', content: 'x' }] },
      },
      {
        method: 'POST',
        path: '/v1/chat/completions',
        json: { messages: [{ role: 'user', content: 'x' }], stream: 'yes' },
      },
      {
        method: 'POST',
        path: '/v1/chat/completions',
        json: { messages: [{ role: 'user', content: 'x' }] },
        headers: { 'x-hermes-session-id': '../../etc' },
      },
      {
        method: 'POST',
        path: '/v1/chat/completions',
        json: { messages: [{ role: 'user', content: 'x' }] },
        headers: { 'x-hermes-session-key': 'peer-1' },
      },
      { method: 'POST', path: '/v1/responses', json: {} },
      { method: 'POST', path: '/v1/responses', json: { input: '' } },
      {
        method: 'POST',
        path: '/v1/responses',
        json: { input: [{ role: 'assistant', content: 'x' }] },
      },
      {
        method: 'POST',
        path: '/v1/responses',
        json: { input: 'x', previous_response_id: 'resp_unknown' },
      },
      { method: 'POST', path: '/v1/responses', json: { input: 'x', store: 'no' } },
      { method: 'POST', path: '/v1/runs', json: {} },
      { method: 'POST', path: '/v1/runs', json: { input: 5 } },
      { method: 'POST', path: '/v1/runs', json: { input: 'x', session_id: 'unknown' } },
      // Unknown ids.
      { method: 'GET', path: '/api/sessions/unknown' },
      { method: 'PATCH', path: '/api/sessions/unknown', json: { pinned: true } },
      { method: 'DELETE', path: '/api/sessions/unknown' },
      { method: 'GET', path: '/api/sessions/unknown/messages' },
      { method: 'POST', path: '/api/sessions/unknown/fork', json: {} },
      { method: 'POST', path: '/api/sessions/unknown/chat', json: { message: 'hi' } },
      { method: 'POST', path: '/api/sessions/unknown/chat/stream', json: { message: 'hi' } },
      { method: 'GET', path: '/v1/responses/resp_unknown' },
      { method: 'DELETE', path: '/v1/responses/resp_unknown' },
      // Longer than any stored response id: still a plain 404.
      { method: 'GET', path: `/v1/responses/resp_${'x'.repeat(300)}` },
      { method: 'DELETE', path: `/v1/responses/resp_${'x'.repeat(300)}` },
      {
        method: 'POST',
        path: '/v1/responses',
        json: { input: 'x', previous_response_id: 'r'.repeat(300) },
      },
      { method: 'GET', path: '/v1/runs/run_unknown' },
      { method: 'GET', path: '/v1/runs/run_unknown/events' },
      { method: 'POST', path: '/v1/runs/run_unknown/stop' },
      // Bad query values.
      { method: 'GET', path: '/api/sessions?limit=-x' },
      { method: 'GET', path: `/api/sessions/${id}/messages?after_id=abc` },
      { method: 'GET', path: `/api/sessions/${id}/messages?order=random` },
      // A single-session conversation needs no confirmation, but a malformed one is still refused.
      { method: 'DELETE', path: `/api/sessions/${id}?confirm_cascade=maybe` },
    );

    for (const probe of probes) {
      const label = `${probe.method} ${probe.path} ${probe.body ?? JSON.stringify(probe.json)}`;
      const init: RequestInit & { json?: unknown } = {
        method: probe.method,
        ...(probe.headers ? { headers: probe.headers } : {}),
      };
      if (probe.body !== undefined) init.body = probe.body;
      if ('json' in probe) init.json = probe.json;
      const response = await gateway.json<{
        error?: { code?: string; type?: string; message?: string };
      }>(probe.path, init);
      expect(response.status, label).toBeGreaterThanOrEqual(400);
      expect(response.status, label).toBeLessThan(500);
      expect(typeof response.body.error?.code, label).toBe('string');
      expect(typeof response.body.error?.message, label).toBe('string');
    }

    expect(model.modelRequests).toHaveLength(0);
    const store = await openStore(gateway.home);
    const sessions = everySession(store);
    expect(sessions.sessions.map((session) => session.id)).toEqual([id]);
    expect(store.getSession(id)).toMatchObject({
      title: 'keep',
      messageCount: 0,
      endedAt: null,
      pinned: 0,
      archived: 0,
    });
  });
});

describe('integer query parameters', () => {
  it('accept plain decimal digits only: hex, exponents, signs, blanks and fractions are a 400 naming the parameter (an unparsable offset is the default)', async () => {
    const gateway = await startGateway();
    const ids: string[] = [];
    for (const title of ['one', 'two', 'three']) {
      const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
        method: 'POST',
        json: { title },
      });
      ids.push(made.body.session.id);
    }
    const chat = ids[0] ?? '';
    const notDigits = ['0x10', '1e1', '+5', '%205', '5%20', '1.0', '1_0', '-1', '%20', '٣'];
    const strict = [
      ['/api/sessions', 'limit'],
      [`/api/sessions/${chat}/messages`, 'limit'],
      [`/api/sessions/${chat}/messages`, 'after_id'],
    ] as const;
    for (const [route, name] of strict)
      for (const value of notDigits) {
        const label = `${route}?${name}=${value}`;
        const refused = await gateway.json(`${route}?${name}=${value}`);
        expect(refused.status, label).toBe(400);
        expect(refused.body, label).toMatchObject({
          error: { code: 'invalid_request', type: 'invalid_request_error', param: name },
        });
      }
    // The reference reads an unparsable offset as the default, never as another number.
    for (const value of notDigits) {
      const listed = await gateway.json<{ offset: number; data: unknown[] }>(
        `/api/sessions?offset=${value}`,
      );
      expect(listed.status, value).toBe(200);
      expect(listed.body.offset, value).toBe(0);
      expect(listed.body.data, value).toHaveLength(3);
    }
    // Digits, leading zeros included, are read as decimal; an empty value is the default.
    const page = await gateway.json<{ limit: number; offset: number; data: unknown[] }>(
      '/api/sessions?limit=010&offset=02',
    );
    expect(page.body).toMatchObject({ limit: 10, offset: 2 });
    expect(page.body.data).toHaveLength(1);
    expect((await gateway.json('/api/sessions?limit=&offset=')).body).toMatchObject({
      limit: 50,
      offset: 0,
    });
    expect((await gateway.json(`/api/sessions/${chat}/messages?limit=08&after_id=0`)).status).toBe(
      200,
    );
  });
});

describe('malformed fields the schema alone let through', () => {
  it('refuses them with 400 invalid_request naming the field, before anything runs or is stored', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const refused: { path: string; json: unknown; param: string }[] = [
      {
        path: '/v1/responses',
        json: { input: 'x', previous_response_id: '' },
        param: 'previous_response_id',
      },
    ];
    // Tool history a provider would refuse on every later turn of the session it was stored in.
    const call = { id: 'call_1', type: 'function', function: { name: 'todo', arguments: '{}' } };
    const toolHistory = (assistant: unknown, tool: unknown = { tool_call_id: 'call_1' }) => ({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, ...(assistant as object) },
        { role: 'tool', content: 'result', ...(tool as object) },
        { role: 'user', content: 'now' },
      ],
    });
    const completions = (json: unknown, param: string) =>
      refused.push({ path: '/v1/chat/completions', json, param });
    completions(
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{}] },
          { role: 'tool', content: 'orphan result' },
          { role: 'user', content: 'now' },
        ],
      },
      'messages.1.tool_calls.0.id',
    );
    completions(toolHistory({ tool_calls: [{ ...call, id: '' }] }), 'messages.1.tool_calls.0.id');
    completions(
      toolHistory({ tool_calls: [{ ...call, type: 'custom' }] }),
      'messages.1.tool_calls.0.type',
    );
    completions(
      toolHistory({ tool_calls: [{ id: 'call_1', type: 'function' }] }),
      'messages.1.tool_calls.0.function',
    );
    completions(
      toolHistory({ tool_calls: [{ ...call, function: { name: '', arguments: '{}' } }] }),
      'messages.1.tool_calls.0.function.name',
    );
    completions(
      toolHistory({ tool_calls: [{ ...call, function: { name: 'todo', arguments: {} } }] }),
      'messages.1.tool_calls.0.function.arguments',
    );
    completions(toolHistory({ tool_calls: [call] }, {}), 'messages.2.tool_call_id');
    completions(
      toolHistory({ tool_calls: [call] }, { tool_call_id: '' }),
      'messages.2.tool_call_id',
    );
    // An image alone is no prompt: images are not sent to the model.
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    completions({ messages: [{ role: 'user', content: [image] }] }, 'messages');
    completions(
      { messages: [{ role: 'user', content: [image, { type: 'text', text: '  ' }] }] },
      'messages',
    );
    refused.push({
      path: '/v1/responses',
      json: {
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
          },
        ],
      },
      param: 'input',
    });
    // An array is an object to valibot's object schemas, and would be taken as an empty one.
    const user = { role: 'user', content: 'x' };
    completions({ messages: [user], stream_options: [] }, 'stream_options');
    completions({ messages: [user], stream_options: [null] }, 'stream_options');
    completions({ messages: [[], user] }, 'messages.0');
    completions(
      toolHistory({ tool_calls: [{ ...call, function: [] }] }),
      'messages.1.tool_calls.0.function',
    );
    refused.push({ path: '/v1/responses', json: { input: [[], user] }, param: 'input' });
    refused.push({
      path: '/v1/responses',
      json: { input: 'x', metadata: ['x'] },
      param: 'metadata',
    });
    for (const probe of refused) {
      const label = `${probe.path} ${JSON.stringify(probe.json)}`;
      const response = await gateway.json<{ error?: { code?: string; param?: string } }>(
        probe.path,
        { method: 'POST', json: probe.json },
      );
      expect(response.status, label).toBe(400);
      expect(response.body.error, label).toMatchObject({
        code: 'invalid_request',
        param: probe.param,
      });
    }
    expect(model.modelRequests).toHaveLength(0);
    const sessions = everySession(await openStore(gateway.home));
    expect(sessions.sessions).toEqual([]);
  });
});

describe('requests the HTTP adapter cannot turn into a URL', () => {
  it('answers a Host header that names no host, or a backslash in the path, 400 invalid_request in the OpenAI shape', async () => {
    const gateway = await startGateway();
    const { port } = new URL(gateway.url);
    const send = (target: string, host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port: Number(port), path: target, headers: { host } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
            );
          },
        );
        request.on('error', reject);
        request.end();
      });
    for (const [target, host] of [
      ['/v1/models', 'localhost:99999'],
      ['/v1/models', 'exa mple'],
      ['/api/sessions\\x', `127.0.0.1:${port}`],
    ] as const) {
      const label = `${target} Host: ${host}`;
      const answer = await send(target, host);
      expect(answer.status, label).toBe(400);
      expect(JSON.parse(answer.body || 'null'), label).toMatchObject({
        error: { code: 'invalid_request', type: 'invalid_request_error', param: null },
      });
    }
    expect((await gateway.json('/health')).status).toBe(200);
  });
});

describe('requests Node cannot parse', () => {
  it('answers them in the OpenAI shape (400, or 431 for oversized headers) and keeps serving', async () => {
    const gateway = await startGateway();
    const probes: [string, number, string][] = [
      ['GET \\health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
      ['GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'invalid_request'],
      ['FUZZ /health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
      [
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'request_header_fields_too_large',
      ],
    ];
    for (const [bytes, status, code] of probes) {
      const label = JSON.stringify(bytes.slice(0, 60));
      const answer = await rawExchange(gateway.url, bytes);
      expect(answer, label).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      expect(JSON.parse(body || 'null'), label).toMatchObject({
        error: { code, type: 'invalid_request_error', param: null },
      });
    }
    expect((await gateway.json('/health')).status).toBe(200);
  });
});

describe('bytes Node cannot parse after a valid request on the same connection', () => {
  it('answer the valid request first, then 400 and close (the answer in flight is not lost)', async () => {
    // The model answers late, so both answers are still owed when the garbage arrives.
    const { gateway } = await startConfiguredGateway([
      { text: 'first answer', delayMs: 300 },
      // Streamed in slow pieces: the answer is half written when the garbage arrives.
      { text: 'streamed answer', chunkSize: 4, chunkDelayMs: 100 },
    ]);
    const chat = (stream: boolean) => {
      const body = JSON.stringify({
        model: 'hermes-agent',
        stream,
        messages: [{ role: 'user', content: 'hello' }],
      });
      return `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    const garbage = 'FUZZ /health HTTP/1.1\r\nHost: x\r\n\r\n';

    const plain = await rawExchange(gateway.url, chat(false) + garbage);
    expect(plain).toMatch(/^HTTP\/1\.1 200 /);
    expect(plain).toContain('first answer');
    const refusal = plain.indexOf('HTTP/1.1 400 ');
    expect(refusal).toBeGreaterThan(plain.indexOf('first answer'));
    expect(plain.slice(refusal)).toContain('"code":"invalid_request"');

    // The same while the answer is an SSE stream already partly written.
    const streamed = await rawExchange(gateway.url, chat(true), garbage);
    expect(streamed).toMatch(/^HTTP\/1\.1 200 /);
    const deltas = [...streamed.matchAll(/"delta":\{[^}]*"content":"([^"]*)"/g)].map((m) => m[1]);
    expect(deltas.join('')).toBe('streamed answer');
    expect(streamed).toContain('data: [DONE]');
    expect(streamed.indexOf('HTTP/1.1 400 ')).toBeGreaterThan(streamed.indexOf('data: [DONE]'));
    expect((await gateway.json('/health')).status).toBe(200);
  });
});

describe('response metadata under the keys an object has built in', () => {
  it('checks and keeps __proto__, constructor and prototype entries like any other', async () => {
    const { model, gateway } = await startConfiguredGateway([{ text: 'ok' }]);
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const refused = await gateway.request('/v1/responses', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"input":"x","metadata":{"${key}":[null]}}`,
      });
      expect(refused.status, key).toBe(400);
      expect(await refused.json(), key).toMatchObject({
        error: { code: 'invalid_request', param: 'metadata' },
      });
    }
    expect(model.modelRequests).toHaveLength(0);
    const metadata = '{"__proto__":"a","constructor":"b","prototype":"c","run":"d"}';
    const kept = await gateway.request('/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"input":"x","metadata":${metadata}}`,
    });
    expect(kept.status).toBe(200);
    const body = (await kept.text()).replace(/\s/g, '');
    expect(body).toContain(`"metadata":${metadata}`);
    const id = (JSON.parse(body) as { id: string }).id;
    expect(await (await gateway.request(`/v1/responses/${id}`)).text()).toContain(
      `"metadata":${metadata}`,
    );
  });
});

describe('a huge refused value', () => {
  it('is quoted in the error cut to 200 characters, not echoed back whole', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const refused = await gateway.request('/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'x',
        messages: [{ role: 'z'.repeat(500_000), content: 'hi' }],
      }),
    });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text.length).toBeLessThan(1000);
    expect(JSON.parse(text)).toMatchObject({
      error: {
        code: 'invalid_request',
        param: 'messages.0.role',
        message: expect.stringMatching(/^Invalid 'messages\.0\.role': .*"zzz+…$/),
      },
    });
    expect(model.modelRequests).toHaveLength(0);
  });
});

describe('deeply nested JSON', () => {
  it('is refused with 400 invalid_request before anything runs or is stored, wherever it sits', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: { title: 'keep' },
    });
    const id = made.body.session.id;
    // JSON.parse reads 10 000 levels; JSON.stringify (storing it, sending it on) cannot.
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const toolHistory = (extra: string) =>
      `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"todo","arguments":"{}"},"extra":${extra}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"user","content":"now"}]}`;
    const probes: [string, string, Record<string, string>][] = [
      ['/v1/chat/completions', toolHistory(deep), {}],
      ['/v1/chat/completions', toolHistory(deep), { 'x-hermes-session-id': 'deep-session' }],
      ['/v1/responses', `{"input":[{"role":"user","content":"x","extra":${deep}}]}`, {}],
      ['/v1/runs', `{"input":"x","extra":${deep}}`, {}],
      ['/api/sessions', `{"title":"deep","extra":${deep}}`, {}],
      [`/api/sessions/${id}/chat`, `{"message":"x","extra":${deep}}`, {}],
      [`/api/sessions/${id}/fork`, `{"extra":${deep}}`, {}],
    ];
    for (const [pathname, body, headers] of probes) {
      const response = await gateway.json<{ error?: { code?: string } }>(pathname, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      expect(response.status, pathname).toBe(400);
      expect(response.body.error?.code, pathname).toBe('invalid_request');
    }
    expect(model.modelRequests).toHaveLength(0);
    const sessions = everySession(await openStore(gateway.home));
    expect(sessions.sessions.map((session) => session.id)).toEqual([id]);
  });
});
