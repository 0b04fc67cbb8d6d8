import { describe, expect, it } from 'vitest';
import { TelegramApiError } from './bot-api.js';

describe('Telegram error classification', () => {
  it('a rejected token (401, 404) is fatal and not retryable; 409, 429, 5xx and no answer are retryable', () => {
    expect(new TelegramApiError('Unauthorized', 401).toFatal()).toMatchObject({
      code: 'telegram_unauthorized',
      retryable: false,
    });
    expect(new TelegramApiError('Not Found', 404).toFatal().retryable).toBe(false);
    expect(new TelegramApiError('Conflict', 409).toFatal()).toMatchObject({
      code: 'telegram_conflict',
      retryable: true,
    });
    expect(new TelegramApiError('Too Many Requests', 429, 5).toFatal().retryable).toBe(true);
    expect(new TelegramApiError('Bad Gateway', 502).toFatal()).toMatchObject({
      code: 'telegram_http_502',
      retryable: true,
    });
    expect(new TelegramApiError('getUpdates failed: ECONNREFUSED', 0).toFatal()).toMatchObject({
      code: 'telegram_unreachable',
      retryable: true,
    });
    expect(new TelegramApiError('Bad Request: chat not found', 400).toFatal().retryable).toBe(
      false,
    );
  });
});
