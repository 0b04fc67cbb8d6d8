import type { WebSocket } from 'ws';
import type { BrowserControlBroker } from '../broker.js';
import {
  BROWSER_CONTROL_KEEPALIVE_SECONDS,
  BROWSER_CONTROL_PING_SECONDS,
  FRAME_CANCEL,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_HEARTBEAT_NONCE_LENGTH,
} from '../constants.js';
import { parseFrameText } from '../protocol.js';
import type { ControllerScope } from '../scope.js';
import { createWebSocketSender } from './send-bridge.js';

export interface ControllerConnectionOptions {
  readonly socket: WebSocket;
  /** The scope the consumed ticket was bound to. */
  readonly scope: ControllerScope;
  readonly broker: BrowserControlBroker;
  readonly keepaliveMilliseconds?: number;
  readonly pingMilliseconds?: number;
  readonly sendWaitMilliseconds?: number;
  readonly onWarning?: (message: string, error?: unknown) => void;
}

export interface ControllerConnection {
  /** The accepted socket (closing it is a recoverable disconnect). */
  readonly socket: WebSocket;
  /** Resolves when the controller is attached and routable (not at the HTTP 101). */
  readonly ready: Promise<void>;
  /** Resolves after the socket closed and the recoverable disconnect ran. */
  readonly closed: Promise<void>;
}

/**
 * Serves one accepted controller socket: attach (the lane becomes routable only when this
 * resolves), owner-gated inbound frames handled in arrival order, an app-level keepalive (MV3
 * service workers die after 30 s idle and ping/pong does not count), a transport ping that closes
 * dead peers, and a teardown that disconnects (recoverably) exactly once.
 */
export function serveControllerConnection(
  options: ControllerConnectionOptions,
): ControllerConnection {
  const { socket, scope, broker } = options;
  const warn = options.onWarning ?? (() => {});
  const send = createWebSocketSender(socket, {
    ...(options.sendWaitMilliseconds === undefined
      ? {}
      : { waitMilliseconds: options.sendWaitMilliseconds }),
    onLateFailure: (error) => warn('a slow browser-control write failed later', error),
  });
  const reply = async (frame: { method: string; params: Record<string, unknown> }) => {
    try {
      await send(frame);
    } catch (error) {
      warn('could not reply to a browser controller', error);
    }
  };

  const ready = broker.attach(scope, send, socket);
  let queue: Promise<void> = ready.catch((error: unknown) => {
    warn('browser controller attach failed; closing its socket', error);
    socket.close(1011, 'attach failed');
  });

  const handle = async (text: string) => {
    const frame = parseFrameText(text);
    // Only the socket that owns the identity's current generation may act.
    if (!frame || !broker.isOwner(scope, socket)) return;
    const { params } = frame;
    switch (frame.method) {
      case FRAME_HEARTBEAT: {
        const nonce = typeof params.nonce === 'string' ? params.nonce.trim() : '';
        if (nonce === '' || nonce.length > MAX_HEARTBEAT_NONCE_LENGTH) return;
        await reply({ method: FRAME_HEARTBEAT, params: { nonce, ok: true } });
        return;
      }
      case FRAME_DETACH: {
        await broker.detach(scope, { owner: socket, notifyController: false });
        await reply({ method: FRAME_DETACH, params: { ok: true } });
        return;
      }
      case FRAME_RESULT: {
        const commandId = params.command_id;
        if (typeof commandId !== 'string' || commandId === '') return;
        const ok = params.ok === true;
        broker.complete(commandId, { scope, ok, result: ok ? params.result : params.error });
        return;
      }
      case FRAME_CANCEL: {
        const toolCallId = params.tool_call_id;
        if (typeof toolCallId !== 'string' || toolCallId === '') return;
        await broker.cancel(scope, toolCallId);
        return;
      }
      default:
        return;
    }
  };

  socket.on('message', (data, isBinary) => {
    if (isBinary) return;
    const text = data.toString();
    queue = queue
      .then(() => handle(text))
      .catch((error: unknown) => {
        warn('browser controller frame failed', error);
      });
  });

  let keepaliveCount = 0;
  const keepalive = setInterval(
    () => {
      keepaliveCount += 1;
      const frame = {
        method: FRAME_HEARTBEAT,
        params: { nonce: `server-keepalive-${keepaliveCount}`, ok: true },
      };
      // Stop silently on connection errors; the close handler tears down the rest.
      Promise.resolve()
        .then(() => send(frame))
        .catch(() => clearInterval(keepalive));
    },
    options.keepaliveMilliseconds ?? BROWSER_CONTROL_KEEPALIVE_SECONDS * 1000,
  );
  keepalive.unref();

  let alive = true;
  socket.on('pong', () => {
    alive = true;
  });
  const ping = setInterval(
    () => {
      if (!alive) {
        socket.terminate();
        return;
      }
      alive = false;
      socket.ping();
    },
    options.pingMilliseconds ?? BROWSER_CONTROL_PING_SECONDS * 1000,
  );
  ping.unref();

  let closed!: () => void;
  const closedPromise = new Promise<void>((resolve) => {
    closed = resolve;
  });
  let tornDown = false;
  const teardown = () => {
    if (tornDown) return;
    tornDown = true;
    clearInterval(keepalive);
    clearInterval(ping);
    // Recoverable, never a detach; waits for attach so a half-finished attach is parked too.
    void ready
      .catch(() => {})
      .then(() => broker.disconnect(scope, socket))
      .catch((error: unknown) => warn('browser controller disconnect failed', error))
      .finally(closed);
  };
  socket.on('close', teardown);
  socket.on('error', (error) => {
    warn('browser controller socket error', error);
  });

  return { socket, ready, closed: closedPromise };
}
