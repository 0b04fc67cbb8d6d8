/** A broker-to-controller frame as the broker hands it to a transport's `send`. */
export interface BrowserControlFrame {
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * The transport's write. It may be sync or async; a throw (or rejection) is a real send failure.
 * Resolving means "accepted for delivery" (a slow write may resolve before it reaches the peer).
 */
export type ControllerSend = (frame: BrowserControlFrame) => void | Promise<void>;
