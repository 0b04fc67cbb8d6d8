import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { BrowserControlBroker } from '../broker.js';
import type { ExtensionControlFlagSource } from '../flags.js';
import type { ControllerConnection } from '../transport/controller-connection.js';
import {
  type BrowserControlRoutesOptions,
  createBrowserControlRoutes,
} from '../transport/routes.js';
import {
  type BrowserControlUpgradeOptions,
  createBrowserControlUpgradeHandler,
} from '../transport/upgrade.js';

export interface LoopbackGateway {
  readonly baseUrl: string;
  readonly wsUrl: string;
  /** Accepted controller connections, in order. */
  readonly connections: ControllerConnection[];
  close(): Promise<void>;
}

/**
 * A minimal gateway for tests and benchmarks: a real `node:http` server on 127.0.0.1 port 0
 * serving the register/capabilities routes through hono and the controller socket through a
 * `noServer` ws server on `upgrade`, exactly as the gateway app mounts them.
 */
export async function startLoopbackGateway(options: {
  readonly broker: BrowserControlBroker;
  readonly flags: ExtensionControlFlagSource;
  readonly apiKey: string | undefined;
  readonly sessions?: ReadonlySet<string> | undefined;
  readonly routes?: Partial<BrowserControlRoutesOptions>;
  readonly connection?: BrowserControlUpgradeOptions['connection'];
  /** Adds the gateway's own routes and middleware (e.g. an agent-turn endpoint) before serving. */
  readonly extend?: (app: Hono) => void;
}): Promise<LoopbackGateway> {
  const sessions = options.sessions;
  const app = createBrowserControlRoutes({
    broker: options.broker,
    flags: options.flags,
    apiKey: () => options.apiKey,
    sessionExists: sessions ? ({ sessionId }) => sessions.has(sessionId) : undefined,
    ...options.routes,
  });
  options.extend?.(app);
  const connections: ControllerConnection[] = [];
  const upgrade = createBrowserControlUpgradeHandler({
    broker: options.broker,
    flags: options.flags,
    ...(options.connection ? { connection: options.connection } : {}),
    onConnection: (connection) => connections.push(connection),
  });
  const server = createServer(getRequestListener(app.fetch));
  server.on('upgrade', (request, socket, head) => {
    if (!upgrade.handleUpgrade(request, socket, head)) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    connections,
    async close() {
      await upgrade.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
