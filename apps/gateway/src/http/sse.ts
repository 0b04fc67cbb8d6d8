import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';

export interface EventSink {
  /** Sends one event; `event` omitted for OpenAI-style `data:`-only streams. */
  send(data: unknown, event?: string): Promise<void>;
  /** Sends raw `data: <text>` (e.g. `[DONE]`). */
  sendRaw(text: string): Promise<void>;
  /** True once the client went away. */
  readonly aborted: boolean;
  onAbort(listener: () => void): void;
}

/**
 * A Server-Sent Events response with a keep-alive comment every `keepaliveMs`, so proxies and
 * clients do not drop a stream while a long tool call runs. Writes are serialised; after the
 * client disconnects they are dropped silently.
 */
export function eventStream(
  context: Context,
  options: { keepaliveMs: number; headers?: Record<string, string> },
  body: (sink: EventSink) => Promise<void>,
): Response {
  for (const [name, value] of Object.entries(options.headers ?? {})) context.header(name, value);
  context.header('Cache-Control', 'no-cache');
  context.header('X-Accel-Buffering', 'no');
  return streamSSE(context, async (stream: SSEStreamingApi) => {
    let chain: Promise<unknown> = Promise.resolve();
    const enqueue = (write: () => Promise<unknown>) => {
      chain = chain
        .then(() => (stream.aborted || stream.closed ? undefined : write()))
        .catch(() => {});
      return chain.then(() => undefined);
    };
    const timer = setInterval(() => {
      void enqueue(() => stream.write(': keep-alive\n\n'));
    }, options.keepaliveMs);
    timer.unref();
    const sink: EventSink = {
      send: (data, event) =>
        enqueue(() =>
          stream.writeSSE(
            event === undefined
              ? { data: JSON.stringify(data) }
              : { event, data: JSON.stringify(data) },
          ),
        ),
      sendRaw: (text) => enqueue(() => stream.writeSSE({ data: text })),
      get aborted() {
        return stream.aborted;
      },
      onAbort: (listener) => stream.onAbort(listener),
    };
    try {
      await body(sink);
      await chain;
    } finally {
      clearInterval(timer);
    }
  });
}
