import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { BrowserControlBroker } from '../broker.js';
import {
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
} from '../constants.js';
import { type ExtensionControlFlagSource, readFlags } from '../flags.js';
import type { ControllerScope } from '../scope.js';
import {
  type ControllerConnection,
  type ControllerConnectionOptions,
  serveControllerConnection,
} from './controller-connection.js';

export interface BrowserControlUpgradeOptions {
  readonly broker: BrowserControlBroker;
  /** `browser.extension_control.*`, read live at every upgrade. */
  readonly flags: ExtensionControlFlagSource;
  /** Path to answer (default `/v1/browser-control/ws`; a gateway may mount a `/p/<profile>` copy). */
  readonly path?: string;
  readonly connection?: Pick<
    ControllerConnectionOptions,
    'keepaliveMilliseconds' | 'pingMilliseconds' | 'sendWaitMilliseconds' | 'onWarning'
  >;
  /** Told about every accepted controller socket (tests await `ready` for routability). */
  readonly onConnection?: (connection: ControllerConnection & { scope: ControllerScope }) => void;
}

export interface BrowserControlUpgradeHandler {
  /** Call from the HTTP server's `upgrade` event; returns false when the path is not ours. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Closes the ws server and every controller socket it accepted. */
  close(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found' };

function refuse(socket: Duplex, status: 401 | 404): void {
  const body = JSON.stringify({
    error: {
      message: STATUS_TEXT[status],
      type: 'browser_control_error',
      code: status === 404 ? 'browser_control_disabled' : 'browser_control_unauthorized',
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The ticket from `Sec-WebSocket-Protocol`, or null unless the header is exactly well-formed. */
export function ticketFromProtocols(header: string | undefined): string | null {
  const entries = (header ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (!entries.includes(BROWSER_CONTROL_SUBPROTOCOL)) return null;
  const tickets = entries.filter((entry) =>
    entry.startsWith(BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX),
  );
  if (tickets.length !== 1) return null;
  const ticket = (tickets[0] ?? '').slice(BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX.length);
  return ticket === '' ? null : ticket;
}

/**
 * The controller WebSocket endpoint for a plain `node:http` server. Every check runs before the
 * upgrade and fails with a plain HTTP status: flag off → 404 (the ticket is not touched, so it
 * stays usable); a `ticket` query parameter → 401; a malformed subprotocol list → 401; an unknown,
 * used or expired ticket → 401. Only the public subprotocol is ever echoed.
 */
export function createBrowserControlUpgradeHandler(
  options: BrowserControlUpgradeOptions,
): BrowserControlUpgradeHandler {
  const path = options.path ?? BROWSER_CONTROL_WS_PATH;
  const server = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) =>
      protocols.has(BROWSER_CONTROL_SUBPROTOCOL) ? BROWSER_CONTROL_SUBPROTOCOL : false,
  });

  return {
    handleUpgrade(request, socket, head) {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== path) return false;
      if (!readFlags(options.flags).enabled) {
        refuse(socket, 404);
        return true;
      }
      // The query-string shape is refused outright and never consumes the credential.
      if (url.searchParams.has('ticket')) {
        refuse(socket, 401);
        return true;
      }
      const ticket = ticketFromProtocols(request.headers['sec-websocket-protocol']);
      if (ticket === null) {
        refuse(socket, 401);
        return true;
      }
      let scope: ControllerScope;
      try {
        scope = options.broker.consumeTicket(ticket);
      } catch {
        refuse(socket, 401);
        return true;
      }
      server.handleUpgrade(request, socket, head, (webSocket) => {
        const connection = serveControllerConnection({
          ...options.connection,
          socket: webSocket,
          scope,
          broker: options.broker,
        });
        options.onConnection?.({ ...connection, scope });
      });
      return true;
    },
    close() {
      for (const client of server.clients) client.terminate();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
