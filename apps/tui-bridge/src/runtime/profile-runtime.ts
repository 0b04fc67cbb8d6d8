import path from 'node:path';
import {
  type Agent,
  type ApprovalCallback,
  type AsyncDelegationRegistry,
  createAgent,
  createDelegationRegistry,
} from '@hermes/agent';
import {
  type ConfigReader,
  createConfigReader,
  getSecret,
  type LoadedConfig,
  withHomeScope,
} from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';

/** The surface name turns run under (`platform_toolsets.tui`, `hermes-tui`). */
export const TUI_PLATFORM = 'tui';

export interface ProfileRuntimeOptions {
  readonly name: string;
  readonly home: string;
  /** The profile's own `.env`, isolated from `process.env`; undefined = the process environment. */
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly approve: ApprovalCallback;
  readonly warn: (message: string) => void;
  /**
   * Called once, when the profile's delegation registry is created: the bridge starts completion
   * delivery for it and returns how to stop that.
   */
  readonly onRegistry?: (
    runtime: ProfileRuntime,
    registry: AsyncDelegationRegistry,
  ) => () => Promise<void>;
}

/**
 * One profile as the bridge serves it: home, live config, secrets, `state.db` and an agent built
 * over them. Everything done for the profile runs inside `run()`, so `getHermesHome()` and
 * `getSecret()` answer for this profile and never for another.
 */
export class ProfileRuntime {
  readonly name: string;
  readonly home: string;
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly #approve: ApprovalCallback;
  readonly #warn: (message: string) => void;
  readonly #reader: ConfigReader;
  #store: SessionStore | undefined;
  #opening: Promise<SessionStore> | undefined;
  #agent: { config: LoadedConfig; agent: Agent } | undefined;
  #registry: AsyncDelegationRegistry | undefined;
  #stopDelivery: (() => Promise<void>) | undefined;
  readonly #onRegistry: ProfileRuntimeOptions['onRegistry'];
  #closed = false;

  constructor(options: ProfileRuntimeOptions) {
    this.name = options.name;
    this.home = path.resolve(options.home);
    this.secrets = options.secrets;
    this.#approve = options.approve;
    this.#warn = options.warn;
    this.#onRegistry = options.onRegistry;
    this.#reader = createConfigReader(
      options.secrets ? { home: this.home, env: { ...options.secrets } } : { home: this.home },
    );
  }

  run<T>(fn: () => T): T {
    return withHomeScope(
      this.secrets ? { home: this.home, secrets: this.secrets } : { home: this.home },
      fn,
    );
  }

  secret(name: string): string | undefined {
    if (this.secrets) return Object.hasOwn(this.secrets, name) ? this.secrets[name] : undefined;
    return getSecret(name);
  }

  config(): LoadedConfig {
    return this.#reader.read();
  }

  get storeIfOpen(): SessionStore | undefined {
    return this.#store;
  }

  /** The profile's `state.db`, opened on first use (racing callers share one open). */
  store(): Promise<SessionStore> {
    if (this.#store) return Promise.resolve(this.#store);
    if (this.#closed) return Promise.reject(new Error(`profile ${this.name} is closed`));
    this.#opening ??= this.run(() =>
      openSessionStore({
        path: path.join(this.home, 'state.db'),
        logger: { warn: (message) => this.#warn(`[${this.name}] ${message}`) },
      }),
    ).then(
      (store) => {
        this.#store = store;
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /**
   * The profile's async delegation registry (background `delegate_task`, `/review`): one per
   * store and process, so completions and the live subagents survive agent rebuilds.
   */
  async registry(): Promise<AsyncDelegationRegistry> {
    const store = await this.store();
    if (!this.#registry) {
      this.#registry = createDelegationRegistry({ store, home: this.home });
      this.#stopDelivery = this.#onRegistry?.(this, this.#registry);
    }
    return this.#registry;
  }

  /** The agent for the current `config.yaml` (rebuilt when it changes). */
  async agent(): Promise<Agent> {
    const loaded = this.config();
    if (this.#agent?.config === loaded) return this.#agent.agent;
    const store = await this.store();
    const delegations = await this.registry();
    const agent = createAgent({
      delegations,
      config: loaded.config,
      store,
      home: this.home,
      platform: TUI_PLATFORM,
      secret: (name) => this.secret(name),
      approve: this.#approve,
    });
    this.#agent = { config: loaded, agent };
    return agent;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopDelivery?.().catch(() => undefined);
    await this.#registry?.close().catch(() => undefined);
    const store = this.#store ?? (await this.#opening?.catch(() => undefined));
    this.#store = undefined;
    await store?.close();
  }
}
