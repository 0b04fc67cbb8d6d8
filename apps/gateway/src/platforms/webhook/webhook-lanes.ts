import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProfileRuntime, ProfileRuntimeSet } from '@hermes/agent';
import type { PlatformConfig } from '@hermes/config';
import type { Logger } from 'pino';
import { servedProfile } from '../../runtime/profiles.js';
import type { InboundSink } from '../inbound.js';
import type { PlatformLane } from '../platform-lane.js';
import { type WebhookRoute, WebhookRoutes } from './routes.js';

/** Keys of a secondary profile's `platforms.webhook` that belong to the one listener. */
const LISTENER_KEYS = ['host', 'port', 'max_body_bytes'] as const;

/** One served profile as the webhook listener serves it. */
export interface WebhookLane {
  readonly profile: string;
  /** Where its deliveries go: its own journal, conversations and store. */
  readonly sink: InboundSink;
  /** Settles once the profile's inbound journal is loaded (never rejects). */
  readonly ready: Promise<void>;
  /** Runs `fn` in the profile's scope (home and secrets). */
  run<T>(fn: () => T): T;
  /** Re-reads the dynamic routes whose file changed. */
  reload(): Promise<void>;
  /** The route `name` bound to this profile; `undefined` for one unknown or bound elsewhere alike. */
  route(name: string): WebhookRoute | undefined;
}

export interface WebhookLanesOptions {
  readonly registry: ProfileRuntimeSet;
  readonly launch: PlatformLane;
  /** The launch profile's routes (`platforms.webhook.routes`, its `webhook_subscriptions.json`). */
  readonly listenerRoutes: WebhookRoutes;
  /** A lane for another served profile, replying to its routes through `route`. */
  readonly createLane: (
    runtime: ProfileRuntime,
    route: (name: string) => WebhookRoute | undefined,
  ) => PlatformLane;
  readonly logger: Logger;
}

interface SecondaryLane {
  readonly lane: PlatformLane;
  readonly webhook: WebhookLane;
  /** The turns of the previous run's journal entries, once they are enqueued. */
  readonly recovered: Promise<Promise<void>[]>;
}

/**
 * The profiles the one webhook listener serves. The launch profile answers the bare path (and
 * its own prefix) with the listener's routes bound to it. Under multiplexing every other served
 * profile answers `/p/<name>/webhooks/<route>` — never with a listener of its own — with the
 * routes of its own `config.yaml` and `webhook_subscriptions.json` (when it enables
 * `platforms.webhook`), then the listener's routes bound to it by `profile: <name>`; its
 * deliveries run in its scope, store, inbound journal and agent.
 */
export class WebhookLanes {
  readonly #options: WebhookLanesOptions;
  readonly #launch: WebhookLane;
  readonly #others = new Map<ProfileRuntime, SecondaryLane>();

  constructor(options: WebhookLanesOptions) {
    this.#options = options;
    const { launch, listenerRoutes } = options;
    const name = launch.runtime.name;
    this.#launch = {
      profile: name,
      sink: launch.conversations,
      ready: Promise.resolve(),
      run: (fn) => launch.runtime.run(fn),
      reload: () => listenerRoutes.reload(),
      route: (routeName) => {
        const route = listenerRoutes.get(routeName);
        return route?.profile === name ? route : undefined;
      },
    };
  }

  /** The lane a request's prefix (`undefined`: the bare path) addresses; null = refused. */
  resolve(prefix: string | undefined): WebhookLane | null {
    const runtime = servedProfile(this.#options.registry, prefix);
    if (!runtime) return null;
    if (runtime === this.#options.registry.launch) return this.#launch;
    return this.#secondary(runtime).webhook;
  }

  /** The lanes of the other served profiles built so far. */
  secondaries(): PlatformLane[] {
    return [...this.#others.values()].map((entry) => entry.lane);
  }

  /**
   * Boot: a lane for every other profile served now (each claims what its store owes on the
   * webhook and runs what its journal holds); resolves with those turns.
   */
  async startServed(): Promise<Promise<void>[]> {
    const { registry } = this.#options;
    if (registry.serve !== 'multiplex') return [];
    const turns: Promise<void>[] = [];
    for (const name of registry.servedProfiles()) {
      const runtime = registry.find(name);
      if (!runtime || runtime === registry.launch) continue;
      turns.push(...(await this.#secondary(runtime).recovered));
    }
    return turns;
  }

  #secondary(runtime: ProfileRuntime): SecondaryLane {
    const existing = this.#others.get(runtime);
    if (existing) return existing;
    const { listenerRoutes, logger } = this.#options;
    const name = runtime.name;
    const own = this.#ownRoutes(runtime);
    const tables = own ? [own, listenerRoutes] : [listenerRoutes];
    const route = (routeName: string) => {
      for (const table of tables) {
        const found = table.get(routeName);
        if (found?.profile === name) return found;
      }
      return undefined;
    };
    const lane = this.#options.createLane(runtime, route);
    const recovered = this.#recover(lane);
    const entry: SecondaryLane = {
      lane,
      recovered,
      webhook: {
        profile: name,
        sink: lane.conversations,
        ready: recovered.then(() => undefined),
        run: (fn) => runtime.run(fn),
        reload: async () => {
          await Promise.all(tables.map((table) => table.reload()));
        },
        route,
      },
    };
    this.#others.set(runtime, entry);
    logger.info(
      { platform: 'webhook', profile: name },
      `webhook routes of profile ${name} are served under /p/${name}/webhooks/<route>`,
    );
    return entry;
  }

  /** Loads the journal, claims what the store owes on the webhook, runs what was left. */
  async #recover(lane: PlatformLane): Promise<Promise<void>[]> {
    const { logger } = this.#options;
    const { runtime } = lane;
    try {
      const previous = await lane.journal.load();
      // A profile without a state.db owes nothing: no store is created for it here.
      if (existsSync(path.join(runtime.home, 'state.db'))) await lane.claim(['webhook']);
      if (previous.length > 0)
        logger.info(
          { profile: runtime.name, count: previous.length },
          'inbound messages left by the previous run will be handled first',
        );
      const turns = lane.conversations.recover(previous);
      void lane.owed
        .deliver()
        .catch((error: unknown) =>
          logger.warn({ err: error, profile: runtime.name }, 'redelivery failed'),
        );
      return turns;
    } catch (error) {
      // Its journal is loaded again by the first delivery that needs it.
      logger.warn(
        { err: error, profile: runtime.name },
        'the inbound journal of a profile could not be read',
      );
      return [];
    }
  }

  /** The routes of the profile's own `platforms.webhook`, when it enables it. */
  #ownRoutes(runtime: ProfileRuntime): WebhookRoutes | undefined {
    const { logger } = this.#options;
    const name = runtime.name;
    const warn = (message: string) =>
      logger.warn({ platform: 'webhook', profile: name }, `profile ${name}: ${message}`);
    let platform: PlatformConfig | undefined;
    try {
      platform = runtime.config().config.platforms.webhook;
    } catch (error) {
      warn(
        `config.yaml cannot be read (${error instanceof Error ? error.message : String(error)}); only routes the listener binds to it are served`,
      );
      return undefined;
    }
    if (!platform?.enabled) return undefined;
    const ignored = LISTENER_KEYS.filter((key) => platform.settings[key] !== undefined);
    if (ignored.length > 0)
      warn(
        `platforms.webhook.${ignored.join(', ')} ignored: under multiplexing its routes are served under /p/${name}/webhooks/<route> on the webhook listener of profile ${this.#options.registry.launch.name}`,
      );
    return new WebhookRoutes({
      home: runtime.home,
      configured: platform.settings.routes,
      owner: name,
      warn,
      secret: (key) => runtime.secret(key),
    });
  }
}
