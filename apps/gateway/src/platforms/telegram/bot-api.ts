import type { AdapterFatalError } from '@hermes/supervisor';
import * as v from 'valibot';

/** The public Bot API; `platforms.telegram.api_base_url` points elsewhere (a local Bot API server, a test). */
export const TELEGRAM_DEFAULT_API_BASE_URL = 'https://api.telegram.org';

/** A Bot API call that failed: HTTP status (0 = no answer), Telegram's description, `retry_after`. */
export class TelegramApiError extends Error {
  override readonly name = 'TelegramApiError';
  readonly status: number;
  readonly retryAfterS: number | undefined;
  constructor(message: string, status: number, retryAfterS?: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
    this.retryAfterS = retryAfterS;
  }

  /** 401 / 404 (a wrong token) are the credentials' fault; 409, 429, 5xx and no answer may pass. */
  toFatal(): AdapterFatalError {
    if (this.status === 401 || this.status === 404)
      return {
        code: 'telegram_unauthorized',
        message: `Telegram rejected the bot token (HTTP ${this.status}): ${this.message}. Check TELEGRAM_BOT_TOKEN.`,
        retryable: false,
      };
    if (this.status === 409)
      return {
        code: 'telegram_conflict',
        message: `Another client is polling this bot (HTTP 409): ${this.message}`,
        retryable: true,
      };
    if (this.status === 0)
      return { code: 'telegram_unreachable', message: this.message, retryable: true };
    return {
      code: `telegram_http_${this.status}`,
      message: `Telegram answered HTTP ${this.status}: ${this.message}`,
      retryable: this.status === 429 || this.status >= 500,
    };
  }
}

const envelopeSchema = v.object({
  ok: v.boolean(),
  result: v.optional(v.unknown()),
  description: v.optional(v.string()),
  error_code: v.optional(v.number()),
  parameters: v.optional(v.object({ retry_after: v.optional(v.number()) })),
});

export const telegramUserSchema = v.object({
  id: v.number(),
  is_bot: v.optional(v.boolean()),
  username: v.optional(v.string()),
  first_name: v.optional(v.string()),
});

export const telegramMessageSchema = v.object({
  message_id: v.number(),
  message_thread_id: v.optional(v.number()),
  from: v.optional(telegramUserSchema),
  chat: v.object({ id: v.number(), type: v.optional(v.string()) }),
  text: v.optional(v.string()),
  caption: v.optional(v.string()),
});

export const telegramUpdateSchema = v.object({
  update_id: v.number(),
  message: v.optional(telegramMessageSchema),
});

export type TelegramUpdate = v.InferOutput<typeof telegramUpdateSchema>;
export type TelegramMessage = v.InferOutput<typeof telegramMessageSchema>;

export interface BotApiOptions {
  readonly baseUrl: string;
  readonly token: string;
}

/** The handful of Bot API methods the adapter uses, over `fetch`, each bounded and abortable. */
export class BotApi {
  readonly #base: string;

  constructor(options: BotApiOptions) {
    this.#base = `${options.baseUrl.replace(/\/+$/, '')}/bot${options.token}`;
  }

  async call(
    method: string,
    body: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<unknown> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await fetch(`${this.#base}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      // Never echo the URL: it carries the token.
      const cause = error instanceof Error ? (error.cause ?? error) : error;
      const code =
        cause && typeof cause === 'object' && 'code' in cause ? String(cause.code) : undefined;
      const reason = timeout.aborted
        ? `timed out after ${options.timeoutMs} ms`
        : (code ?? (error instanceof Error ? error.name : 'network error'));
      throw new TelegramApiError(`${method} failed: ${reason}`, 0, undefined, { cause: error });
    }
    let parsed: v.InferOutput<typeof envelopeSchema> | undefined;
    try {
      const result = v.safeParse(envelopeSchema, await response.json());
      if (result.success) parsed = result.output;
    } catch {
      parsed = undefined;
    }
    if (!response.ok || !parsed?.ok) {
      throw new TelegramApiError(
        parsed?.description ?? `${method} answered HTTP ${response.status}`,
        response.status,
        parsed?.parameters?.retry_after,
      );
    }
    return parsed.result;
  }
}
