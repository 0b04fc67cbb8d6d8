import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startModelServer } from '@hermes/testkit';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlainHttpFetch } from './plain-http-fetch.js';
import { classifyFailure } from './retry-policy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** The SDK over Node's global fetch (what https routes use) and over the plain-http transport. */
const transports = [
  ['undici', undefined],
  ['node:http', createPlainHttpFetch()],
] as const;

const request = {
  model: 'test-model',
  stream: true as const,
  messages: [{ role: 'user' as const, content: 'hello' }],
};

/** What one streamed SDK call throws, whether before the response or while reading it. */
async function failureOf(baseUrl: string, fetch: (typeof transports)[number][1]) {
  const client = new OpenAI({
    apiKey: 'k',
    baseURL: baseUrl,
    maxRetries: 0,
    ...(fetch ? { fetch } : {}),
  });
  try {
    for await (const _chunk of await client.chat.completions.create(request));
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

describe('classifyFailure', () => {
  it.each(transports)(
    'names a reset before the response the same way over %s',
    async (_name, fetch) => {
      const model = await startModelServer({ script: [{ reset: true }] });
      cleanups.push(() => model.close());
      expect(classifyFailure(await failureOf(model.baseUrl, fetch))).toMatchObject({
        retryable: true,
        aborted: false,
        message: 'connection failed: ECONNRESET',
      });
    },
  );

  it.each(transports)('retries a connection dropped mid-body over %s', async (_name, fetch) => {
    const server = http.createServer((incoming, response) => {
      // Read the request first: unread bytes would turn the close into a reset before the headers.
      incoming.resume().on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(': first\n\n', () => response.socket?.destroy());
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    expect(classifyFailure(await failureOf(baseUrl, fetch))).toMatchObject({
      retryable: true,
      aborted: false,
      message: 'connection failed: ECONNRESET',
    });
  });

  it.each(transports)('names a refused connection over %s', async (_name, fetch) => {
    const server = http.createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    expect(classifyFailure(await failureOf(`http://127.0.0.1:${port}/v1`, fetch))).toMatchObject({
      retryable: true,
      message: 'connection failed: ECONNREFUSED',
    });
  });
});
