import {
  type Agent,
  type AgentEvent,
  type ApprovalCallback,
  type AsyncDelegationEvent,
  type AsyncDelegationRegistry,
  type CompletionDelivery,
  createAgent,
  createCompletionDelivery,
  createDelegationRegistry,
  type DeliveredCompletion,
  ownsCompletion,
  type RunTurnOptions,
  type TurnResult,
} from '@hermes/agent';
import { applyEnvFile, type HermesConfig, loadConfig } from '@hermes/config';
import type { SessionStore } from '@hermes/session-store';
import { openStore } from '../../store.js';

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
 * One terminal conversation: the profile's store, the agent (in this process — no gateway
 * needed), the current session, the async delegation rail and the delivery of its results.
 * Only one turn runs at a time, whether the user's or an injected background result.
 */
export class ChatRuntime {
  readonly store: SessionStore;
  readonly home: string;
  readonly cwd: string;
  readonly raw: Record<string, unknown>;
  readonly registry: AsyncDelegationRegistry | undefined;
  #config: HermesConfig;
  #agent: Agent;
  #sessionId: string | undefined;
  #busy = false;
  #controller: AbortController | undefined;
  #delivery: CompletionDelivery | undefined;
  #approve: ApprovalCallback | undefined;
  #deliveryController: AbortController | undefined;
  #steers: string[] = [];

  private constructor(options: {
    store: SessionStore;
    home: string;
    cwd: string;
    config: HermesConfig;
    raw: Record<string, unknown>;
    registry: AsyncDelegationRegistry | undefined;
    approve: ApprovalCallback | undefined;
  }) {
    this.store = options.store;
    this.home = options.home;
    this.cwd = options.cwd;
    this.raw = options.raw;
    this.#config = options.config;
    this.registry = options.registry;
    this.#approve = options.approve;
    this.#agent = this.#createAgent(options.config);
  }

  static async open(options: ChatRuntimeOptions): Promise<ChatRuntime> {
    applyEnvFile(options.home);
    const loaded = loadConfig({ home: options.home });
    for (const warning of loaded.warnings) options.warn?.(warning);
    const store = await openStore(options.home);
    const registry = options.background
      ? createDelegationRegistry({ store, home: options.home })
      : undefined;
    return new ChatRuntime({
      store,
      home: options.home,
      cwd: options.cwd,
      config: loaded.config,
      raw: loaded.raw,
      registry,
      approve: options.approve,
    });
  }

  #createAgent(config: HermesConfig): Agent {
    return createAgent({
      config,
      store: this.store,
      home: this.home,
      platform: 'cli',
      cwd: this.cwd,
      ...(this.#approve ? { approve: this.#approve } : {}),
      ...(this.registry ? { delegations: this.registry } : { oneShot: true }),
    });
  }

  get agent(): Agent {
    return this.#agent;
  }

  get config(): HermesConfig {
    return this.#config;
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
  setModel(model: string): void {
    this.#config = { ...this.#config, model: { ...this.#config.model, model } };
    this.#agent = this.#createAgent(this.#config);
  }

  /** Runs one turn of the current conversation; Ctrl-C (`interrupt()`) stops it cleanly. */
  async runTurn(
    options: Omit<RunTurnOptions, 'sessionId' | 'signal'> & { readonly sessionId?: string },
  ): Promise<TurnResult> {
    if (this.#busy) throw new Error('a turn is already running');
    // An incomplete model configuration is refused before a session is created for nothing.
    this.#agent.route();
    const sessionId = options.sessionId ?? (await this.ensureSession());
    this.#busy = true;
    const controller = new AbortController();
    this.#controller = controller;
    try {
      const result = await this.#agent.runTurn({
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
      this.#delivery?.notifyIdle(sessionId);
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
    if (!this.registry || this.#delivery) return;
    this.#delivery = createCompletionDelivery({
      registry: this.registry,
      owner: (event) => this.#owner(event),
      isIdle: () => !this.#busy,
      runTurn: async (options) => {
        this.#busy = true;
        try {
          return await this.#agent.runTurn(options);
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
    await this.#delivery.start();
  }

  /** Asks the ledger again for results owed (after switching to another conversation). */
  async recoverOwed(): Promise<void> {
    if (this.#delivery && this.registry) await this.registry.recover().catch(() => undefined);
  }

  /** Delivers what is owed now (resolves when those turns end). */
  async drainDeliveries(): Promise<number> {
    return (await this.#delivery?.drain()) ?? 0;
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

  async close(): Promise<void> {
    await this.#delivery?.stop().catch(() => {});
    await this.registry?.close().catch(() => {});
    await this.store.close();
  }
}
