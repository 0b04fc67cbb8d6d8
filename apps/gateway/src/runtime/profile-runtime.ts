import path from 'node:path';
import {
  type Agent,
  type AsyncDelegationRegistry,
  type CompletionDelivery,
  createAgent,
  createCompletionDelivery,
  createDelegationRegistry,
  type RunTurnOptions,
  type TurnResult,
} from '@hermes/agent';
import {
  type ConfigReader,
  createConfigReader,
  getSecret,
  type LoadedConfig,
  withHomeScope,
} from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import type { Logger } from 'pino';

/** How long a read of `config.yaml` is reused before the file is looked at again. */
export const CONFIG_RECHECK_MS = 100;

/** The surface name turns run under (`platform_toolsets.api_server`, `hermes-api-server`). */
export const API_SERVER_PLATFORM = 'api_server';

/**
 * How a profile's async delegations (`/review`, background `delegate_task`) come back: the
 * gateway runs the injected completion turn through its own turn runner (admission, active-turn
 * tracking, profile scope), and only while the session is idle.
 */
export interface DelegationWiring {
  runTurn(runtime: ProfileRuntime, options: RunTurnOptions): Promise<TurnResult>;
  isIdle(runtime: ProfileRuntime, sessionId: string): boolean;
}

export interface ProfileRuntimeOptions {
  /** `default`, a profile name, or `custom` for a home outside the profiles root. */
  readonly name: string;
  readonly home: string;
  /**
   * The profile's own secrets (its `.env`), isolated from `process.env`; `undefined` means the
   * process environment (a single-profile gateway).
   */
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly logger: Logger;
  /** Delivers async delegation completions back into their sessions (none: no delegation rail). */
  readonly delegation?: DelegationWiring | undefined;
}

/**
 * One profile as the gateway serves it: its home, its live config (re-read when `config.yaml`
 * changes), its secrets, its `state.db` and an agent built over them. Everything that runs for the
 * profile runs inside `run()`, so `getHermesHome()` and `getSecret()` answer for this profile.
 */
export class ProfileRuntime {
  readonly name: string;
  readonly home: string;
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly #logger: Logger;
  readonly #reader: ConfigReader;
  readonly #delegation: DelegationWiring | undefined;
  #store: SessionStore | undefined;
  #opening: Promise<SessionStore> | undefined;
  #registry: AsyncDelegationRegistry | undefined;
  #delivery: CompletionDelivery | undefined;
  #deliveryStarted: Promise<unknown> | undefined;
  readonly #agents = new Map<string, { config: LoadedConfig; agent: Agent }>();
  #closed = false;
  #config: { at: number; value: LoadedConfig } | undefined;

  constructor(options: ProfileRuntimeOptions) {
    this.name = options.name;
    this.home = path.resolve(options.home);
    this.secrets = options.secrets;
    this.#logger = options.logger;
    this.#delegation = options.delegation;
    this.#reader = createConfigReader(
      options.secrets ? { home: this.home, env: { ...options.secrets } } : { home: this.home },
    );
  }

  /** Runs `fn` with this profile's home (and secret scope, when it has its own). */
  run<T>(fn: () => T): T {
    return withHomeScope(
      this.secrets ? { home: this.home, secrets: this.secrets } : { home: this.home },
      fn,
    );
  }

  /** Reads one secret of this profile (never another profile's, never `process.env` under multiplex). */
  secret(name: string): string | undefined {
    if (this.secrets) return Object.hasOwn(this.secrets, name) ? this.secrets[name] : undefined;
    return getSecret(name);
  }

  /**
   * The live config; throws `ConfigParseError` while `config.yaml` does not parse. The file is
   * looked at (one `stat`) at most every `CONFIG_RECHECK_MS`, so a request that asks several
   * times pays once, and an edit is seen within that time.
   */
  config(): LoadedConfig {
    const now = performance.now();
    if (this.#config && now - this.#config.at < CONFIG_RECHECK_MS) return this.#config.value;
    const value = this.#reader.read();
    this.#config = { at: now, value };
    return value;
  }

  /** The API key this profile expects (`api_server.key` or its `API_SERVER_KEY`). */
  apiKey(): string | undefined {
    try {
      return this.config().config.apiServer.key;
    } catch {
      return undefined;
    }
  }

  get storeIfOpen(): SessionStore | undefined {
    return this.#store;
  }

  /** The profile's `state.db`, opened on first use (racing first requests share one open). */
  store(): Promise<SessionStore> {
    if (this.#store) return Promise.resolve(this.#store);
    if (this.#closed) return Promise.reject(new Error(`profile ${this.name} is closed`));
    this.#opening ??= this.run(() =>
      openSessionStore({
        path: path.join(this.home, 'state.db'),
        logger: { warn: (message) => this.#logger.warn({ profile: this.name }, message) },
      }),
    ).then(
      (store) => {
        this.#store = store;
        this.#startDelegations(store);
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /** This profile's async delegation registry (exists once the store is open). */
  get delegations(): AsyncDelegationRegistry | undefined {
    return this.#registry;
  }

  /** Resolves once startup recovery of the delegation ledger finished (or failed). */
  delegationsReady(): Promise<unknown> {
    return this.#deliveryStarted ?? Promise.resolve();
  }

  /** Completions waiting in this process for their session to become idle. */
  get pendingCompletions(): number {
    return this.#registry?.queue.size ?? 0;
  }

  /** A turn of `sessionId` just ended: deliver what waited for it. */
  notifyIdle(sessionId: string): void {
    this.#delivery?.notifyIdle(sessionId);
  }

  #startDelegations(store: SessionStore): void {
    this.#registry = createDelegationRegistry({
      store,
      home: this.home,
      onEvent: (event) => {
        if (event.type === 'warning') this.#logger.warn({ profile: this.name }, event.message);
        else if (
          event.type === 'dispatched' ||
          event.type === 'published' ||
          event.type === 'stalled'
        )
          this.#logger.info(
            {
              profile: this.name,
              delegationId:
                'delegationId' in event ? event.delegationId : event.event.delegation_id,
            },
            `delegation ${event.type}`,
          );
      },
    });
    const wiring = this.#delegation;
    if (!wiring) return;
    const registry = this.#registry;
    this.#delivery = createCompletionDelivery({
      registry,
      // This profile's store holds the conversation: the completion goes back to its session.
      owner: (event) => {
        for (const candidate of [
          event.origin_session_id,
          event.parent_session_id,
          event.session_key,
        ]) {
          if (typeof candidate === 'string' && candidate !== '' && store.getSession(candidate))
            return candidate;
        }
        return undefined;
      },
      runTurn: (options) => wiring.runTurn(this, options),
      isIdle: (sessionId) => wiring.isIdle(this, sessionId),
      onDelivered: (delivery) =>
        this.#logger.info(
          {
            profile: this.name,
            delegationId: delivery.event.delegation_id,
            sessionId: delivery.sessionId,
          },
          'delegation completion delivered',
        ),
      onError: (error, event) =>
        this.#logger.warn(
          { profile: this.name, delegationId: event.delegation_id, err: error },
          'delegation completion not delivered yet; it stays owed',
        ),
    });
    this.#deliveryStarted = this.#delivery.start().then(
      (report) => {
        if (report.restored.length > 0 || report.orphaned.length > 0)
          this.#logger.info({ profile: this.name, report }, 'delegation ledger recovered');
        return report;
      },
      (error: unknown) =>
        this.#logger.warn({ profile: this.name, err: error }, 'delegation recovery failed'),
    );
  }

  /**
   * The agent for this profile's current config (rebuilt when `config.yaml` changes), for one
   * surface: `api_server` by default, or a messaging platform (its `platform_toolsets` entry).
   */
  async agent(platform: string = API_SERVER_PLATFORM): Promise<Agent> {
    const loaded = this.config();
    const cached = this.#agents.get(platform);
    if (cached?.config === loaded) return cached.agent;
    const store = await this.store();
    const agent = createAgent({
      config: loaded.config,
      store,
      home: this.home,
      platform,
      secret: (name) => this.secret(name),
      ...(this.#registry ? { delegations: this.#registry } : {}),
    });
    this.#agents.set(platform, { config: loaded, agent });
    return agent;
  }

  /**
   * Stops delivering (undelivered completions stay owed in the ledger), interrupts running
   * delegations (they publish what they have; the next start delivers it), closes the store.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const store = this.#store ?? (await this.#opening?.catch(() => undefined));
    await this.#delivery?.stop().catch(() => {});
    await this.#registry?.close().catch(() => {});
    this.#store = undefined;
    await store?.close();
  }
}
