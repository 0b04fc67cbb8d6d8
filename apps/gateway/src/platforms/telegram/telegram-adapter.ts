import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { telegramMenuCommands } from '@hermes/commands';
import { writeFileAtomic } from '@hermes/config';
import type {
  AdapterFatalError,
  AdapterHooks,
  ConnectOptions,
  PlatformAdapter,
  SendOptions,
  SendResult,
  SupervisorClock,
} from '@hermes/supervisor';
import type { Logger } from 'pino';
import * as v from 'valibot';
import type { InboundMessage, InboundSink } from '../inbound.js';
import { BotApi, TelegramApiError, telegramUpdateSchema, telegramUserSchema } from './bot-api.js';

/** Telegram's limit on one message's text. */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
/** Consecutive failed polls (network, 5xx, 409) before the adapter reports a retryable fatal error. */
export const TELEGRAM_MAX_POLL_FAILURES = 3;

export interface TelegramSettings {
  readonly token: string;
  readonly apiBaseUrl: string;
  /** Long-poll timeout (s) of `getUpdates`. */
  readonly pollTimeoutS: number;
  /** Only these chat ids are answered (empty: every chat). */
  readonly allowedChats: readonly string[];
  /** Register the slash-command menu (`setMyCommands`) on connect. */
  readonly commandMenu: boolean;
}

export interface TelegramAdapterOptions {
  readonly settings: TelegramSettings;
  readonly hooks: AdapterHooks;
  readonly sink: InboundSink;
  /** Where the update offset is kept across restarts. */
  readonly stateDir: string;
  readonly logger: Logger;
  readonly clock: SupervisorClock;
}

const offsetSchema = v.object({ botId: v.number(), offset: v.number() });

function splitMessage(text: string): string[] {
  if (text.length <= TELEGRAM_MAX_MESSAGE_LENGTH) return [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > TELEGRAM_MAX_MESSAGE_LENGTH) {
    const window = rest.slice(0, TELEGRAM_MAX_MESSAGE_LENGTH);
    const cut = Math.max(window.lastIndexOf('\n'), TELEGRAM_MAX_MESSAGE_LENGTH / 2);
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^\n/, '');
  }
  if (rest) parts.push(rest);
  return parts;
}

/**
 * Telegram over the Bot API: long polling (`getUpdates`), `sendMessage`, `sendChatAction`, and
 * the command menu from `@hermes/commands`. Inbound messages are handed to the sink and made
 * durable before the offset that confirms them to Telegram is advanced (and stored), so a crash
 * never loses a message nor has Telegram deliver one the gateway already took.
 */
export class TelegramAdapter implements PlatformAdapter {
  readonly platform = 'telegram';
  fatalError: AdapterFatalError | undefined;
  readonly #options: TelegramAdapterOptions;
  readonly #api: BotApi;
  readonly #stop = new AbortController();
  #botId = 0;
  #offset = 0;
  #poller: Promise<void> | undefined;

  constructor(options: TelegramAdapterOptions) {
    this.#options = options;
    this.#api = new BotApi({ baseUrl: options.settings.apiBaseUrl, token: options.settings.token });
  }

  get #offsetFile() {
    return path.join(this.#options.stateDir, 'telegram.offset.json');
  }

  async connect(options: ConnectOptions): Promise<boolean> {
    const signal = AbortSignal.any([options.signal, this.#stop.signal]);
    try {
      const me = v.parse(
        telegramUserSchema,
        await this.#api.call('getMe', {}, { signal, timeoutMs: 15_000 }),
      );
      this.#botId = me.id;
      if (!options.isReconnect) {
        // A webhook set elsewhere makes getUpdates fail with 409; pending updates are kept.
        await this.#api
          .call('deleteWebhook', { drop_pending_updates: false }, { signal, timeoutMs: 15_000 })
          .catch((error: unknown) =>
            this.#options.logger.debug({ err: error }, 'telegram deleteWebhook failed'),
          );
      }
      if (this.#options.settings.commandMenu) {
        const menu = telegramMenuCommands();
        await this.#api
          .call('setMyCommands', { commands: menu.commands }, { signal, timeoutMs: 15_000 })
          .catch((error: unknown) =>
            this.#options.logger.warn(
              { err: error instanceof Error ? error.message : String(error) },
              'telegram command menu not registered',
            ),
          );
      }
      this.#offset = await this.#readOffset();
    } catch (error) {
      this.fatalError =
        error instanceof TelegramApiError
          ? error.toFatal()
          : {
              code: 'telegram_error',
              message: error instanceof Error ? error.message : String(error),
              retryable: true,
            };
      return false;
    }
    if (signal.aborted) return false;
    this.#options.logger.info(
      { platform: 'telegram', botId: this.#botId, isReconnect: options.isReconnect },
      'telegram connected',
    );
    this.#poller = this.#poll();
    return true;
  }

  async #readOffset(): Promise<number> {
    try {
      const stored = v.parse(offsetSchema, JSON.parse(await readFile(this.#offsetFile, 'utf8')));
      return stored.botId === this.#botId ? stored.offset : 0;
    } catch {
      return 0;
    }
  }

  async #writeOffset(offset: number): Promise<void> {
    await mkdir(this.#options.stateDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.#offsetFile, JSON.stringify({ botId: this.#botId, offset }));
  }

  async #poll(): Promise<void> {
    const { settings, sink, clock, logger } = this.#options;
    const signal = this.#stop.signal;
    let failures = 0;
    while (!signal.aborted) {
      let raw: unknown;
      try {
        raw = await this.#api.call(
          'getUpdates',
          { offset: this.#offset, timeout: settings.pollTimeoutS, allowed_updates: ['message'] },
          { signal, timeoutMs: (settings.pollTimeoutS + 15) * 1000 },
        );
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        const fatal =
          error instanceof TelegramApiError
            ? error.toFatal()
            : { code: 'telegram_error', message: String(error), retryable: true };
        failures += 1;
        if (!fatal.retryable || failures >= TELEGRAM_MAX_POLL_FAILURES) {
          this.fatalError = fatal;
          this.#options.hooks.reportFatal(fatal);
          return;
        }
        logger.warn(
          { platform: 'telegram', failures, error: fatal.message },
          'telegram poll failed; retrying',
        );
        const waitS =
          error instanceof TelegramApiError && error.retryAfterS ? error.retryAfterS : failures;
        await clock.sleep(waitS * 1000, signal);
        continue;
      }
      const updates = Array.isArray(raw) ? raw : [];
      const messages: InboundMessage[] = [];
      let next = this.#offset;
      for (const candidate of updates) {
        const parsed = v.safeParse(telegramUpdateSchema, candidate);
        if (!parsed.success) continue;
        const update = parsed.output;
        next = Math.max(next, update.update_id + 1);
        const message = update.message;
        const text = message?.text ?? message?.caption;
        if (!message || text === undefined || message.from?.is_bot) continue;
        const chatId = String(message.chat.id);
        if (settings.allowedChats.length > 0 && !settings.allowedChats.includes(chatId)) {
          logger.info(
            { platform: 'telegram', chatId },
            'telegram message from a chat not allowed; ignored',
          );
          continue;
        }
        messages.push({
          platform: 'telegram',
          chatId,
          threadId:
            message.message_thread_id === undefined ? null : String(message.message_thread_id),
          messageId: String(message.message_id),
          userId: message.from ? String(message.from.id) : null,
          userName: message.from?.username ?? message.from?.first_name ?? null,
          text,
          receivedAt: Date.now(),
        });
      }
      if (next === this.#offset) continue;
      try {
        // Durable before confirmed: journal, then store the offset, then run.
        if (messages.length > 0) await sink.accept(messages);
        await this.#writeOffset(next);
      } catch (error) {
        if (signal.aborted) return;
        const fatal = {
          code: 'telegram_inbound_storage',
          message: `inbound messages could not be stored: ${error instanceof Error ? error.message : String(error)}`,
          retryable: true,
        };
        this.fatalError = fatal;
        this.#options.hooks.reportFatal(fatal);
        return;
      }
      this.#offset = next;
      if (messages.length > 0) sink.dispatch(messages);
    }
  }

  async send(chatId: string, content: string, options: SendOptions = {}): Promise<SendResult> {
    let messageId: string | undefined;
    try {
      for (const [index, part] of splitMessage(content).entries()) {
        const sent = (await this.#api.call(
          'sendMessage',
          {
            chat_id: chatId,
            text: part,
            ...(options.threadId ? { message_thread_id: Number(options.threadId) } : {}),
            ...(options.replyTo && index === 0 && !options.nonConversational
              ? {
                  reply_parameters: {
                    message_id: Number(options.replyTo),
                    allow_sending_without_reply: true,
                  },
                }
              : {}),
          },
          { timeoutMs: 30_000, ...(options.signal ? { signal: options.signal } : {}) },
        )) as { message_id?: number } | undefined;
        if (index === 0 && sent?.message_id !== undefined) messageId = String(sent.message_id);
      }
      return { success: true, messageId };
    } catch (error) {
      if (error instanceof TelegramApiError) {
        if (error.status === 429)
          return {
            success: false,
            error: `flood_control:${error.retryAfterS ?? 60}`,
            retryable: true,
          };
        const fatal = error.toFatal();
        return { success: false, error: fatal.message, retryable: fatal.retryable };
      }
      return { success: false, error: String(error), retryable: true };
    }
  }

  async sendTyping(chatId: string, options: { threadId?: string | undefined } = {}): Promise<void> {
    await this.#api
      .call(
        'sendChatAction',
        {
          chat_id: chatId,
          action: 'typing',
          ...(options.threadId ? { message_thread_id: Number(options.threadId) } : {}),
        },
        { timeoutMs: 10_000 },
      )
      .catch(() => {});
  }

  async disconnect(): Promise<void> {
    this.#stop.abort();
    await this.#poller?.catch(() => {});
  }
}
