/**
 * The platform adapter contract: what the gateway's adapter lifecycle (`createPlatformFleet`)
 * needs from a messaging platform (Telegram, a webhook listener, …). An adapter connects, sends,
 * disconnects, and reports a fatal error through `onFatalError` — with a code, a message and
 * whether a reconnect may cure it.
 */

/** The fatal-error state an adapter exposes (`has_fatal_error` and friends in the reference). */
export interface AdapterFatalError {
  /** A stable machine code: `telegram_unauthorized`, `telegram_conflict`, `network_error`, … */
  readonly code: string;
  readonly message: string;
  /** A reconnect may cure it (network down, 5xx, a conflict); false for bad credentials. */
  readonly retryable: boolean;
}

/** The outcome of one send: `messageId` is the platform's id of the sent message. */
export interface SendResult {
  readonly success: boolean;
  readonly messageId?: string | undefined;
  readonly error?: string | undefined;
  /** A failed send that may succeed later (network, 5xx, flood control). */
  readonly retryable?: boolean | undefined;
}

export interface SendOptions {
  /** Platform thread / topic id. */
  readonly threadId?: string | undefined;
  /** The platform message this one answers. */
  readonly replyTo?: string | undefined;
  /**
   * A key that names this message across retries (the delivery obligation id). Adapters whose
   * platform accepts an idempotency key pass it on, so a resend after a crash is recognised there.
   */
  readonly idempotencyKey?: string | undefined;
  /** Not a conversational message (a restart notice): no reply threading, no typing. */
  readonly nonConversational?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface ConnectOptions {
  /** True when the reconnect watcher connects a queued platform (keep server-side update queues). */
  readonly isReconnect: boolean;
  /** Aborted when the connect timed out or the gateway stops: give up and release what you hold. */
  readonly signal: AbortSignal;
}

export interface PlatformAdapter {
  /** The platform name: `telegram`, `webhook`, … */
  readonly platform: string;
  /**
   * Connects. Resolves true when connected; false (or a rejection) when not — with
   * `fatalError` set when the failure is classified. A connected adapter that later fails calls
   * the `onFatalError` handler it was given.
   */
  connect(options: ConnectOptions): Promise<boolean>;
  /** Releases everything (sockets, pollers, listeners). Idempotent; never throws on purpose. */
  disconnect(): Promise<void>;
  send(chatId: string, content: string, options?: SendOptions): Promise<SendResult>;
  /** Shows "typing…" where the platform has it. */
  sendTyping?(chatId: string, options?: { threadId?: string | undefined }): Promise<void>;
  /** The last fatal error, if any. */
  readonly fatalError: AdapterFatalError | undefined;
}

/** Raised by `connectWithTimeout` when a connect outlives its budget. */
export class ConnectTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(platform: string, timeoutS: number) {
    super(`${platform} connect timed out after ${timeoutS}s`);
  }
}

/**
 * Wait-or-detach: races `adapter.connect` against `timeoutS` (≤ 0 = unbounded). On timeout the
 * connect's signal is aborted and the abandoned promise gets a handler (a late rejection is never
 * unhandled); the caller gets a `ConnectTimeoutError` ("<platform> connect timed out after <t>s").
 * A `signal` that is already aborted rejects at once with its `reason` (an `AbortError` unless one
 * was given), and `connect` is never called; one aborted during the connect is passed on to the
 * connect's signal and rejects at once with its `reason` too — the connect is detached as on a
 * timeout, so a connect that ignores its signal cannot hold the caller (a stopping gateway).
 */
export async function connectWithTimeout(
  adapter: PlatformAdapter,
  options: { isReconnect: boolean; timeoutS: number; signal?: AbortSignal; scale?: number },
): Promise<boolean> {
  // An 'abort' listener added to an aborted signal never fires: without this the connect would run
  // with a signal that never aborts.
  options.signal?.throwIfAborted();
  const controller = new AbortController();
  let rejectAborted: (reason: unknown) => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    rejectAborted = reject;
  });
  const onOuterAbort = () => {
    controller.abort(options.signal?.reason);
    rejectAborted(options.signal?.reason);
  };
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let connecting: Promise<boolean> | undefined;
  try {
    // Inside the try: a connect that throws before returning its promise still removes the
    // listener from the fleet's long-lived signal (one stayed behind per failed attempt).
    connecting = adapter.connect({
      isReconnect: options.isReconnect,
      signal: controller.signal,
    });
    const racers: Promise<boolean>[] = [connecting, aborted];
    if (options.timeoutS > 0) {
      racers.push(
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new ConnectTimeoutError(adapter.platform, options.timeoutS)),
            options.timeoutS * 1000 * (options.scale ?? 1),
          );
          timer.unref();
        }),
      );
    }
    return await Promise.race(racers);
  } catch (error) {
    if (error instanceof ConnectTimeoutError) controller.abort(error);
    // Detached (timed out or cancelled): a late rejection of the connect is never unhandled.
    connecting?.catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}
