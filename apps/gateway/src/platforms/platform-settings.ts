import { coerceBoolean, coerceNumber, type LoadedConfig, readGatewayKey } from '@hermes/config';
import type { OnAllAdaptersDown } from '@hermes/supervisor';
import { TELEGRAM_DEFAULT_API_BASE_URL } from './telegram/bot-api.js';
import type { TelegramSettings } from './telegram/telegram-adapter.js';
import {
  DEFAULT_WEBHOOK_MAX_BODY_BYTES,
  DEFAULT_WEBHOOK_PORT,
  type WebhookSettings,
} from './webhook/webhook-adapter.js';

/** Platforms this gateway has adapters for. */
export const SUPPORTED_PLATFORMS = ['telegram', 'webhook'] as const;
export type SupportedPlatform = (typeof SUPPORTED_PLATFORMS)[number];

/** Telegram's cold-start connect budget (s); the watcher then gets the full 180 s. */
export const TELEGRAM_STARTUP_CONNECT_TIMEOUT_S = 45;
export const TELEGRAM_RECONNECT_TIMEOUT_S = 180;
export const DEFAULT_TELEGRAM_POLL_TIMEOUT_S = 30;

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function list(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map(text).filter((item): item is string => item !== undefined);
}

export interface PlatformCommon {
  /** The chat that gets the "gateway online" notice after a restart. */
  readonly homeChannel: string | undefined;
  /** `gateway_restart_notification` (default true). */
  readonly restartNotification: boolean;
}

export interface TelegramPlatformConfig extends PlatformCommon {
  readonly kind: 'telegram';
  /** Without a token the platform cannot start (a clear error, not a retry). */
  readonly settings: TelegramSettings | { readonly missing: string };
}

export interface WebhookPlatformConfig extends PlatformCommon {
  readonly kind: 'webhook';
  readonly settings: WebhookSettings;
  readonly routes: unknown;
}

export type PlatformConfigEntry = TelegramPlatformConfig | WebhookPlatformConfig;

/**
 * The enabled platforms of `config.yaml` (`platforms.<name>.enabled: true`) with their settings.
 * Unknown platform names are reported (a typo must not look like a silent success).
 */
export function readPlatformConfigs(
  loaded: LoadedConfig,
  secret: (name: string) => string | undefined,
  warn: (message: string) => void,
): Map<SupportedPlatform, PlatformConfigEntry> {
  const configs = new Map<SupportedPlatform, PlatformConfigEntry>();
  for (const [name, platform] of Object.entries(loaded.config.platforms)) {
    if (!platform.enabled || name === 'api_server') continue;
    const settings = platform.settings;
    const common: PlatformCommon = {
      homeChannel: text(settings.home_channel),
      restartNotification: coerceBoolean(settings.gateway_restart_notification, true),
    };
    if (name === 'telegram') {
      const token = text(settings.token) ?? secret('TELEGRAM_BOT_TOKEN');
      configs.set('telegram', {
        kind: 'telegram',
        ...common,
        settings: token
          ? {
              token,
              apiBaseUrl: text(settings.api_base_url) ?? TELEGRAM_DEFAULT_API_BASE_URL,
              pollTimeoutS: coerceNumber(settings.poll_timeout, DEFAULT_TELEGRAM_POLL_TIMEOUT_S, {
                min: 0,
                max: 50,
              }),
              allowedChats: list(settings.allowed_chats),
              commandMenu: coerceBoolean(settings.command_menu, true),
            }
          : {
              missing:
                'TELEGRAM_BOT_TOKEN is not set: put it in <home>/.env (or platforms.telegram.token in config.yaml)',
            },
      });
    } else if (name === 'webhook') {
      configs.set('webhook', {
        kind: 'webhook',
        ...common,
        settings: {
          host: text(settings.host) ?? '127.0.0.1',
          port: coerceNumber(settings.port, DEFAULT_WEBHOOK_PORT, { min: 0, max: 65_535 }),
          maxBodyBytes: coerceNumber(settings.max_body_bytes, DEFAULT_WEBHOOK_MAX_BODY_BYTES, {
            min: 1,
            max: 100 * 1_048_576,
          }),
        },
        routes: settings.routes,
      });
    } else {
      warn(
        `platforms.${name} is enabled but this gateway has no ${name} adapter (supported: ${SUPPORTED_PLATFORMS.join(', ')}); ignored`,
      );
    }
  }
  return configs;
}

export interface GatewayPlatformKnobs {
  readonly onAllAdaptersDown: OnAllAdaptersDown;
  /** Seconds the restore gate waits for boot work; ≤ 0 = all of it. */
  readonly restoreGateTimeoutS: number;
  readonly housekeepingIntervalS: number;
  /** `HERMES_GATEWAY_PLATFORM_CONNECT_TIMEOUT` (s), when set and valid. */
  readonly connectTimeoutOverrideS: number | undefined;
  readonly disconnectTimeoutS: number;
}

export const DEFAULT_HOUSEKEEPING_INTERVAL_S = 60;

export function readGatewayPlatformKnobs(
  loaded: LoadedConfig,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): GatewayPlatformKnobs {
  const down = text(readGatewayKey(loaded.raw, 'on_all_adapters_down'));
  if (down !== undefined && down !== 'exit' && down !== 'stay_alive')
    warn(`gateway.on_all_adapters_down must be exit or stay_alive; using exit`);
  const gate = readGatewayKey(loaded.raw, 'restore_gate_timeout');
  const envNumber = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    const value = Number(raw);
    if (Number.isFinite(value)) return value;
    warn(`${name} must be a number of seconds; ignored`);
    return undefined;
  };
  return {
    onAllAdaptersDown: down === 'stay_alive' ? 'stay_alive' : 'exit',
    restoreGateTimeoutS:
      gate === undefined
        ? loaded.config.gateway.startupRestoreDrainTimeoutS
        : coerceNumber(gate, loaded.config.gateway.startupRestoreDrainTimeoutS, {
            min: -1,
            max: 86_400,
          }),
    housekeepingIntervalS: coerceNumber(
      readGatewayKey(loaded.raw, 'housekeeping_interval'),
      DEFAULT_HOUSEKEEPING_INTERVAL_S,
      { min: 0.01, max: 86_400 },
    ),
    connectTimeoutOverrideS: envNumber('HERMES_GATEWAY_PLATFORM_CONNECT_TIMEOUT'),
    disconnectTimeoutS: envNumber('HERMES_GATEWAY_ADAPTER_DISCONNECT_TIMEOUT') ?? 5,
  };
}
