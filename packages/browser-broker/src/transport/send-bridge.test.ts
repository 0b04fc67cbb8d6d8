import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { BrowserControlBroker } from '../broker.js';
import { SOCKET_CLOSED_MESSAGE } from '../constants.js';
import { BrowserControllerConnectionError } from '../errors.js';
import { createScope } from '../scope.js';
import { createWebSocketSender } from './send-bridge.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real loopback ws pair: the server side (what the broker writes to) and the peer. */
async function socketPair(): Promise<{ server: WebSocket; peer: WebSocket }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const peer = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  await new Promise<void>((resolve) => peer.once('open', () => resolve()));
  const server = await accepted;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        peer.terminate();
        wss.close(() => resolve());
      }),
  );
  return { server, peer };
}

// Big enough to overflow loopback kernel buffers while the peer is not reading.
const HUGE = 'x'.repeat(16 * 1024 * 1024);
const frame = (text: string) => ({ method: 'browser.controller.command', params: { blob: text } });

describe('createWebSocketSender', () => {
  it('throws a connection error at once when the socket is not open', async () => {
    const { server } = await socketPair();
    server.close();
    const send = createWebSocketSender(server);
    let caught: unknown;
    try {
      await send(frame('x'));
    } catch (error) {
      caught = error;
    }
    expect(BrowserControllerConnectionError.isInstance(caught)).toBe(true);
    expect((caught as Error).message).toBe(SOCKET_CLOSED_MESSAGE);
  });

  it('resolves after a completed write', async () => {
    const { server, peer } = await socketPair();
    const received = new Promise<string>((resolve) =>
      peer.once('message', (data) => resolve(data.toString())),
    );
    await createWebSocketSender(server)(frame('hello'));
    expect(JSON.parse(await received).params.blob).toBe('hello');
  });

  it('treats a write still running after the wait bound as in flight, not as a failure', async () => {
    const { server, peer } = await socketPair();
    peer.pause();
    const lateFailures: Error[] = [];
    const send = createWebSocketSender(server, {
      waitMilliseconds: 50,
      onLateFailure: (error) => lateFailures.push(error),
    });
    await expect(send(frame(HUGE))).resolves.toBeUndefined();
    expect(server.bufferedAmount).toBeGreaterThan(0);
    const received = new Promise<number>((resolve) =>
      peer.once('message', (data) => resolve(data.toString().length)),
    );
    peer.resume();
    expect(await received).toBeGreaterThan(HUGE.length);
    expect(lateFailures).toEqual([]);
  });

  it('rejects with the socket error when the write really fails', async () => {
    const { server, peer } = await socketPair();
    peer.pause();
    await createWebSocketSender(server, { waitMilliseconds: 50 })(frame(HUGE));
    // Queued behind the stalled write, this one is still in the stream when the socket dies.
    const sending = createWebSocketSender(server, { waitMilliseconds: 5_000 })(frame('small'));
    server.terminate();
    await expect(sending).rejects.toMatchObject({ code: 'ERR_STREAM_DESTROYED' });
  });

  it('fails the dispatch with the socket error and releases its id when the write really fails', async () => {
    const { server, peer } = await socketPair();
    const broker = new BrowserControlBroker({ developerMode: false, commandTimeoutSeconds: 10 });
    const scope = createScope({
      principalId: 'p',
      sessionId: 's',
      transportFamily: 'local-api',
      capabilities: ['controller.noop'],
    });
    await broker.attach(scope, createWebSocketSender(server, { waitMilliseconds: 5_000 }), server);
    // Earlier traffic the peer is not reading keeps the command's write queued in the stream.
    peer.pause();
    server.send(JSON.stringify(frame(HUGE)));
    const running = broker.dispatch({ scope, action: 'controller.noop' });
    running.catch(() => {});
    const deadline = performance.now() + 5_000;
    while (broker.pendingCount === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(broker.pendingCount).toBe(1);
    server.terminate();
    await expect(running).rejects.toMatchObject({ code: 'ERR_STREAM_DESTROYED' });
    expect(broker.pendingCount).toBe(0);
  });

  it('keeps a slowly written command pending under its own deadline until the result arrives', async () => {
    const { server, peer } = await socketPair();
    const broker = new BrowserControlBroker({ developerMode: false, commandTimeoutSeconds: 10 });
    const scope = createScope({
      principalId: 'p',
      sessionId: 's',
      transportFamily: 'local-api',
      capabilities: ['controller.noop'],
    });
    await broker.attach(scope, createWebSocketSender(server, { waitMilliseconds: 50 }), server);
    peer.pause();
    const running = broker.dispatch({
      scope,
      action: 'controller.noop',
      arguments: { blob: HUGE },
    });
    const commandId = new Promise<string>((resolve) =>
      peer.once('message', (data) => resolve(JSON.parse(data.toString()).params.command_id)),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(broker.pendingCount).toBe(1);
    peer.resume();
    expect(broker.complete(await commandId, { ok: true, result: 'delivered' })).toBe(true);
    await expect(running).resolves.toBe('delivered');
  });
});
