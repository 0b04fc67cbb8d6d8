import * as v from 'valibot';
import { WebSocket } from 'ws';
import {
  BROWSER_CONTROL_PROTOCOL_VERSION,
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  FRAME_CANCEL,
  FRAME_COMMAND,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_CONTROLLER_FRAME_BYTES,
} from '../constants.js';
import { BrowserControllerConnectionError } from '../errors.js';
import {
  CancelFrameSchema,
  type CommandFrame,
  CommandFrameSchema,
  DetachReplyFrameSchema,
  HeartbeatReplyFrameSchema,
  parseFrameText,
  type RegisterResponse,
  RegisterResponseSchema,
} from '../protocol.js';

/**
 * A command's cancel switch. The `AbortController` behind the handler's `signal` is made only
 * when a handler reads it: creating one costs several microseconds, and most handlers finish
 * without looking. A signal read after a cancel comes back already aborted.
 */
class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;

  get aborted(): boolean {
    return this.#aborted;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller?.abort();
  }
}

/** Context a command handler gets: ids from the frame and a signal aborted on cancel. */
export interface CommandContext {
  readonly commandId: string;
  readonly toolCallId: string | null;
  readonly frame: CommandFrame;
  readonly signal: AbortSignal;
}

/** Runs one action; its return value is the result, a throw becomes `ok: false`. */
export type CommandHandler = (
  args: Record<string, unknown>,
  context: CommandContext,
) => unknown | Promise<unknown>;

export interface BrowserControllerClientOptions {
  /** The gateway's API base, e.g. `http://127.0.0.1:8642`. */
  readonly baseUrl: string;
  /** The API server key (sent as a bearer token to the register route only). */
  readonly apiKey: string;
  readonly sessionId: string;
  readonly controllerId: string;
  readonly browserProfileId: string;
  readonly capabilities: readonly string[];
  /** Handlers by action name; an action without one is answered `ok: false`. */
  readonly handlers: Readonly<Record<string, CommandHandler>>;
  /** Told about every cancel frame (after the handler's signal was aborted). */
  readonly onCancel?: (commandId: string, toolCallId: string | null) => void;
  /** Told when the current socket closed without `close()`; call `reconnect()` to resume. */
  readonly onDisconnect?: (code: number) => void;
  readonly fetch?: typeof fetch;
}

/** Registration or connection refused by the server (`status` and `errorCode` from the response). */
export class ControllerConnectFailed extends BrowserControllerConnectionError {
  readonly status: number;
  readonly errorCode: string | undefined;

  constructor(message: string, status: number, errorCode?: string) {
    super(message);
    this.status = status;
    this.errorCode = errorCode;
  }
}

/**
 * Results finished while no socket was open, kept for the next connection. The server ignores
 * results whose command already ended, so only the newest few are worth keeping.
 */
const MAX_UNSENT_RESULTS = 512;

/**
 * A small reference controller: registers over HTTP, opens the WebSocket with the single-use
 * ticket in `Sec-WebSocket-Protocol`, answers commands through its handlers, follows cancels, and
 * reconnects with a fresh ticket under the same identity (in-flight work can still be answered).
 */
export class BrowserControllerClient {
  readonly #options: BrowserControllerClientOptions;
  #socket: WebSocket | undefined;
  #registration: RegisterResponse | undefined;
  readonly #running = new Map<string, LazyAbort>();
  readonly #heartbeats = new Map<string, () => void>();
  #detachWaiters: Array<(error?: Error) => void> = [];
  /** Result frames (JSON text) awaiting an open socket: a command may finish mid-reconnect. */
  #unsentResults: string[] = [];
  #nonce = 0;
  /** Keepalive nonces the server sent (diagnostics; they need no answer). */
  keepalivesReceived = 0;

  constructor(options: BrowserControllerClientOptions) {
    this.#options = options;
  }

  /** The server-bound scope of the last registration. */
  get registration(): RegisterResponse | undefined {
    return this.#registration;
  }

  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** `POST /v1/browser-control/register`; returns the ticket and the filtered scope. */
  async register(): Promise<RegisterResponse> {
    const fetcher = this.#options.fetch ?? fetch;
    const response = await fetcher(new URL(BROWSER_CONTROL_REGISTER_PATH, this.#options.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.#options.apiKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        protocol_version: BROWSER_CONTROL_PROTOCOL_VERSION,
        session_id: this.#options.sessionId,
        controller_id: this.#options.controllerId,
        browser_profile_id: this.#options.browserProfileId,
        capabilities: this.#options.capabilities,
      }),
    });
    const body: unknown = await response.json().catch(() => undefined);
    if (response.status !== 201) {
      const code = (body as { error?: { code?: string } } | undefined)?.error?.code;
      throw new ControllerConnectFailed(
        `browser controller registration failed: ${response.status} ${code ?? ''}`.trim(),
        response.status,
        code,
      );
    }
    const parsed = v.safeParse(RegisterResponseSchema, body);
    if (!parsed.success) {
      throw new ControllerConnectFailed(
        'browser controller registration returned an invalid body',
        201,
      );
    }
    this.#registration = parsed.output;
    return parsed.output;
  }

  /**
   * Registers, opens the socket and resolves once the server has attached the controller (a
   * heartbeat round trip: the server answers only its owner, so the 101 alone is not readiness).
   */
  async connect(): Promise<void> {
    const registration = await this.register();
    const url = new URL(registration.ws_path, this.#options.baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(
      url,
      [
        BROWSER_CONTROL_SUBPROTOCOL,
        `${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${registration.ticket}`,
      ],
      { maxPayload: MAX_CONTROLLER_FRAME_BYTES },
    );
    // Listen before the socket opens: the server may write frames right behind its 101 (the
    // deferred cancels it flushes at a reattach), and ws emits them as soon as it has emitted
    // `open`, before anything awaiting `open` resumes.
    let opened = false;
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.#onFrame(data.toString());
    });
    // A socket error is followed by `close`, which reports the loss; connect() rejects on one
    // before the socket opened.
    socket.on('error', () => {});
    socket.on('close', (code) => {
      // Only the current socket counts: a socket replaced by reconnect() or close() is expected
      // to end, and one that never opened failed connect() instead.
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      this.#failDetachWaiters();
      if (opened) this.#options.onDisconnect?.(code);
    });
    this.#socket = socket;
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => {
          opened = true;
          resolve();
        });
        socket.once('unexpected-response', (_request, response) => {
          reject(
            new ControllerConnectFailed(
              `browser controller socket refused: ${response.statusCode}`,
              response.statusCode ?? 0,
            ),
          );
          response.resume();
        });
        socket.once('error', reject);
      });
    } catch (error) {
      if (this.#socket === socket) this.#socket = undefined;
      throw error;
    }
    await this.heartbeat();
    // Attached now (the echo proves ownership): answer what finished while we were away.
    const unsent = this.#unsentResults;
    this.#unsentResults = [];
    for (const text of unsent) socket.send(text);
  }

  /** Drops the current socket (a recoverable disconnect) and connects again with a fresh ticket. */
  async reconnect(): Promise<void> {
    await this.#closeSocket();
    await this.connect();
  }

  /** Sends a heartbeat and waits for its echo (the server answers only the controller's owner). */
  heartbeat(timeoutMilliseconds = 5_000): Promise<void> {
    this.#nonce += 1;
    const nonce = `client-${this.#nonce}`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#heartbeats.delete(nonce);
        reject(new BrowserControllerConnectionError('heartbeat was not answered'));
      }, timeoutMilliseconds);
      this.#heartbeats.set(nonce, () => {
        clearTimeout(timer);
        resolve();
      });
      this.#write({ method: FRAME_HEARTBEAT, params: { nonce } });
    });
  }

  /** Asks the server to cancel the command of one tool call. */
  cancel(toolCallId: string): void {
    this.#write({ method: FRAME_CANCEL, params: { tool_call_id: toolCallId } });
  }

  /**
   * Hard detach: the server cancels the pending work and forgets the controller. Resolves once
   * the server acknowledged it and the socket is closed (nothing is left open, so a program that
   * detaches can exit); rejects, with the socket closed all the same, when no acknowledgement
   * comes within `timeoutMilliseconds` (a socket that no longer owns the controller gets none).
   */
  async detach(timeoutMilliseconds = 5_000): Promise<void> {
    let settle!: (error?: Error) => void;
    const acknowledged = new Promise<void>((resolve, reject) => {
      settle = (error) => (error ? reject(error) : resolve());
    });
    const timer = setTimeout(
      () => settle(new BrowserControllerConnectionError('detach was not acknowledged')),
      timeoutMilliseconds,
    );
    try {
      this.#detachWaiters.push(settle);
      this.#write({ method: FRAME_DETACH, params: {} });
      await acknowledged;
    } finally {
      clearTimeout(timer);
      this.#detachWaiters = this.#detachWaiters.filter((waiter) => waiter !== settle);
      await this.#closeSocket();
    }
  }

  /** Closes the socket; the server treats it as a recoverable disconnect. */
  async close(): Promise<void> {
    await this.#closeSocket();
  }

  async #closeSocket(): Promise<void> {
    const socket = this.#socket;
    this.#socket = undefined;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }

  #write(frame: { method: string; params: Record<string, unknown> }): void {
    const socket = this.#socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      throw new BrowserControllerConnectionError('browser controller socket is not open');
    }
    socket.send(JSON.stringify(frame));
  }

  #onFrame(text: string): void {
    const frame = parseFrameText(text);
    if (!frame) return;
    if (frame.method === FRAME_COMMAND) {
      const command = v.safeParse(CommandFrameSchema, frame);
      if (command.success) void this.#run(command.output);
      return;
    }
    if (frame.method === FRAME_CANCEL) {
      const cancel = v.safeParse(CancelFrameSchema, frame);
      if (!cancel.success) return;
      this.#running.get(cancel.output.params.command_id)?.abort();
      this.#running.delete(cancel.output.params.command_id);
      this.#options.onCancel?.(cancel.output.params.command_id, cancel.output.params.tool_call_id);
      return;
    }
    if (frame.method === FRAME_HEARTBEAT) {
      const reply = v.safeParse(HeartbeatReplyFrameSchema, frame);
      if (!reply.success) return;
      const waiter = this.#heartbeats.get(reply.output.params.nonce);
      // An unknown nonce (the server keepalive) is a no-op by contract.
      if (!waiter) this.keepalivesReceived += 1;
      this.#heartbeats.delete(reply.output.params.nonce);
      waiter?.();
      return;
    }
    if (frame.method === FRAME_DETACH && v.safeParse(DetachReplyFrameSchema, frame).success) {
      const waiters = this.#detachWaiters;
      this.#detachWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  #failDetachWaiters(): void {
    const waiters = this.#detachWaiters;
    this.#detachWaiters = [];
    for (const waiter of waiters) {
      waiter(
        new BrowserControllerConnectionError('socket closed before the detach was acknowledged'),
      );
    }
  }

  async #run(command: CommandFrame): Promise<void> {
    const { command_id: commandId, action, tool_call_id: toolCallId } = command.params;
    const abort = new LazyAbort();
    this.#running.set(commandId, abort);
    let reply: Record<string, unknown>;
    const handler = this.#options.handlers[action];
    try {
      if (!handler) throw new Error(`no handler for ${action}`);
      const result = await handler(command.params.arguments, {
        commandId,
        toolCallId,
        frame: command,
        get signal() {
          return abort.signal;
        },
      });
      reply = { command_id: commandId, ok: true, result };
    } catch (error) {
      reply = {
        command_id: commandId,
        ok: false,
        error: {
          code: 'action_failed',
          message: error instanceof Error ? error.message : String(error),
        },
      };
    }
    this.#running.delete(commandId);
    if (abort.aborted) return;
    const text = JSON.stringify({ method: FRAME_RESULT, params: reply });
    // Answer on whichever socket is current: after a reconnect the new one owns the command. With
    // none open (socket lost, or a reconnect in progress) keep it for the next connection.
    const socket = this.#socket;
    if (socket?.readyState === WebSocket.OPEN) {
      socket.send(text);
      return;
    }
    this.#unsentResults.push(text);
    if (this.#unsentResults.length > MAX_UNSENT_RESULTS) this.#unsentResults.shift();
  }
}
