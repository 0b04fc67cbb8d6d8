import path from 'node:path';
import type { ProfileRuntime, ProfileRuntimeSet } from '@hermes/agent';
import type { LoadedConfig } from '@hermes/config';
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
import type { PlatformConversations } from './conversations.js';
import type { InboundJournal, JournalEntry } from './inbound-journal.js';
import type { OwedReplies, ReplySender } from './owed-replies.js';
import { PlatformLane } from './platform-lane.js';
import {
  type GatewayPlatformKnobs,
  type PlatformConfigEntry,
  readPlatformConfigs,
  type SupportedPlatform,
  TELEGRAM_RECONNECT_TIMEOUT_S,
  TELEGRAM_STARTUP_CONNECT_TIMEOUT_S,
} from './platform-settings.js';
import { TelegramAdapter } from './telegram/telegram-adapter.js';
import { type WebhookRoute, WebhookRoutes } from './webhook/routes.js';
import { WebhookAdapter } from './webhook/webhook-adapter.js';
import { WebhookLanes } from './webhook/webhook-lanes.js';

export interface PlatformServiceOptions {
  readonly home: string;
  /** The profiles served: the launch one runs the platforms, the others are reached by webhook. */
  readonly registry: ProfileRuntimeSet;
  readonly loaded: LoadedConfig;
  readonly knobs: GatewayPlatformKnobs;
  readonly turns: ActiveTurns;
  readonly slash: SlashCommands;
  readonly logger: Logger;
  readonly clock: SupervisorClock;
  readonly timeScale: number;
  readonly runTurn: (request: TurnRequest) => Promise<TurnOutcome>;
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
  readonly gate: RestoreGate;
  /** The launch profile's journal, replies owed and conversations. */
  readonly launch: PlatformLane;
  /** The profiles the webhook listener serves (undefined without the webhook platform). */
  readonly webhookLanes: WebhookLanes | undefined;
  readonly fleet: PlatformFleet;
  readonly #options: PlatformServiceOptions;
  #previous: JournalEntry[] = [];
  #notify: RestartNotifyMarker | undefined;
  #pending: RestartPendingMarker | undefined;
  #cleanShutdown = false;
  webhookUrl: string | undefined;

  constructor(options: PlatformServiceOptions) {
    this.#options = options;
    const { logger, registry } = options;
    const runtime = registry.launch;
    this.configs = readPlatformConfigs(
      options.loaded,
      (name) => runtime.secret(name),
      (message) => logger.warn(message),
    );
    this.gate = new RestoreGate({
      onQueued: (label) =>
        logger.info(`Queued inbound message during gateway startup restore: ${label}`),
    });
    const lane = (
      laneRuntime: ProfileRuntime,
      sender: (platform: string) => ReplySender | undefined,
    ) =>
      new PlatformLane({
        runtime: laneRuntime,
        turns: options.turns,
        gate: this.gate,
        slash: options.slash,
        logger,
        timeScale: options.timeScale,
        runTurn: options.runTurn,
        sender,
        onTurn: options.onTurn,
      });
    this.launch = lane(runtime, (platform) => this.fleet.adapter(platform));
    const webhook = this.configs.get('webhook');
    this.webhookLanes =
      webhook?.kind === 'webhook'
        ? new WebhookLanes({
            registry,
            launch: this.launch,
            listenerRoutes: new WebhookRoutes({
              home: options.home,
              configured: webhook.routes,
              owner: runtime.name,
              warn: (message) => logger.warn(message),
              secret: (name) => runtime.secret(name),
            }),
            // Another profile's replies: its webhook routes through the one listener, any other
            // platform through the gateway's own adapter of it.
            createLane: (laneRuntime, route) =>
              lane(laneRuntime, (platform) =>
                platform === 'webhook' ? this.#webhookSender(route) : this.fleet.adapter(platform),
              ),
            logger,
          })
        : undefined;
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
          const lanes = this.webhookLanes;
          if (config.kind !== 'webhook' || !lanes) return undefined;
          return new WebhookAdapter({
            settings: config.settings,
            lane: (prefix) => lanes.resolve(prefix),
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
          sink: this.launch.conversations,
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

  /** The launch profile's inbound journal. */
  get journal(): InboundJournal {
    return this.launch.journal;
  }

  /** The launch profile's replies owed. */
  get owed(): OwedReplies {
    return this.launch.owed;
  }

  /** The launch profile's conversations. */
  get conversations(): PlatformConversations {
    return this.launch.conversations;
  }

  /** Every served profile's lane built so far, the launch profile's first. */
  lanes(): PlatformLane[] {
    return [this.launch, ...(this.webhookLanes?.secondaries() ?? [])];
  }

  /** Replies owed by every served profile. */
  get owedSize(): number {
    return this.lanes().reduce((sum, lane) => sum + lane.owed.size, 0);
  }

  /** Inbound journal entries of every served profile. */
  get journalSize(): number {
    return this.lanes().reduce((sum, lane) => sum + lane.journal.size, 0);
  }

  /** Resolves once every served profile's queued platform messages are handled. */
  async idle(): Promise<void> {
    await Promise.all(this.lanes().map((lane) => lane.conversations.idle()));
  }

  /**
   * Multiplexing: says which platforms other served profiles enable that this gateway does not
   * run for them — their own Telegram bot, or webhook routes when there is no listener to mirror
   * them on. (Their webhook host and port are reported when their routes are mirrored.)
   */
  warnUnservedProfilePlatforms(): void {
    const { registry, logger } = this.#options;
    if (registry.serve !== 'multiplex') return;
    for (const name of registry.servedProfiles()) {
      const runtime = registry.find(name);
      if (!runtime || runtime === registry.launch) continue;
      let platforms: LoadedConfig['config']['platforms'];
      try {
        platforms = runtime.config().config.platforms;
      } catch {
        continue; // reported when the profile is used
      }
      if (platforms.webhook?.enabled && !this.webhookLanes)
        logger.warn(
          `profile ${name}: platforms.webhook is not served: its routes are mirrored under /p/${name} on the webhook listener of profile ${registry.launch.name}, which does not enable platforms.webhook`,
        );
      if (platforms.telegram?.enabled)
        logger.warn(
          `profile ${name}: platforms.telegram is not served: under multiplexing only profile ${registry.launch.name}'s platforms run (webhook routes excepted)`,
        );
    }
  }

  /** Another profile's webhook replies, sent through the listener while it is connected. */
  #webhookSender(route: (name: string) => WebhookRoute | undefined): ReplySender | undefined {
    const adapter = this.fleet.adapter('webhook');
    if (!(adapter instanceof WebhookAdapter)) return undefined;
    return {
      send: async (chatId, content, sendOptions) => {
        const found = route(chatId);
        if (!found)
          return { success: false, error: `unknown webhook route ${chatId}`, retryable: false };
        return adapter.sendRoute(found, content, sendOptions);
      },
    };
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
    const connected = this.fleet.connected();
    const claimed = connected.length > 0 ? await this.launch.claim(connected) : 0;
    const bootSends = (async () => {
      const notified = await this.#sendRestartNotice();
      await this.#sendOnlineNotices(notified);
      await this.owed.deliver();
    })().catch((error: unknown) => logger.warn({ err: error }, 'boot sends failed'));
    const recovered = this.conversations.recover(this.#previous);
    // Every other profile the webhook listener serves: its own journal and owed replies.
    const others = await (this.webhookLanes?.startServed() ?? Promise.resolve([]));
    const stillRunning = await waitBounded(
      [bootSends, ...recovered, ...others],
      knobs.restoreGateTimeoutS,
    );
    if (stillRunning > 0)
      logger.warn(
        `Startup-restore gate released after ${knobs.restoreGateTimeoutS}s with ${stillRunning} boot task(s) still running; they continue in the background.`,
      );
    const replayed = this.gate.open();
    logger.info(
      { claimed, recovered: recovered.length + others.length, stillRunning, replayed },
      'startup restore finished; inbound gate open',
    );
    return {
      cleanShutdown: this.#cleanShutdown,
      claimed,
      recovered: recovered.length + others.length,
      stillRunning,
      replayed,
    };
  }

  async #afterReconnect(platform: string): Promise<void> {
    try {
      let delivered = 0;
      for (const lane of this.lanes()) {
        // Another profile owes replies on the webhook only (its other platforms are not run), and
        // only if its store is open: it was opened when the lane found a state.db to claim from.
        if (lane !== this.launch && (platform !== 'webhook' || !lane.runtime.storeIfOpen)) continue;
        await lane.claim([platform]);
        delivered += await lane.owed.deliver(platform);
      }
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
    for (const lane of this.lanes()) lane.owed.stop();
    await this.fleet.stop();
  }
}
