import type { Readable, Writable } from 'node:stream';
import { Bridge, type BridgeOptions } from './bridge.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from './constants.js';
import { serveStdio } from './transport/stdio.js';
import { serveWebSocket, type WebSocketBridgeServer } from './transport/websocket.js';

export interface RunBridgeOptions extends BridgeOptions {
  /** Where requests come from (the front end's stdout). Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Where replies and events go (the front end's stdin). Default `process.stdout`. */
  readonly stdout?: Writable;
  /** How long running turns may finish once the input ends (default 300 s); then they are interrupted. */
  readonly drainTimeoutMs?: number;
}

export interface RunningStdioBridge {
  readonly bridge: Bridge;
  /** Settles once the input has ended, running turns finished (or were interrupted) and stores closed. */
  readonly done: Promise<void>;
  /**
   * Stops now: stops reading the input, running turns get `drainTimeoutMs` (default 0) and are
   * interrupted after — also when a drain after the input ended is already under way.
   */
  close(options?: { drainTimeoutMs?: number }): Promise<void>;
}

/**
 * Runs the bridge over a stream pair (stdio by default): `gateway.ready` first, then one
 * JSON-RPC message per line each way. When the front end closes its end, turns still running
 * finish and are stored before the bridge closes.
 */
export function runBridge(options: RunBridgeOptions = {}): RunningStdioBridge {
  const bridge = new Bridge(options);
  const { connection, ended, detach } = serveStdio({
    bridge,
    input: options.stdin ?? process.stdin,
    output: options.stdout ?? process.stdout,
  });
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const done = ended.then(async () => {
    const started = performance.now();
    // What the front end wrote before it closed its end is answered first; a session or a turn
    // it starts is then drained and ended like the others. One deadline covers both.
    await connection.settled(drainTimeoutMs);
    await bridge.close({
      drainTimeoutMs: Math.max(0, drainTimeoutMs - (performance.now() - started)),
    });
  });
  return {
    bridge,
    done,
    close: (closeOptions) => {
      // Stop reading the front end first: an open stdin must not keep a stopped bridge alive.
      detach();
      return bridge.close(closeOptions);
    },
  };
}

export interface StartWebSocketBridgeOptions extends BridgeOptions {
  readonly host?: string;
  readonly port?: number;
  readonly token: string;
}

export interface RunningWebSocketBridge extends WebSocketBridgeServer {
  readonly bridge: Bridge;
}

/** Runs the bridge as a WebSocket server (token-authenticated; loopback unless `host` says otherwise). */
export async function startWebSocketBridge(
  options: StartWebSocketBridgeOptions,
): Promise<RunningWebSocketBridge> {
  const bridge = new Bridge(options);
  const server = await serveWebSocket({
    bridge,
    token: options.token,
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
  return {
    bridge,
    url: server.url,
    port: server.port,
    host: server.host,
    async close() {
      // Turns are interrupted and their final events sent while the sockets are still open;
      // only then do the sockets close (no new upgrade is accepted meanwhile).
      await bridge.close();
      await server.close();
    },
  };
}
