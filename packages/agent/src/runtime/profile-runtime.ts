import path from 'node:path';
import {
  type ConfigReader,
  createConfigReader,
  getSecret,
  type HermesConfig,
  type LoadedConfig,
  withHomeScope,
} from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import {
  type AsyncDelegationRegistry,
  createDelegationRegistry,
} from '../delegation/async-registry.js';
import type { AsyncUnit, ResumeUnitRequest } from '../delegation/async-unit.js';
import {
  type CompletionDelivery,
  type CompletionDeliveryOptions,
  createCompletionDelivery,
} from '../delegation/completion-delivery.js';
import type {
  DelegationLifecycleEvent,
  DelegationRecoveryReport,
} from '../delegation/delegation-lifecycle.js';
import { resumeDelegation } from '../delegation/resume-delegation.js';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import type { Agent } from '../loop/agent-types.js';
import { createAgent } from '../loop/create-agent.js';
import type { ApprovalCallback } from '../tools/tool-context.js';

/** How long a read of `config.yaml` is reused before the file is looked at again (ms). */
export const CONFIG_RECHECK_MS = 100;

/**
 * Where a profile runtime reports what happens in the background (store warnings, delegation
 * lifecycle, deliveries). Object first, like pino: a pino logger fits as is.
 */
export interface ProfileRuntimeLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

/** How completions of this profile's delegations come back into the surface's sessions. */
export type ProfileDeliveryOptions = Omit<CompletionDeliveryOptions, 'registry'>;

export interface ProfileRuntimeOptions {
  /** `default`, a profile name, or `custom` for a home outside the profiles root. */
  readonly name: string;
  readonly home: string;
  /**
   * The profile's own secrets (its `.env`), isolated from `process.env`: inside `run()` and in
   * its agents, `getSecret()` answers from these only. `undefined`: the process environment.
   */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
  /** The surface agents run for (`cli`, `api_server`, `tui`, …; default `cli`). */
  readonly platform?: string | undefined;
  /** Working directory for the agents' tools (default `terminal.cwd`, else `process.cwd()`). */
  readonly cwd?: string | undefined;
  /** Answers approval requests of dangerous commands (none: they are denied). */
  readonly approve?: ApprovalCallback | undefined;
  readonly logger?: ProfileRuntimeLogger | undefined;
  /**
   * A finite single-query run (`hermes chat -q`): no async delegation registry — delegations run
   * inline and `delegation.oneshot_max_children` caps them.
   */
  readonly oneShot?: boolean | undefined;
  /**
   * Called once, when the delegation registry is made (as the store opens). Return delivery
   * options to have completions delivered from then on (restored ones first); return nothing to
   * start delivery later with `startDelivery()`, or never (completions then stay owed).
   */
  readonly onRegistry?:
    | ((
        registry: AsyncDelegationRegistry,
        runtime: ProfileRuntime,
        // biome-ignore lint/suspicious/noConfusingVoidType: a hook that only observes returns nothing
      ) => ProfileDeliveryOptions | undefined | void)
    | undefined;
  /** How long a read of `config.yaml` is reused (default `CONFIG_RECHECK_MS`; 0 = stat every read). */
  readonly configRecheckMs?: number | undefined;
}

/** Which agent `agent()` returns: one per surface and model, rebuilt when the config changes. */
export interface ProfileAgentRequest {
  /** The surface (default: the runtime's `platform`). */
  readonly platform?: string | undefined;
  /** Another model for this agent than `model.default` (a conversation's `/model`). */
  readonly model?: string | undefined;
}

/**
 * One profile as a surface serves it: its home, its live config, its secrets, its `state.db`, the
 * async delegation registry of that store and the agents built over them. Everything done for
 * the profile runs inside `run()`, so `getHermesHome()` and `getSecret()` answer for this profile
 * and never for another.
 */
export interface ProfileRuntime {
  readonly name: string;
  readonly home: string;
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly platform: string;
  /** True once `close()` was called. */
  readonly closed: boolean;
  /** Runs `fn` with this profile's home (and secret scope, when it has its own secrets). */
  run<T>(fn: () => T): T;
  /** One secret of this profile (never another profile's; never `process.env` when it has its own). */
  secret(name: string): string | undefined;
  /**
   * The live config; throws `ConfigParseError` while `config.yaml` does not parse. The file is
   * looked at (one `stat`) at most every `configRecheckMs`; an edit is seen within that time.
   */
  config(): LoadedConfig;
  /** The profile's `state.db`, opened on first use (racing callers share one open). */
  store(): Promise<SessionStore>;
  readonly storeIfOpen: SessionStore | undefined;
  /**
   * The async delegation registry (background `delegate_task`, `/review`): one per store and
   * process, made when the store opens, so running subagents and their completions survive agent
   * rebuilds. Refused (`no_delegation_registry`) for a one-shot runtime.
   */
  registry(): Promise<AsyncDelegationRegistry>;
  readonly registryIfOpen: AsyncDelegationRegistry | undefined;
  /** The agent for the current config, this surface and model (rebuilt when `config.yaml` changes). */
  agent(request?: ProfileAgentRequest): Promise<Agent>;
  /** Starts delivering completions (once per runtime); resolves with the ledger's recovery report. */
  startDelivery(options: ProfileDeliveryOptions): Promise<DelegationRecoveryReport>;
  /** Settles once delivery has restored what the ledger owed (undefined: no delivery started). */
  deliveryReady(): Promise<DelegationRecoveryReport | undefined>;
  /** A turn of `sessionId` just ended: deliver what waited for it. */
  notifyIdle(sessionId?: string): void;
  /** Delivers every completion whose owner is idle now; resolves when those turns end. */
  drainDeliveries(): Promise<number>;
  /** Completions waiting in this process for their session to become idle. */
  readonly pendingCompletions: number;
  /**
   * Stops delivery (undelivered completions stay owed in the ledger), then interrupts and closes
   * the registry (running units publish what they have while the store is still open), then
   * closes the store. Idempotent.
   */
  close(): Promise<void>;
}

const silent: ProfileRuntimeLogger = { info: () => {}, warn: () => {} };

function withModel(config: HermesConfig, model: string | undefined): HermesConfig {
  if (model === undefined || model === config.model.model) return config;
  return { ...config, model: { ...config.model, model } };
}

class ProfileRuntimeImpl implements ProfileRuntime {
  readonly name: string;
  readonly home: string;
  readonly secrets: Readonly<Record<string, string>> | undefined;
  readonly platform: string;
  readonly #options: ProfileRuntimeOptions;
  readonly #logger: ProfileRuntimeLogger;
  readonly #reader: ConfigReader;
  readonly #recheckMs: number;
  #config: { at: number; value: LoadedConfig } | undefined;
  #store: SessionStore | undefined;
  #opening: Promise<SessionStore> | undefined;
  #registry: AsyncDelegationRegistry | undefined;
  #delivery: CompletionDelivery | undefined;
  #deliveryStarted: Promise<DelegationRecoveryReport> | undefined;
  readonly #agents = new Map<string, { loaded: LoadedConfig; agent: Agent }>();
  #closing: Promise<void> | undefined;

  constructor(options: ProfileRuntimeOptions) {
    this.name = options.name;
    this.home = path.resolve(options.home);
    this.secrets = options.secrets ? { ...options.secrets } : undefined;
    this.platform = options.platform ?? 'cli';
    this.#options = options;
    this.#logger = options.logger ?? silent;
    this.#recheckMs = options.configRecheckMs ?? CONFIG_RECHECK_MS;
    this.#reader = createConfigReader(
      this.secrets ? { home: this.home, env: { ...this.secrets } } : { home: this.home },
    );
  }

  get closed(): boolean {
    return this.#closing !== undefined;
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
    const now = performance.now();
    if (this.#config && now - this.#config.at < this.#recheckMs) return this.#config.value;
    const value = this.#reader.read();
    this.#config = { at: now, value };
    return value;
  }

  get storeIfOpen(): SessionStore | undefined {
    return this.#store;
  }

  get registryIfOpen(): AsyncDelegationRegistry | undefined {
    return this.#registry;
  }

  get pendingCompletions(): number {
    return this.#registry?.queue.size ?? 0;
  }

  store(): Promise<SessionStore> {
    if (this.#store) return Promise.resolve(this.#store);
    if (this.closed) return Promise.reject(this.#closedError());
    this.#opening ??= this.run(() =>
      openSessionStore({
        path: path.join(this.home, 'state.db'),
        logger: { warn: (message) => this.#logger.warn({ profile: this.name }, message) },
      }),
    ).then(
      (store) => {
        this.#store = store;
        if (!this.closed && !this.#options.oneShot) this.#attachRegistry(store);
        return store;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  async registry(): Promise<AsyncDelegationRegistry> {
    if (this.#options.oneShot) {
      throw new AgentError({
        code: 'no_delegation_registry',
        message: AGENT_ERROR_MESSAGES.noDelegationRegistry(this.name),
      });
    }
    await this.store();
    if (!this.#registry) throw this.#closedError();
    return this.#registry;
  }

  async agent(request: ProfileAgentRequest = {}): Promise<Agent> {
    const platform = request.platform ?? this.platform;
    const key = `${platform}\u0000${request.model ?? ''}`;
    let loaded = this.config();
    const cached = this.#agents.get(key);
    if (cached?.loaded === loaded) return cached.agent;
    const store = await this.store();
    // Another caller may have built it while the store opened.
    loaded = this.config();
    const built = this.#agents.get(key);
    if (built?.loaded === loaded) return built.agent;
    const options = this.#options;
    const agent = createAgent({
      config: withModel(loaded.config, request.model),
      store,
      home: this.home,
      platform,
      secret: (name) => this.secret(name),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.approve ? { approve: options.approve } : {}),
      ...(this.#registry ? { delegations: this.#registry } : {}),
      ...(options.oneShot ? { oneShot: true } : {}),
    });
    this.#agents.set(key, { loaded, agent });
    return agent;
  }

  async startDelivery(options: ProfileDeliveryOptions): Promise<DelegationRecoveryReport> {
    return this.#startDelivery(await this.registry(), options);
  }

  deliveryReady(): Promise<DelegationRecoveryReport | undefined> {
    return this.#deliveryStarted?.catch(() => undefined) ?? Promise.resolve(undefined);
  }

  notifyIdle(sessionId?: string): void {
    this.#delivery?.notifyIdle(sessionId);
  }

  drainDeliveries(): Promise<number> {
    return this.#delivery?.drain() ?? Promise.resolve(0);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const store = this.#store ?? (await this.#opening?.catch(() => undefined));
    // A delivery still restoring the ledger finishes that first, so stop() leaves no timer behind.
    await this.#deliveryStarted?.catch(() => undefined);
    await this.#delivery?.stop().catch(() => undefined);
    await this.#registry?.close().catch(() => undefined);
    this.#store = undefined;
    await store?.close();
  }

  #closedError(): AgentError {
    return new AgentError({
      code: 'profile_closed',
      message: AGENT_ERROR_MESSAGES.profileClosed(this.name),
    });
  }

  #attachRegistry(store: SessionStore): void {
    const registry = createDelegationRegistry({
      store,
      home: this.home,
      onEvent: (event) => this.#logLifecycle(event),
      resume: (request) => this.#resumeUnit(request),
    });
    this.#registry = registry;
    let delivery: ProfileDeliveryOptions | undefined;
    try {
      delivery = this.#options.onRegistry?.(registry, this) ?? undefined;
    } catch (error) {
      this.#logger.warn({ profile: this.name, err: error }, 'onRegistry failed');
    }
    if (delivery)
      this.#startDelivery(registry, delivery).catch(() => {
        // Logged where it failed; deliveryReady() settles either way.
      });
  }

  /**
   * A resumable unit a stopped process left running, built again on this profile's agent for the
   * surface and model it was dispatched from; it runs in this profile's scope.
   */
  async #resumeUnit(request: ResumeUnitRequest): Promise<AsyncUnit> {
    const spec = request.task.resume;
    const parent = await this.agent({ platform: spec?.platform, model: spec?.model || undefined });
    const unit = await this.run(() => resumeDelegation(request, { parent }));
    return { ...unit, run: (signal) => this.run(() => unit.run(signal)) };
  }

  #startDelivery(
    registry: AsyncDelegationRegistry,
    options: ProfileDeliveryOptions,
  ): Promise<DelegationRecoveryReport> {
    if (this.#delivery) {
      return Promise.reject(new Error(`completion delivery already started for ${this.name}`));
    }
    if (this.closed) return Promise.reject(this.#closedError());
    const profile = this.name;
    this.#delivery = createCompletionDelivery({
      ...options,
      registry,
      onDelivered: (delivered) => {
        this.#logger.info(
          {
            profile,
            delegationId: delivered.event.delegation_id,
            sessionId: delivered.sessionId,
          },
          'delegation completion delivered',
        );
        options.onDelivered?.(delivered);
      },
      onError: (error, event) => {
        this.#logger.warn(
          { profile, delegationId: event.delegation_id, err: error },
          'delegation completion not delivered yet; it stays owed',
        );
        options.onError?.(error, event);
      },
    });
    this.#deliveryStarted = this.#delivery.start().then(
      (report) => {
        if (report.restored.length > 0 || report.orphaned.length > 0)
          this.#logger.info({ profile, report }, 'delegation ledger recovered');
        return report;
      },
      (error: unknown) => {
        this.#logger.warn({ profile, err: error }, 'delegation recovery failed');
        throw error;
      },
    );
    return this.#deliveryStarted;
  }

  #logLifecycle(event: DelegationLifecycleEvent): void {
    if (event.type === 'warning') this.#logger.warn({ profile: this.name }, event.message);
    else if (
      event.type === 'dispatched' ||
      event.type === 'stalled' ||
      event.type === 'suspended' ||
      event.type === 'resumed' ||
      event.type === 'queued'
    )
      this.#logger.info(
        { profile: this.name, delegationId: event.delegationId },
        `delegation ${event.type}`,
      );
    else if (event.type === 'published')
      this.#logger.info(
        { profile: this.name, delegationId: event.event.delegation_id },
        'delegation published',
      );
  }
}

/**
 * One profile, served: home and secret scope, live config, lazily opened store, the delegation
 * registry of that store, agents rebuilt when `config.yaml` changes, completion delivery, and an
 * ordered `close()`. What stays with a surface is its platform name, its approval UI and how it
 * renders and runs turns (the delivery options).
 */
export function createProfileRuntime(options: ProfileRuntimeOptions): ProfileRuntime {
  return new ProfileRuntimeImpl(options);
}
