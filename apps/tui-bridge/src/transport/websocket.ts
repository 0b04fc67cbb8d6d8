import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Bridge } from '../bridge.js';
import { MAX_MESSAGE_BYTES } from '../contract/envelope.js';

/** Minimum token length: shorter secrets are guessable. */
export const MIN_TOKEN_LENGTH = 16;
/** The close code every socket gets when the bridge stops (RFC 6455 §7.4.1 "going away"). */
export const CLOSE_GOING_AWAY = 1001;
/** How long a front end has to answer the close frame before its socket is cut. */
const CLOSE_HANDSHAKE_MS = 2_000;

export class WebSocketBridgeError extends Error {
  override readonly name = 'WebSocketBridgeError';
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time comparison (both sides hashed first, so lengths never leak either). */
export function tokensMatch(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

function presentedToken(request: IncomingMessage): string | undefined {
  // The scheme is case-insensitive in HTTP (RFC 9110 §11.1): `bearer` is `Bearer`.
  const bearer = /^bearer[ \t]+(\S.*)$/i.exec(request.headers.authorization?.trim() ?? '');
  if (bearer?.[1]) return bearer[1].trim();
  const url = new URL(request.url ?? '/', 'http://bridge.invalid');
  return url.searchParams.get('token') ?? undefined;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export interface WebSocketServeOptions {
  readonly bridge: Bridge;
  /** Default `127.0.0.1`. Anything else is refused without a token. */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** The secret every connection must present (`Authorization: Bearer …` or `?token=`). */
  readonly token: string;
  readonly maxMessageBytes?: number;
}

export interface WebSocketBridgeServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/**
 * The same protocol over WebSocket: one JSON-RPC message per text frame. Every upgrade must carry
 * the token (compared in constant time); a wrong or missing one gets 401 and no socket.
 */
export async function serveWebSocket(
  options: WebSocketServeOptions,
): Promise<WebSocketBridgeServer> {
  const host = options.host ?? '127.0.0.1';
  if (typeof options.token !== 'string' || options.token.length < MIN_TOKEN_LENGTH) {
    throw new WebSocketBridgeError(
      `a WebSocket bridge needs a token of at least ${MIN_TOKEN_LENGTH} characters${isLoopbackHost(host) ? '' : ` (and ${host} is not loopback)`}`,
    );
  }
  const maxPayload = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const sockets = new WebSocketServer({ noServer: true, maxPayload });
  const server: Server = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket upgrade required\n');
  });
  server.on('upgrade', (request, socket, head) => {
    if (!tokensMatch(presentedToken(request), options.token)) {
      refuse(socket, 401, 'Unauthorized');
      return;
    }
    if (options.bridge.closing) {
      refuse(socket, 503, 'Service Unavailable');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const connection = options.bridge.connect('websocket', (text) => {
        if (ws.readyState === ws.OPEN) ws.send(text);
      });
      ws.on('message', (data) => {
        void connection.receive(
          Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString(),
        );
      });
      ws.on('close', () => connection.close());
      ws.on('error', () => connection.close());
      options.bridge.announce(connection);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `ws://${urlHost}:${address.port}/`,
    port: address.port,
    host: address.address,
    async close() {
      // A close frame goes out after what was already sent (a turn's final events): each front
      // end gets "going away" and the close handshake has a bounded time before the cut.
      const closing = [...sockets.clients].map(
        (client) =>
          new Promise<void>((resolve) => {
            if (client.readyState === client.CLOSED) return resolve();
            const timer = setTimeout(() => client.terminate(), CLOSE_HANDSHAKE_MS);
            timer.unref();
            client.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            client.close(CLOSE_GOING_AWAY, 'bridge shutting down');
          }),
      );
      sockets.close();
      await Promise.all([
        ...closing,
        new Promise<void>((resolve) => server.close(() => resolve())),
      ]);
    },
  };
}
