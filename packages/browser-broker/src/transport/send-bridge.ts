import { WebSocket } from 'ws';
import { BROWSER_CONTROL_SEND_WAIT_SECONDS, SOCKET_CLOSED_MESSAGE } from '../constants.js';
import { BrowserControllerConnectionError } from '../errors.js';
import type { ControllerSend } from '../frames.js';

export interface WebSocketSenderOptions {
  /** How long to wait for the write callback before calling it a slow write (default 10 s). */
  readonly waitMilliseconds?: number;
  /** Told when a write that was already reported as "slow, in flight" later fails. */
  readonly onLateFailure?: (error: Error) => void;
}

/**
 * The broker's `send` for one controller socket. A closed socket throws at once (the dispatch
 * fails and releases its id); a write error rejects (a real send failure); a write still running
 * after the wait bound resolves anyway: a slow write is not a failure, and the command stays
 * pending under its own deadline.
 */
export function createWebSocketSender(
  socket: WebSocket,
  options: WebSocketSenderOptions = {},
): ControllerSend {
  const waitMilliseconds = options.waitMilliseconds ?? BROWSER_CONTROL_SEND_WAIT_SECONDS * 1000;
  return (frame) => {
    if (socket.readyState !== WebSocket.OPEN) {
      throw new BrowserControllerConnectionError(SOCKET_CLOSED_MESSAGE);
    }
    const text = JSON.stringify(frame);
    return new Promise<void>((resolve, reject) => {
      let decided = false;
      const timer = setTimeout(() => {
        decided = true;
        resolve();
      }, waitMilliseconds);
      timer.unref();
      socket.send(text, (error) => {
        if (decided) {
          if (error) options.onLateFailure?.(error);
          return;
        }
        decided = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      });
    });
  };
}
