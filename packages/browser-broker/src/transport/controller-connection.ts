import { type RawData, WebSocket } from 'ws';
import type { BrowserControlBroker } from '../broker.js';
import {
  BROWSER_CONTROL_KEEPALIVE_SECONDS,
  BROWSER_CONTROL_PING_SECONDS,
  FRAME_CANCEL,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_CONTROLLER_FRAMES_PER_TURN,
  MAX_HEARTBEAT_NONCE_LENGTH,
  MAX_QUEUED_CONTROLLER_FRAMES,
  MAX_UNREAD_CONTROLLER_BYTES,
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

/** Why the server closed a controller socket that broke the flow-control rules. */
const POLICY_VIOLATION = 1008;
/** How long a socket closed for a policy violation may linger before it is destroyed. */
const REFUSED_SOCKET_GRACE_MILLISECONDS = 1_000;

type Frame = NonNullable<ReturnType<typeof parseFrameText>>;

/** What a handled slot of the inbox is overwritten with, so the frame's bytes can be collected. */
const EMPTY_FRAME: RawData = Buffer.alloc(0);

/**
 * Serves one accepted controller socket: attach (the lane becomes routable only when this
 * resolves), owner-gated inbound frames handled in arrival order, an app-level keepalive (MV3
 * service workers die after 30 s idle and ping/pong does not count), a transport ping that closes
 * dead peers, and a teardown that disconnects (recoverably) exactly once.
 *
 * Flow control, so one misbehaving peer can never stall the process:
 * - frames are handled synchronously while nothing is in flight, at most
 *   `MAX_CONTROLLER_FRAMES_PER_TURN` per event-loop turn; frames past that budget, behind one
 *   that takes the controller's send lock (cancel, detach), or before the attach finished wait
 *   in an explicit queue bounded by `MAX_QUEUED_CONTROLLER_FRAMES` — a peer that overflows it is
 *   closed with 1008; while frames wait for the next turn the socket is not read, so TCP
 *   pushes back (while one waits for the lock it is read on, so pongs still arrive);
 * - replies (heartbeat echo, detach acknowledgement, keepalive) are written without waiting for
 *   the write to finish, and a peer that lets more than `MAX_UNREAD_CONTROLLER_BYTES` of them pile
 *   up unread is closed with 1008;
 * - once the socket is refused, or its attach failed, every frame still queued is dropped at once
 *   (nothing is built per frame); frames that arrived before an ordinary close are still handled
 *   (a result sent just before closing counts) and the recoverable disconnect runs after them.
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

  let refused = false;
  /** Closes a peer that broke the flow-control rules; its queued frames are dropped. */
  const refuse = (reason: string) => {
    if (refused) return;
    refused = true;
    clearInbox();
    warn(`closing a browser controller socket: ${reason}`);
    // Stop parsing what it keeps sending; a peer that does not read will not read the close
    // frame either, so it gets a short grace and is then destroyed.
    socket.pause();
    socket.close(POLICY_VIOLATION, reason);
    setTimeout(() => socket.terminate(), REFUSED_SOCKET_GRACE_MILLISECONDS).unref();
  };

  /** Writes a reply without waiting for the write; a closed socket simply gets none. */
  const reply = (frame: { method: string; params: Record<string, unknown> }) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_UNREAD_CONTROLLER_BYTES) {
      refuse('the controller is not reading its replies');
      return;
    }
    socket.send(JSON.stringify(frame), (error) => {
      // The close handler tears the connection down; one line is enough.
      if (error) warn('could not reply to a browser controller', error);
    });
  };

  /** Handles one frame; returns a promise only when it must wait for the controller's lock. */
  const handle = (frame: Frame): Promise<unknown> | undefined => {
    // Only the socket that owns the identity's current generation may act.
    if (!broker.isOwner(scope, socket)) return undefined;
    const { params } = frame;
    switch (frame.method) {
      case FRAME_HEARTBEAT: {
        const nonce = typeof params.nonce === 'string' ? params.nonce.trim() : '';
        if (nonce === '' || nonce.length > MAX_HEARTBEAT_NONCE_LENGTH) return undefined;
        reply({ method: FRAME_HEARTBEAT, params: { nonce, ok: true } });
        return undefined;
      }
      case FRAME_RESULT: {
        const commandId = params.command_id;
        if (typeof commandId !== 'string' || commandId === '') return undefined;
        const ok = params.ok === true;
        broker.complete(commandId, { scope, ok, result: ok ? params.result : params.error });
        return undefined;
      }
      case FRAME_DETACH:
        return broker
          .detach(scope, { owner: socket, notifyController: false })
          .then(() => reply({ method: FRAME_DETACH, params: { ok: true } }));
      case FRAME_CANCEL: {
        const toolCallId = params.tool_call_id;
        if (typeof toolCallId !== 'string' || toolCallId === '') return undefined;
        return broker.cancel(scope, toolCallId);
      }
      default:
        return undefined;
    }
  };

  // Frames wait here while one is in flight (or the attach is), and when this turn's budget
  // is spent; `busy` covers the first two. Only in the last case is the socket not read.
  // Raw text frames: they are parsed when handled, so a burst read in one go costs little before
  // its frames' turns come.
  const inbox: RawData[] = [];
  let inboxHead = 0;
  const queued = () => inbox.length - inboxHead;
  const clearInbox = () => {
    inbox.length = 0;
    inboxHead = 0;
  };
  let busy = true;
  let drained: () => void = () => {};
  const idle = () =>
    busy || queued() > 0
      ? new Promise<void>((resolve) => {
          drained = resolve;
        })
      : Promise.resolve();

  // The per-turn budget: reset by one immediate per turn in which frames were handled.
  let turnBudget = MAX_CONTROLLER_FRAMES_PER_TURN;
  let turnScheduled = false;
  let readingPaused = false;
  const nextTurn = () => {
    turnScheduled = false;
    turnBudget = MAX_CONTROLLER_FRAMES_PER_TURN;
    if (!busy) drain();
  };
  const spendTurnBudget = () => {
    turnBudget -= 1;
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(nextTurn);
    }
  };
  const pauseReading = () => {
    if (readingPaused) return;
    readingPaused = true;
    socket.pause();
  };
  const resumeReading = () => {
    if (!readingPaused || refused) return;
    readingPaused = false;
    socket.resume();
  };

  const drain = () => {
    while (!refused && turnBudget > 0 && queued() > 0) {
      const data = inbox[inboxHead] as RawData;
      inbox[inboxHead] = EMPTY_FRAME;
      inboxHead += 1;
      if (inboxHead === inbox.length) clearInbox();
      spendTurnBudget();
      const frame = parseFrameText(data.toString());
      if (!frame) continue;
      let pending: Promise<unknown> | undefined;
      try {
        pending = handle(frame);
      } catch (error) {
        warn('browser controller frame failed', error);
      }
      if (pending !== undefined) {
        busy = true;
        // While a frame waits for the controller's lock the socket is read on (pongs included,
        // so a long wait never looks like a dead peer); what arrives meanwhile queues, bounded.
        resumeReading();
        pending
          .catch((error: unknown) => warn('browser controller frame failed', error))
          .finally(() => {
            busy = false;
            drain();
          });
        return;
      }
    }
    if (refused) clearInbox();
    if (queued() > 0) {
      // This turn's budget is spent: the rest waits for the next turn (the immediate is already
      // scheduled) and the socket is not read until then, so what the peer keeps sending waits
      // in TCP, not here.
      pauseReading();
      return;
    }
    resumeReading();
    drained();
  };

  const ready = broker.attach(scope, send, socket);
  ready.then(
    () => {
      busy = false;
      drain();
    },
    (error: unknown) => {
      warn('browser controller attach failed; closing its socket', error);
      refused = true;
      clearInbox();
      socket.close(1011, 'attach failed');
      busy = false;
      drained();
    },
  );

  socket.on('message', (data, isBinary) => {
    if (isBinary || refused) return;
    if (queued() >= MAX_QUEUED_CONTROLLER_FRAMES) {
      refuse('too many frames waiting to be handled');
      return;
    }
    inbox.push(data);
    if (!busy) drain();
  });

  let keepaliveCount = 0;
  const keepalive = setInterval(
    () => {
      keepaliveCount += 1;
      reply({
        method: FRAME_HEARTBEAT,
        params: { nonce: `server-keepalive-${keepaliveCount}`, ok: true },
      });
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
    // Recoverable, never a detach. It runs after the attach and after the frames that arrived
    // before the close, so a half-finished attach is parked too and a last result still counts.
    void idle()
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
