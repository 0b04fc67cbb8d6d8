import path from 'node:path';
import { type Agent, createAgent } from '@hermes/agent';
import {
  type ConfigReader,
  createConfigReader,
  getSecret,
  type LoadedConfig,
  withHomeScope,
} from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import type { Logger } from 'pino';

/** The surface name turns run under (`platform_toolsets.api_server`, `hermes-api-server`). */
export const API_SERVER_PLATFORM = 'api_server';

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
  /** An already opened store (the launch profile's, opened in the start order). */
  readonly store?: SessionStore;
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
  #store: SessionStore | undefined;
  #opening: Promise<SessionStore> | undefined;
  #agent: { config: LoadedConfig; agent: Agent } | undefined;
  #closed = false;

  constructor(options: ProfileRuntimeOptions) {
    this.name = options.name;
    this.home = path.resolve(options.home);
    this.secrets = options.secrets;
    this.#logger = options.logger;
    this.#store = options.store;
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

  /** The live config; throws `ConfigParseError` while `config.yaml` does not parse. */
  config(): LoadedConfig {
    return this.#reader.read();
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
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /** The agent for this profile's current config (rebuilt when `config.yaml` changes). */
  async agent(): Promise<Agent> {
    const loaded = this.config();
    if (this.#agent?.config === loaded) return this.#agent.agent;
    const store = await this.store();
    const agent = createAgent({
      config: loaded.config,
      store,
      home: this.home,
      platform: API_SERVER_PLATFORM,
      secret: (name) => this.secret(name),
    });
    this.#agent = { config: loaded, agent };
    return agent;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const store = this.#store ?? (await this.#opening?.catch(() => undefined));
    this.#store = undefined;
    await store?.close();
  }
}
