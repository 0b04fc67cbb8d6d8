import {
  type Agent,
  type AgentEvent,
  type ApprovalCallback,
  type AsyncDelegationEvent,
  type AsyncDelegationRegistry,
  createProfileRuntime,
  type DeliveredCompletion,
  ownsCompletion,
  type ProfileRuntime,
  type RunTurnOptions,
  type TurnResult,
} from '@hermes/agent';
import { applyEnvFile, getActiveProfileName, type HermesConfig } from '@hermes/config';
import type { SessionStore } from '@hermes/session-store';

/** The surface terminal turns run under (`platform_toolsets.cli`, `toolsets`, `hermes-cli`). */
export const CLI_PLATFORM = 'cli';

export interface ChatRuntimeOptions {
  readonly home: string;
  readonly cwd: string;
  /**
   * Background delegation (`/review`, `delegate_task`): results come back into the conversation
   * between turns. Off for a plain `chat -q`, whose delegations run inline (a one-shot run).
   */
  readonly background: boolean;
  readonly approve?: ApprovalCallback | undefined;
  /** Called for config warnings (keys only, never values). */
  readonly warn?: (message: string) => void;
}

/** How a delivered background result is shown, and the rendering of the turn it starts. */
export interface DeliveryView {
  /** Called right before the injected turn runs. */
  readonly onStart: (event: AsyncDelegationEvent) => void;
  readonly onEvent: (event: AgentEvent) => void;
  readonly onDone: (delivery: DeliveredCompletion) => void;
  readonly onError?: (error: unknown) => void;
}

/**
 * One terminal conversation over the profile served in this process (`createProfileRuntime`:
 * store, live config, agent, async delegation rail, delivery of its results — no gateway
 * needed): the current session, the running turn, steers, and what the terminal shows. Only one
 * turn runs at a time, whether the user's or an injected background result.
 */
export class ChatRuntime {
  readonly profile: ProfileRuntime;
  readonly store: SessionStore;
  readonly cwd: string;
  #agent: Agent;
  /** `/model <id>` for this conversation. */
  #model: string | undefined;
  #sessionId: string | undefined;
  #busy = false;
  #controller: AbortController | undefined;
  #deliveryController: AbortController | undefined;
  #delivering = false;
  #steers: string[] = [];

  private constructor(options: {
    profile: ProfileRuntime;
    store: SessionStore;
    agent: Agent;
    cwd: string;
  }) {
    this.profile = options.profile;
    this.store = options.store;
    this.cwd = options.cwd;
    this.#agent = options.agent;
  }

  static async open(options: ChatRuntimeOptions): Promise<ChatRuntime> {
    applyEnvFile(options.home);
    const profile = createProfileRuntime({
      name: getActiveProfileName(options.home),
      home: options.home,
      platform: CLI_PLATFORM,
      cwd: options.cwd,
      approve: options.approve,
      // A one-shot run has no later turn to bring background results back to.
      oneShot: !options.background,
    });
    try {
      for (const warning of profile.config().warnings) options.warn?.(warning);
      const store = await profile.store();
      const agent = await profile.agent();
      return new ChatRuntime({ profile, store, agent, cwd: options.cwd });
    } catch (error) {
      await profile.close().catch(() => {});
      throw error;
    }
  }

  get home(): string {
    return this.profile.home;
  }

  /** The profile's config as written (`config.yaml`, read live). */
  get raw(): Record<string, unknown> {
    return this.profile.config().raw;
  }

  /** The async delegation registry (none for a one-shot run). */
  get registry(): AsyncDelegationRegistry | undefined {
    return this.profile.registryIfOpen;
  }

  /** The agent of the last turn (or of the start): the current config and `/model`. */
  get agent(): Agent {
    return this.#agent;
  }

  get config(): HermesConfig {
    return this.#agent.config;
  }

  /** The agent for the current `config.yaml` and `/model`, built again when either changed. */
  async #currentAgent(): Promise<Agent> {
    this.#agent = await this.profile.agent({ model: this.#model });
    return this.#agent;
  }

  /** The session the next turn goes to (created on the first message). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** A turn (the user's or an injected result) is running. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Switches the conversation (`--resume`, `/resume`, `/new` with undefined). */
  useSession(sessionId: string | undefined): void {
    this.#sessionId = sessionId;
  }

  async ensureSession(): Promise<string> {
    if (this.#sessionId) return this.#sessionId;
    const session = await this.#agent.createSession();
    this.#sessionId = session.id;
    return session.id;
  }

  /** Uses another model for this conversation from now on (`/model <id>`). */
  async setModel(model: string): Promise<void> {
    this.#model = model;
    await this.#currentAgent();
  }

  /** Runs one turn of the current conversation; Ctrl-C (`interrupt()`) stops it cleanly. */
  async runTurn(
    options: Omit<RunTurnOptions, 'sessionId' | 'signal'> & { readonly sessionId?: string },
  ): Promise<TurnResult> {
    if (this.#busy) throw new Error('a turn is already running');
    const agent = await this.#currentAgent();
    // An incomplete model configuration is refused before a session is created for nothing.
    agent.route();
    const sessionId = options.sessionId ?? (await this.ensureSession());
    this.#busy = true;
    const controller = new AbortController();
    this.#controller = controller;
    try {
      const result = await agent.runTurn({
        ...options,
        sessionId,
        signal: controller.signal,
        origin: { sessionKey: sessionId },
        control: {
          // `/steer` text rides on the next tool result the turn stores.
          takeSteer: () => {
            if (this.#steers.length === 0) return undefined;
            return this.#steers.splice(0).join('\n');
          },
        },
      });
      // A compression moved the conversation to its child: follow it.
      if (this.#sessionId === sessionId) this.#sessionId = result.sessionId;
      return result;
    } finally {
      this.#busy = false;
      this.#controller = undefined;
      this.profile.notifyIdle(sessionId);
    }
  }

  /** Guidance for the running answer (`/steer`); false when no answer runs. */
  steer(text: string): boolean {
    if (!this.#controller) return false;
    this.#steers.push(text);
    return true;
  }

  /** Guidance that never reached the model (the answer ended without another tool call). */
  takeMissedSteers(): string[] {
    return this.#steers.splice(0);
  }

  /** Stops the running turn (user or injected); false when nothing runs. */
  interrupt(): boolean {
    const controller = this.#controller ?? this.#deliveryController;
    if (!controller || controller.signal.aborted) return false;
    controller.abort();
    return true;
  }

  /** Stops background agents of this conversation (`/stop`); returns how many. */
  stopBackground(): number {
    if (!this.registry || !this.#sessionId) return 0;
    return this.registry.interruptForSession(
      { originSessionId: this.#sessionId },
      'stopped by /stop',
    );
  }

  /** Running background agents of this conversation (`/agents`). */
  backgroundAgents() {
    if (!this.registry || !this.#sessionId) return [];
    return this.registry.list({ originSessionId: this.#sessionId });
  }

  /** The session that owns a completion here: the current conversation, or none. */
  #owner(event: AsyncDelegationEvent): string | undefined {
    const sessionId = this.#sessionId;
    if (!sessionId) return undefined;
    return ownsCompletion(event, { sessionId, sessionKey: sessionId }, this.store)
      ? sessionId
      : undefined;
  }

  /**
   * Starts delivering background results into the current conversation, only between turns.
   * Results the ledger owes this conversation from earlier runs come back too.
   */
  async startDelivery(view: DeliveryView): Promise<void> {
    if (!this.registry || this.#delivering) return;
    this.#delivering = true;
    await this.profile.startDelivery({
      owner: (event) => this.#owner(event),
      isIdle: () => !this.#busy,
      runTurn: async (options) => {
        this.#busy = true;
        try {
          return await (await this.#currentAgent()).runTurn(options);
        } finally {
          this.#busy = false;
          this.#deliveryController = undefined;
        }
      },
      turnOptions: (event, sessionId) => {
        const controller = new AbortController();
        this.#deliveryController = controller;
        view.onStart(event);
        return {
          signal: controller.signal,
          onEvent: view.onEvent,
          origin: { sessionKey: sessionId },
        };
      },
      onDelivered: (delivery) => view.onDone(delivery),
      onError: (error) => view.onError?.(error),
    });
  }

  /** Asks the ledger again for results owed (after switching to another conversation). */
  async recoverOwed(): Promise<void> {
    if (this.#delivering) await this.registry?.recover().catch(() => undefined);
  }

  /** Delivers what is owed now (resolves when those turns end). */
  drainDeliveries(): Promise<number> {
    return this.profile.drainDeliveries();
  }

  /** Background work of the current conversation still to come: running units or queued results. */
  pendingBackground(): number {
    if (!this.registry) return 0;
    const running = this.backgroundAgents().length;
    const queued = this.registry.queue
      .peek()
      .filter((event) => this.#owner(event) !== undefined).length;
    return running + queued;
  }

  /** Stops delivery (what is undelivered stays owed), closes the rail, then the store. */
  close(): Promise<void> {
    return this.profile.close();
  }
}
