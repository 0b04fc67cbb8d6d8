import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the fake answers every Bot API call: normally, or with one failure for all of them. */
export type FakeTelegramMode = 'ok' | 'unauthorized' | 'conflict' | 'server_error';

export interface SentMessage {
  readonly chatId: string;
  readonly text: string;
  readonly messageId: number;
  readonly threadId?: number | undefined;
  readonly replyTo?: number | undefined;
}

export interface FakeTelegram {
  readonly baseUrl: string;
  readonly port: number;
  mode: FakeTelegramMode;
  /**
   * How long sendMessage takes to answer (ms), the message already delivered to the chat: the
   * window in which a sender that dies cannot know its message arrived.
   */
  sendLatencyMs: number;
  /** Every sendMessage it accepted, in order. */
  readonly sent: SentMessage[];
  /** Every call (method names), including refused ones. */
  readonly calls: { method: string; at: number }[];
  /** The last setMyCommands menu. */
  commands: { command: string; description: string }[];
  /** Queues a user message; returns its update id. */
  pushMessage(input: { chatId: string | number; text: string; fromId?: number }): number;
  /** Stops listening (connections refused) and cuts every open connection. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Resolves once `count` messages were sent (or rejects after `timeoutMs`). */
  waitForSent(count: number, timeoutMs?: number): Promise<SentMessage[]>;
  close(): Promise<void>;
}

interface Update {
  update_id: number;
  message: {
    message_id: number;
    from: { id: number; is_bot: boolean; first_name: string };
    chat: { id: number; type: string };
    date: number;
    text: string;
  };
}

/**
 * A Telegram Bot API stand-in on loopback for the gateway's Telegram adapter: long polling with
 * the real offset semantics (an update is gone once a later getUpdates names an offset past it),
 * sendMessage, sendChatAction, getMe, setMyCommands, deleteWebhook. It can refuse connections
 * (`down()`), or answer every call 401, 409 or 500 (`mode`).
 */
export async function startFakeTelegram(options: { token: string }): Promise<FakeTelegram> {
  const updates: Update[] = [];
  const sent: SentMessage[] = [];
  const calls: { method: string; at: number }[] = [];
  const sockets = new Set<Socket>();
  const pollers = new Set<() => void>();
  let nextUpdate = 1;
  let nextMessage = 1000;
  let port = 0;
  const sentWaiters = new Set<() => void>();

  const reply = (response: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(text);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? '');
    const method = match?.[2] ?? '';
    calls.push({ method, at: Date.now() });
    if (!match || match[1] !== options.token || fake.mode === 'unauthorized') {
      reply(response, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      return;
    }
    if (fake.mode === 'server_error') {
      reply(response, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
      return;
    }
    if (fake.mode === 'conflict' && method === 'getUpdates') {
      reply(response, 409, {
        ok: false,
        error_code: 409,
        description: 'Conflict: terminated by other getUpdates request',
      });
      return;
    }
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length
        ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>)
        : {};
    } catch {
      reply(response, 400, {
        ok: false,
        error_code: 400,
        description: 'Bad Request: invalid JSON',
      });
      return;
    }
    switch (method) {
      case 'getMe':
        reply(response, 200, {
          ok: true,
          result: { id: 4242, is_bot: true, first_name: 'Hermes', username: 'hermes_test_bot' },
        });
        return;
      case 'deleteWebhook':
        reply(response, 200, { ok: true, result: true });
        return;
      case 'setMyCommands':
        fake.commands = (body.commands as { command: string; description: string }[]) ?? [];
        reply(response, 200, { ok: true, result: true });
        return;
      case 'sendChatAction':
        reply(response, 200, { ok: true, result: true });
        return;
      case 'sendMessage': {
        const message: SentMessage = {
          chatId: String(body.chat_id),
          text: String(body.text ?? ''),
          messageId: nextMessage++,
          threadId: typeof body.message_thread_id === 'number' ? body.message_thread_id : undefined,
          replyTo:
            body.reply_parameters && typeof body.reply_parameters === 'object'
              ? (body.reply_parameters as { message_id?: number }).message_id
              : undefined,
        };
        sent.push(message);
        for (const wake of [...sentWaiters]) wake();
        if (fake.sendLatencyMs > 0)
          await new Promise((resolve) => setTimeout(resolve, fake.sendLatencyMs));
        reply(response, 200, {
          ok: true,
          result: {
            message_id: message.messageId,
            chat: { id: Number(message.chatId) },
            text: message.text,
          },
        });
        return;
      }
      case 'getUpdates': {
        const offset = typeof body.offset === 'number' ? body.offset : 0;
        // Confirmed updates are gone for good, as on Telegram.
        while (updates.length > 0 && (updates[0]?.update_id ?? 0) < offset) updates.shift();
        const timeoutS = typeof body.timeout === 'number' ? body.timeout : 0;
        const answer = () => reply(response, 200, { ok: true, result: updates.slice(0, 100) });
        if (updates.length > 0 || timeoutS <= 0) {
          answer();
          return;
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            pollers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, timeoutS * 1000);
          pollers.add(wake);
          response.on('close', wake);
        });
        if (!response.destroyed && !response.writableEnded) answer();
        return;
      }
      default:
        reply(response, 404, {
          ok: false,
          error_code: 404,
          description: 'Not Found: method not found',
        });
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();

  const fake: FakeTelegram = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    mode: 'ok',
    sendLatencyMs: 0,
    sent,
    calls,
    commands: [],
    pushMessage({ chatId, text, fromId }) {
      const id = nextUpdate++;
      updates.push({
        update_id: id,
        message: {
          message_id: nextMessage++,
          from: { id: fromId ?? Number(chatId), is_bot: false, first_name: 'Ada' },
          chat: { id: Number(chatId), type: 'private' },
          date: Math.floor(Date.now() / 1000),
          text,
        },
      });
      for (const wake of [...pollers]) wake();
      return id;
    },
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    async up() {
      await listen();
    },
    waitForSent(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (sent.length >= count) {
            clearTimeout(timer);
            sentWaiters.delete(check);
            resolve(sent.slice());
          }
        };
        const timer = setTimeout(() => {
          sentWaiters.delete(check);
          reject(new Error(`only ${sent.length} of ${count} messages sent`));
        }, timeoutMs);
        sentWaiters.add(check);
        check();
      });
    },
    async close() {
      for (const wake of [...pollers]) wake();
      if (server.listening) await fake.down();
    },
  };
  return fake;
}
