import path from 'node:path';
import type { ProfileRuntime } from '@hermes/agent';
import type { LoadedConfig } from '@hermes/config';
import type { SessionStore } from '@hermes/session-store';
import {
  createPlatformFleet,
  type PlatformFleet,
  type PlatformStatus,
  type StartupSummary,
  type SupervisorClock,
  type SupervisorLogger,
} from '@hermes/supervisor';
import type { Logger } from 'pino';
import {
  consumeCleanShutdown,
  ONLINE_NOTICE_TEXT,
  RESTART_NOTICE_TEXT,
  RESTART_NOTIFY_FILE,
  RESTART_PENDING_FILE,
  type RestartNotifyMarker,
  type RestartPendingMarker,
  readRestartNotify,
  readRestartPending,
  removeMarker,
} from '../restart/markers.js';
import { RestoreGate, waitBounded } from '../restart/restore-gate.js';
import type { ActiveTurns } from '../runtime/active-turns.js';
import type { SlashCommands } from '../runtime/slash-commands.js';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';
import { PlatformConversations } from './conversations.js';
import { InboundJournal, type JournalEntry } from './inbound-journal.js';
import { OwedReplies } from './owed-replies.js';
import {
  type GatewayPlatformKnobs,
  type PlatformConfigEntry,
  readPlatformConfigs,
  type SupportedPlatform,
  TELEGRAM_RECONNECT_TIMEOUT_S,
  TELEGRAM_STARTUP_CONNECT_TIMEOUT_S,
} from './platform-settings.js';
import { TelegramAdapter } from './telegram/telegram-adapter.js';
import { WebhookRoutes } from './webhook/routes.js';
import { WebhookAdapter } from './webhook/webhook-adapter.js';

export interface PlatformServiceOptions {
  readonly home: string;
  readonly runtime: ProfileRuntime;
  readonly loaded: LoadedConfig;
  readonly knobs: GatewayPlatformKnobs;
  readonly turns: ActiveTurns;
  readonly slash: SlashCommands;
  readonly logger: Logger;
  readonly clock: SupervisorClock;
  readonly timeScale: number;
  readonly runTurn: (request: TurnRequest) => Promise<TurnOutcome>;
  /** The profile a webhook request addresses (`undefined`: bare route); null = refused. */
  readonly resolveWebhookProfile: (prefix: string | undefined) => string | null;
  /** The gateway must end: the service manager decides what comes next from the exit code. */
  readonly requestExit: (code: number, reason: string) => void;
  readonly onReconnectAttempt?: (platform: string) => void;
  readonly onTurn?: (platform: string, status: string) => void;
  readonly onWebhookListening?: (url: string) => void;
}

export interface BootReport {
  readonly cleanShutdown: boolean;
  readonly claimed: number;
  readonly recovered: number;
  readonly stillRunning: number;
  readonly replayed: number;
}

function supervisorLogger(logger: Logger): SupervisorLogger {
  return {
    info: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
    error: (message, error) => logger.error(error ? { err: error } : {}, message),
  };
}

/**
 * The messaging side of the gateway: the platform fleet (adapters under supervision), the inbound
 * journal, the restore gate, conversations and the replies owed. `start()` connects (inbound waits
 * behind the gate), `boot()` claims what the previous run owed, sends the restart notices,
 * redelivers, resumes interrupted turns and opens the gate.
 */
export class PlatformService {
  readonly configs: Map<SupportedPlatform, PlatformConfigEntry>;
  readonly journal: InboundJournal;
  readonly gate: RestoreGate;
  readonly owed: OwedReplies;
  readonly conversations: PlatformConversations;
  readonly fleet: PlatformFleet;
  readonly #options: PlatformServiceOptions;
  #previous: JournalEntry[] = [];
  #notify: RestartNotifyMarker | undefined;
  #pending: RestartPendingMarker | undefined;
  #cleanShutdown = false;
  webhookUrl: string | undefined;

  constructor(options: PlatformServiceOptions) {
    this.#options = options;
    const { logger } = options;
    this.configs = readPlatformConfigs(
      options.loaded,
      (name) => options.runtime.secret(name),
      (message) => logger.warn(message),
    );
    this.journal = new InboundJournal(path.join(options.home, 'state', 'inbound'));
    this.gate = new RestoreGate({
      onQueued: (label) =>
        logger.info(`Queued inbound message during gateway startup restore: ${label}`),
    });
    this.owed = new OwedReplies({
      store: () => options.runtime.store(),
      adapter: (platform) => this.fleet.adapter(platform),
      logger,
      timeScale: options.timeScale,
    });
    this.conversations = new PlatformConversations({
      runtime: options.runtime,
      turns: options.turns,
      journal: this.journal,
      owed: this.owed,
      gate: this.gate,
      slash: options.slash,
      logger,
      adapter: (platform) => this.fleet.adapter(platform),
      runTurn: options.runTurn,
      ...(options.onTurn ? { onTurn: options.onTurn } : {}),
    });
    const { knobs } = options;
    this.fleet = createPlatformFleet<PlatformConfigEntry>({
      platforms: new Map(this.configs),
      clock: options.clock,
      timeScale: options.timeScale,
      logger: supervisorLogger(logger),
      onAllAdaptersDown: knobs.onAllAdaptersDown,
      disconnectTimeoutS: knobs.disconnectTimeoutS,
      connectTimeoutS: (platform, phase) => {
        if (knobs.connectTimeoutOverrideS !== undefined) return knobs.connectTimeoutOverrideS;
        if (platform === 'telegram')
          return phase === 'startup'
            ? TELEGRAM_STARTUP_CONNECT_TIMEOUT_S
            : TELEGRAM_RECONNECT_TIMEOUT_S;
        return 30;
      },
      createAdapter: (platform, config, hooks) => {
        if (platform !== 'telegram' || config.kind !== 'telegram') {
          if (config.kind !== 'webhook') return undefined;
          return new WebhookAdapter({
            settings: config.settings,
            routes: new WebhookRoutes({
              home: options.home,
              configured: config.routes,
              launchProfile: options.runtime.name,
              warn: (message) => logger.warn(message),
            }),
            sink: this.conversations,
            resolveProfile: options.resolveWebhookProfile,
            deliverTo: async (target, chatId, content, sendOptions) => {
              const adapter = this.fleet.adapter(target);
              if (!adapter)
                return { success: false, error: `${target} is not connected`, retryable: true };
              return adapter.send(chatId, content, sendOptions);
            },
            logger,
            onListening: (url) => {
              this.webhookUrl = url;
              options.onWebhookListening?.(url);
            },
          });
        }
        if ('missing' in config.settings) throw new Error(config.settings.missing);
        options.onReconnectAttempt?.(platform);
        return new TelegramAdapter({
          settings: config.settings,
          hooks,
          sink: this.conversations,
          stateDir: path.join(options.home, 'state'),
          logger,
          clock: options.clock,
        });
      },
      onConnected: (platform, _adapter, { isReconnect }) => {
        if (isReconnect) void this.#afterReconnect(platform);
      },
      onPlatformLost: (event) => options.requestExit(1, event.exitReason),
      onNoAdaptersLeft: (event) => options.requestExit(event.retryable ? 1 : 0, event.reason),
    });
  }

  get enabled(): number {
    return this.configs.size;
  }

  /** Reads what the previous run left (markers, journal), then connects every platform. */
  async start(): Promise<StartupSummary> {
    const { home, logger } = this.#options;
    this.#cleanShutdown = await consumeCleanShutdown(home);
    this.#notify = await readRestartNotify(home);
    this.#pending = await readRestartPending(home);
    this.#previous = await this.journal.load();
    if (this.#previous.length > 0)
      logger.info(
        { count: this.#previous.length, cleanShutdown: this.#cleanShutdown },
        'inbound messages left by the previous run will be handled first',
      );
    return this.fleet.start();
  }

  /**
   * The boot sequence (reference §5.2–5.5): claim the obligations of the previous run for the
   * connected platforms — in the database, before anything is sent —, then in the background the
   * restart notices and the redelivery, and the previous run's unfinished messages; wait for that
   * at most the restore-gate timeout, then open the gate.
   */
  async boot(): Promise<BootReport> {
    const { logger, knobs } = this.#options;
    const store = await this.#options.runtime.store();
    const connected = this.fleet.connected();
    const claimed = connected.length > 0 ? await this.#claim(store, connected) : 0;
    const bootSends = (async () => {
      const notified = await this.#sendRestartNotice();
      await this.#sendOnlineNotices(notified);
      await this.owed.deliver();
    })().catch((error: unknown) => logger.warn({ err: error }, 'boot sends failed'));
    const recovered = this.conversations.recover(this.#previous);
    const stillRunning = await waitBounded([bootSends, ...recovered], knobs.restoreGateTimeoutS);
    if (stillRunning > 0)
      logger.warn(
        `Startup-restore gate released after ${knobs.restoreGateTimeoutS}s with ${stillRunning} boot task(s) still running; they continue in the background.`,
      );
    const replayed = this.gate.open();
    logger.info(
      { claimed, recovered: recovered.length, stillRunning, replayed },
      'startup restore finished; inbound gate open',
    );
    return {
      cleanShutdown: this.#cleanShutdown,
      claimed,
      recovered: recovered.length,
      stillRunning,
      replayed,
    };
  }

  async #claim(store: SessionStore, platforms: readonly string[]): Promise<number> {
    const rows = await store.claimPendingObligations({ platforms }).catch((error: unknown) => {
      this.#options.logger.warn({ err: error }, 'obligation claim failed');
      return [];
    });
    for (const row of rows) {
      this.owed.add({
        obligationId: row.obligationId,
        platform: row.platform,
        chatId: row.chatId,
        threadId: row.threadId,
        content: row.content,
        needsMarker: row.needsRecoveredMarker,
        notBefore: row.adopted ? row.notBefore : null,
      });
    }
    if (rows.length > 0)
      this.#options.logger.info(
        { count: rows.length, platforms },
        'claimed owed replies of the previous run',
      );
    return rows.length;
  }

  async #afterReconnect(platform: string): Promise<void> {
    try {
      const store = await this.#options.runtime.store();
      await this.#claim(store, [platform]);
      const delivered = await this.owed.deliver(platform);
      if (delivered > 0)
        this.#options.logger.info(
          { platform, delivered },
          'owed replies delivered after reconnect',
        );
    } catch (error) {
      this.#options.logger.warn({ err: error, platform }, 'redelivery after reconnect failed');
    }
  }

  async #sendRestartNotice(): Promise<string | undefined> {
    const marker = this.#notify;
    if (!marker) return undefined;
    const { logger, home } = this.#options;
    try {
      const config = this.configs.get(marker.platform as SupportedPlatform);
      const adapter = this.fleet.adapter(marker.platform);
      if (!adapter || !config) return undefined;
      if (!config.restartNotification) {
        logger.info(
          `Restart notification suppressed: ${marker.platform} gateway_restart_notification is false`,
        );
        return undefined;
      }
      const result = await adapter.send(marker.chatId, RESTART_NOTICE_TEXT, {
        threadId: marker.threadId ?? undefined,
        nonConversational: true,
      });
      if (!result.success) {
        logger.warn({ error: result.error }, 'restart notification not delivered');
        return undefined;
      }
      return `${marker.platform}:${marker.chatId}:${marker.threadId ?? ''}`;
    } finally {
      await removeMarker(home, RESTART_NOTIFY_FILE).catch(() => {});
    }
  }

  async #sendOnlineNotices(alreadyNotified: string | undefined): Promise<void> {
    if (!this.#pending) return;
    const { logger, home } = this.#options;
    try {
      const seen = new Set<string>(alreadyNotified ? [alreadyNotified] : []);
      for (const [platform, config] of this.configs) {
        if (!config.homeChannel || !config.restartNotification) continue;
        const key = `${platform}:${config.homeChannel}:`;
        if (seen.has(key)) continue;
        seen.add(key);
        const adapter = this.fleet.adapter(platform);
        if (!adapter) continue;
        const result = await adapter.send(config.homeChannel, ONLINE_NOTICE_TEXT, {
          nonConversational: true,
        });
        if (!result.success)
          logger.warn({ platform, error: result.error }, 'online notice not delivered');
      }
    } finally {
      await removeMarker(home, RESTART_PENDING_FILE).catch(() => {});
    }
  }

  status(): PlatformStatus[] {
    return this.fleet.status();
  }

  beginShutdown(): void {
    this.fleet.beginShutdown();
  }

  async stop(): Promise<void> {
    this.owed.stop();
    await this.fleet.stop();
  }
}
