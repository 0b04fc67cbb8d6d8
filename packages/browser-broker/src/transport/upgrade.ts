import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { BrowserControlBroker } from '../broker.js';
import {
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  MAX_CONTROLLER_FRAME_BYTES,
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

/** The HTTP refusal of a handshake, in the OpenAI error shape of the register route. */
function refusalBody(status: 401 | 404): string {
  return JSON.stringify({
    error:
      status === 404
        ? {
            message: 'browser extension control is disabled (browser.extension_control.enabled)',
            type: 'not_found_error',
            param: null,
            code: 'browser_control_disabled',
          }
        : {
            message: `a valid single-use ticket is required: open the socket with the subprotocols ${BROWSER_CONTROL_SUBPROTOCOL} and ${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}<ticket>`,
            type: 'authentication_error',
            param: null,
            code: 'browser_control_unauthorized',
          },
  });
}

function refuse(socket: Duplex, status: 401 | 404): void {
  const body = refusalBody(status);
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
 * stays usable); a `ticket` query parameter → 401; a malformed subprotocol list → 401; a handshake
 * `ws` refuses (method, `Upgrade`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version`) → its 4xx, with
 * the ticket still unused; an unknown, used or expired ticket → 401. The ticket is consumed only
 * once the handshake itself has been validated, so a malformed handshake never burns it. Only the
 * public subprotocol is ever echoed, and a frame over `MAX_CONTROLLER_FRAME_BYTES` closes the
 * socket (1009) instead of being buffered.
 */
export function createBrowserControlUpgradeHandler(
  options: BrowserControlUpgradeOptions,
): BrowserControlUpgradeHandler {
  const path = options.path ?? BROWSER_CONTROL_WS_PATH;
  // The ticket a request presented, and the scope it was exchanged for once ws validated the
  // handshake. Keyed by request, so concurrent upgrades never see each other's entries.
  const presentedTickets = new WeakMap<IncomingMessage, string>();
  const acceptedScopes = new WeakMap<IncomingMessage, ControllerScope>();
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CONTROLLER_FRAME_BYTES,
    // Messages are emitted as ws parses them; the connection (serveControllerConnection) handles
    // at most MAX_CONTROLLER_FRAMES_PER_TURN of them per event-loop turn and stops reading the
    // socket while the rest wait, so a peer that sends thousands of frames in one burst cannot
    // hold the loop and TCP pushes back on it. (ws's own `allowSynchronousEvents: false` would
    // allow one message per turn, which made a burst of 32 results take 32 turns.)
    allowSynchronousEvents: true,
    handleProtocols: (protocols) =>
      protocols.has(BROWSER_CONTROL_SUBPROTOCOL) ? BROWSER_CONTROL_SUBPROTOCOL : false,
    // ws calls this after its own handshake checks and right before it answers 101: the last
    // moment the ticket can still be refused with a plain status, and the first at which the
    // handshake is known to be good.
    verifyClient: (info, done) => {
      const ticket = presentedTickets.get(info.req);
      presentedTickets.delete(info.req);
      try {
        if (ticket === undefined) throw new Error('no ticket presented');
        acceptedScopes.set(info.req, options.broker.consumeTicket(ticket));
      } catch {
        done(false, 401, refusalBody(401), { 'Content-Type': 'application/json' });
        return;
      }
      done(true);
    },
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
      presentedTickets.set(request, ticket);
      server.handleUpgrade(request, socket, head, (webSocket) => {
        const scope = acceptedScopes.get(request);
        acceptedScopes.delete(request);
        // Unreachable: ws completes an upgrade only after verifyClient accepted it.
        if (scope === undefined) {
          webSocket.terminate();
          return;
        }
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
