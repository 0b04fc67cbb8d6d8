import { afterEach, describe, expect, it } from 'vitest';
import { BrowserControlBroker } from '../broker.js';
import { BrowserControllerConnectionError } from '../errors.js';
import { type LoopbackGateway, startLoopbackGateway } from '../testing/loopback-gateway.js';
import {
  BrowserControllerClient,
  type BrowserControllerClientOptions,
} from './controller-client.js';

const API_KEY = 'client-test-key-0123456789';
const SESSION = 'session-client';

let gateway: LoopbackGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(): Promise<LoopbackGateway> {
  const flags = () => ({ enabled: true, developerMode: false });
  gateway = await startLoopbackGateway({
    broker: new BrowserControlBroker({ flags }),
    flags,
    apiKey: API_KEY,
    sessions: new Set([SESSION]),
  });
  return gateway;
}

function client(
  server: LoopbackGateway,
  overrides: Partial<BrowserControllerClientOptions> = {},
): BrowserControllerClient {
  return new BrowserControllerClient({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    sessionId: SESSION,
    controllerId: 'ext-client',
    browserProfileId: 'chrome-default',
    capabilities: ['controller.noop'],
    handlers: {},
    ...overrides,
  });
}

describe('BrowserControllerClient.detach', () => {
  it('closes the socket once the server acknowledged it, without reporting a disconnect', async () => {
    const server = await start();
    const disconnects: number[] = [];
    const controller = client(server, { onDisconnect: (code) => disconnects.push(code) });
    await controller.connect();
    await controller.detach();
    expect(controller.connected).toBe(false);
    // The server side of the socket is gone too: nothing is left to keep a process alive.
    await server.connections[0]?.closed;
    expect(disconnects).toEqual([]);
  });

  it('closes the socket and rejects when no acknowledgement comes', async () => {
    const server = await start();
    const stale = client(server);
    await stale.connect();
    // The same identity reattaches through another socket: the stale one no longer owns the
    // controller, so the server drops its detach without an answer.
    await client(server).connect();
    await expect(stale.detach(200)).rejects.toSatisfy(BrowserControllerConnectionError.isInstance);
    expect(stale.connected).toBe(false);
    await server.connections[0]?.closed;
  });
});
