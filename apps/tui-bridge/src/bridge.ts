import { randomBytes } from 'node:crypto';
import {
  AgentError,
  type ApprovalDecision,
  type ApprovalRequest,
  createProfileRuntimeSet,
  type ProfileRuntime,
  type ProfileRuntimeSet,
} from '@hermes/agent';
import { getProcessHermesHome } from '@hermes/config';
import type { SessionRecord, SessionStore } from '@hermes/session-store';
import { SHUTDOWN_END_REASON } from './constants.js';
import { EVENT_METHOD, PROTOCOL_VERSION } from './contract/envelope.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from './contract/error-codes.js';
import { METHOD_NAMES } from './contract/methods.js';
import { createMethodTable } from './methods/index.js';
import { Connection, type MethodTable, type Transport } from './rpc/connection.js';
import { agentDelegation, completionDelivery } from './runtime/agent-delegation.js';
import type { DelegationSupport } from './runtime/delegation-support.js';
import { LiveSession } from './runtime/live-session.js';
import { startTurn } from './runtime/turns.js';
import { BRIDGE_VERSION } from './version.js';

/** The surface the bridge's agents run under (`platform_toolsets.tui`, `hermes-tui`). */
export const TUI_PLATFORM = 'tui';

/** Who the bridge serves: a terminal UI, or a desktop app that owns hidden (Bot Mode) sessions. */
export type BridgeSurface = 'tui' | 'desktop';

export interface BridgeOptions {
  /** The launch profile's home (default `HERMES_HOME` / `~/.hermes`). */
  readonly home?: string;
  readonly surface?: BridgeSurface;
  /** Where diagnostics go (never stdout: on stdio that is the protocol). Default stderr. */
  readonly log?: (line: string) => void;
  /** Bot relay delivery bounds (default 120 s turn wait, 600 s per attempt). */
  readonly botRelay?: { readonly turnWaitMs?: number; readonly attemptTimeoutMs?: number };
}

/**
 * The bridge: front-end connections in, sessions, agents and tools behind. Transports (stdio,
 * WebSocket) create connections with `connect()`; everything else is here and in `methods/`.
 */
export class Bridge {
  /** The launch profile and, on request, any other profile under the same root (its own `.env`). */
  readonly registry: ProfileRuntimeSet;
  readonly surface: BridgeSurface;
  readonly sessions = new Map<string, LiveSession>();
  readonly connections = new Set<Connection>();
  readonly #log: (line: string) => void;
  readonly #methods: MethodTable;
  #closing = false;
  #closed: Promise<void> | undefined;
  /** When running turns stop being waited for; a second `close()` may bring it forward. */
  #drainDeadline = 0;
  #wakeDrain: () => void = () => {};
  #generation = 0;
  /** Session opens (`session.create`, `session.resume`) still running: a stop waits for them. */
  readonly #opening = new Set<Promise<unknown>>();
  /** The agent's delegation rail, once wired (`/review`, `subagent.*`, completion delivery). */
  delegation: DelegationSupport | undefined;

  constructor(options: BridgeOptions = {}) {
    this.surface = options.surface ?? 'tui';
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.registry = createProfileRuntimeSet({
      serve: 'existing',
      launch: { home: options.home ?? getProcessHermesHome() },
      runtime: {
        platform: TUI_PLATFORM,
        approve: (request, signal) => this.#requestApproval(request, signal),
        logger: {
          info: () => {},
          warn: (details, message) => {
            const error = details.err instanceof Error ? `: ${details.err.message}` : '';
            this.log(`[${String(details.profile)}] ${message}${error}`);
          },
        },
        // Completions come back into the live session that owns them, as a turn, when idle.
        onRegistry: (_registry, runtime) => completionDelivery(this, runtime),
      },
    });
    this.delegation = agentDelegation();
    this.#methods = createMethodTable(this, { botRelay: options.botRelay ?? {} });
  }

  log(line: string): void {
    this.#log(`hermes-tui-bridge: ${line}`);
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** Bumped whenever a live session opens or closes (answers that show live ids depend on it). */
  get generation(): number {
    return this.#generation;
  }

  /** A new front-end connection; `send` writes one message to it. */
  connect(transport: Transport, send: (text: string) => void): Connection {
    const connection = new Connection({
      transport,
      send,
      methods: this.#methods,
      onClose: (closed) => this.#disconnect(closed),
    });
    this.connections.add(connection);
    return connection;
  }

  /** Sends `gateway.ready` to one connection. */
  announce(connection: Connection): void {
    connection.sendEvent({
      jsonrpc: '2.0',
      method: EVENT_METHOD,
      params: {
        type: 'gateway.ready',
        session_id: null,
        payload: {
          version: BRIDGE_VERSION,
          protocol_version: PROTOCOL_VERSION,
          pid: process.pid,
          profile: this.registry.launch.name,
          transport: connection.transport,
          methods: METHOD_NAMES,
          delegation: this.delegation !== undefined,
        },
      },
    });
  }

  #disconnect(connection: Connection): void {
    this.connections.delete(connection);
    for (const session of this.sessions.values()) session.detach(connection);
  }

  /** The runtime of profile `name` (default: the launch profile); 4003 for a name that is not a profile. */
  profile(name: string | undefined): ProfileRuntime {
    try {
      return this.registry.resolve(name);
    } catch (error) {
      if (AgentError.isInstance(error) && error.code === 'profile_not_served')
        throw new RpcError(RPC_ERROR_CODES.profileNotFound, error.message);
      throw error;
    }
  }

  /** The live session `id`, attached to `connection` or not; 4001 when unknown. */
  session(id: string): LiveSession {
    const session = this.sessions.get(id);
    if (!session || session.closed)
      throw new RpcError(RPC_ERROR_CODES.sessionNotFound, RPC_ERROR_MESSAGES.sessionNotFound(id));
    return session;
  }

  /** The live session of a stored conversation in a profile, if one is open here. */
  liveSessionFor(runtime: ProfileRuntime, conversationId: string): LiveSession | undefined {
    for (const session of this.sessions.values()) {
      if (
        !session.closed &&
        session.runtime === runtime &&
        session.conversationId === conversationId
      )
        return session;
    }
    return undefined;
  }

  /**
   * Runs one session open so that a stop waits for it: a session it opens is then ended with the
   * others (an open that started before the stop may finish, e.g. after waiting for the store's
   * write lock held by another process).
   */
  async trackOpen<T>(open: () => Promise<T>): Promise<T> {
    const running = open();
    this.#opening.add(running);
    try {
      return await running;
    } finally {
      this.#opening.delete(running);
    }
  }

  /** Opens (or finds) the live session for a stored row. */
  openLive(runtime: ProfileRuntime, store: SessionStore, row: SessionRecord): LiveSession {
    const conversationId = row.lineageRootId ?? row.id;
    const existing = this.liveSessionFor(runtime, conversationId);
    if (existing) return existing;
    const tip = store.getCompressionTip(row.id);
    const tipRow = store.getSession(tip) ?? row;
    const session = new LiveSession({
      runtime,
      conversationId,
      storedSessionId: tip,
      title: tipRow.title ?? row.title ?? null,
      cwd: tipRow.cwd ?? row.cwd ?? null,
    });
    this.sessions.set(session.id, session);
    this.#generation += 1;
    // A completion owed to this conversation (another process, an earlier run of this bridge)
    // can come in now: the profile's registry restores what the ledger owes when it starts.
    runtime.registry().then(
      () => setImmediate(() => this.onIdle(session)),
      (error: unknown) =>
        this.log(
          `delegations unavailable for ${runtime.name}: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
    return session;
  }

  /** Submits a prompt; queued prompts run in order when the session becomes idle. */
  submit(
    session: LiveSession,
    text: string,
    origin: 'prompt' | 'queue' = 'prompt',
  ): Promise<string> {
    if (this.#closing)
      return Promise.reject(
        new RpcError(RPC_ERROR_CODES.sessionBusy, 'the bridge is shutting down'),
      );
    return this.#start(session, text, origin);
  }

  #start(session: LiveSession, text: string, origin: 'prompt' | 'queue'): Promise<string> {
    return startTurn(session, { text, origin, onIdle: (idle) => this.onIdle(idle) });
  }

  /** A session became idle: the next queued prompt (then delivery hooks) may run. */
  onIdle(session: LiveSession): void {
    if (session.closed || session.running) return;
    // A queued prompt was promised to run after the turn: it still runs while the bridge drains
    // (the drain waits for it too), not once the drain is over.
    if (this.#closing && performance.now() >= this.#drainDeadline) return;
    const next = session.queue.shift();
    if (next !== undefined) {
      this.#start(session, next, 'queue').catch((error: unknown) => {
        session.emit('warning', {
          run_id: null,
          code: 'queued_prompt_failed',
          message: error instanceof Error ? error.message : String(error),
        });
      });
      return;
    }
    // Idle with nothing queued: a completion owed to this session may come in now (not while
    // stopping: the ledger keeps it for the next bridge that opens the conversation).
    if (!this.#closing) session.runtime.notifyIdle(session.storedSessionId);
  }

  async #requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const session = [...this.sessions.values()].find(
      (candidate) => !candidate.closed && candidate.storedSessionId === request.sessionId,
    );
    if (!session) return 'deny';
    const requestId = `apr_${randomBytes(6).toString('hex')}`;
    return new Promise<ApprovalDecision>((resolve) => {
      const finish = (decision: ApprovalDecision) => {
        signal.removeEventListener('abort', onAbort);
        session.approvals.delete(requestId);
        resolve(decision);
      };
      const onAbort = () => finish('deny');
      if (signal.aborted) {
        resolve('deny');
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      session.approvals.set(requestId, { runId: session.running?.runId, resolve: finish });
      session.emit('approval.request', {
        run_id: session.running?.runId ?? null,
        request_id: requestId,
        tool_name: request.toolName,
        command: request.command,
        reason: request.reason,
      });
    });
  }

  /** Closes one session: interrupts its turn, ends the stored row with `reason`, drops it. */
  async closeSession(session: LiveSession, reason: string): Promise<void> {
    if (session.closed) return;
    session.queue.length = 0;
    const running = session.running;
    if (running) {
      running.controller.abort(new Error(`session closed (${reason})`));
      await running.done;
    }
    session.closed = true;
    session.denyPendingApprovals();
    this.sessions.delete(session.id);
    this.#generation += 1;
    try {
      const store = await session.runtime.store();
      await store.endSession(session.storedSessionId, reason);
    } catch (error) {
      this.log(
        `could not end session ${session.storedSessionId}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /**
   * Stops the bridge: no new turns; running turns get `drainTimeoutMs` to finish (then they are
   * interrupted — what they said stays stored); live sessions end with `tui_shutdown`; stores close.
   * Calling it again while it drains (a signal after the front end closed stdin) shortens the
   * drain to the new `drainTimeoutMs` and resolves with the first call.
   */
  close(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    const deadline = performance.now() + (options.drainTimeoutMs ?? 0);
    if (this.#closed) {
      if (deadline < this.#drainDeadline) {
        this.#drainDeadline = deadline;
        this.#wakeDrain();
      }
      return this.#closed;
    }
    this.#closing = true;
    this.#drainDeadline = deadline;
    this.#closed = this.#shutdown();
    return this.#closed;
  }

  /** Waits for running turns until the drain deadline (which may move closer meanwhile). */
  async #drain(): Promise<boolean> {
    for (;;) {
      const running = [...this.sessions.values()].flatMap((session) =>
        session.running ? [session.running.done] : [],
      );
      if (running.length === 0) return true;
      const remaining = this.#drainDeadline - performance.now();
      if (remaining <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(running),
        new Promise<void>((resolve) => {
          this.#wakeDrain = resolve;
          timer = setTimeout(resolve, remaining);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
  }

  async #shutdown(): Promise<void> {
    // Opens under way finish first (new ones are refused): what they open is drained and ended
    // below like every other session. Each is bounded by the store's write patience.
    while (this.#opening.size > 0) await Promise.allSettled([...this.#opening]);
    const drained = await this.#drain();
    if (!drained)
      this.log('interrupting turns still running at shutdown (their transcripts stay valid)');
    await Promise.all(
      [...this.sessions.values()].map((session) => this.closeSession(session, SHUTDOWN_END_REASON)),
    );
    for (const connection of [...this.connections]) connection.close();
    await this.registry.close();
  }
}
