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

let broker: BrowserControlBroker | undefined;

async function start(): Promise<LoopbackGateway> {
  const flags = () => ({ enabled: true, developerMode: false });
  broker = new BrowserControlBroker({ flags });
  gateway = await startLoopbackGateway({
    broker,
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

describe('BrowserControllerClient command handlers', () => {
  it('see their signal already aborted when they first read it after the cancel', async () => {
    const server = await start();
    let cancelSeen!: () => void;
    const cancelArrived = new Promise<void>((resolve) => {
      cancelSeen = resolve;
    });
    const abortedAtFirstRead: boolean[] = [];
    const controller = client(server, {
      handlers: {
        // Looks at its signal only once the cancel has been handled.
        'controller.noop': async (_args, context) => {
          await cancelArrived;
          abortedAtFirstRead.push(context.signal.aborted);
          return 'late';
        },
      },
      onCancel: () => cancelSeen(),
    });
    await controller.connect();
    const scope = broker?.scopeForSession({
      sessionId: SESSION,
      principalId: controller.registration?.scope.principal_id,
      transportFamily: 'local-api',
    });
    if (!broker || !scope) throw new Error('the controller did not attach');
    const running = broker.dispatch({ scope, action: 'controller.noop', toolCallId: 'call-7' });
    running.catch(() => {});
    const deadline = performance.now() + 5_000;
    while (broker.pendingCount === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(await broker.cancel(scope, 'call-7')).toBe(true);
    await cancelArrived;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(abortedAtFirstRead).toEqual([true]);
    await controller.close();
  });
});
