import type { HermesConfig } from '@hermes/config';
import type {
  CreateSessionInput,
  MessageInput,
  SessionRecord,
  SessionStore,
} from '@hermes/session-store';
import type { AsyncDelegationRegistry } from '../delegation/async-registry.js';
import type { AgentErrorCode } from '../errors.js';
import type { AgentEvent } from '../events.js';
import type { Usage } from '../model/chat-message.js';
import type { ModelRoute } from '../model/model-route.js';
import type { SecretReader } from '../model/resolve-runtime-provider.js';
import type { Tool } from '../tools/define-tool.js';
import type { ApprovalCallback } from '../tools/tool-context.js';
import type { ToolsetInfo } from '../tools/toolsets.js';

export interface CreateAgentOptions {
  readonly config: HermesConfig;
  readonly store: SessionStore;
  /** The profile home (skills, SOUL.md, `.env` named in errors). Default `getHermesHome()`. */
  readonly home?: string;
  /** The tools this agent may offer (default `BUILTIN_TOOLS`); toolsets decide which a turn sees. */
  readonly tools?: readonly Tool[];
  /** The surface: `cli`, `api_server`, `tui`, `telegram`, `subagent`… (default `cli`). */
  readonly platform?: string;
  /** A route that overrides config (delegation, the review engine). */
  readonly route?: ModelRoute;
  /** The fallback chain to use with `route` (default: `fallback_providers`, or none with `route`). */
  readonly fallbackRoutes?: readonly ModelRoute[];
  /** Toolset or tool names to use instead of the platform's. */
  readonly toolsets?: readonly string[];
  /** Toolset or tool names removed (besides `agent.disabled_toolsets`). */
  readonly disabledToolsets?: readonly string[];
  /** Replaces `SOUL.md` / the default identity in the system prompt. */
  readonly identity?: string;
  /** Extra system prompt sections, after the workspace context files. */
  readonly systemPromptParts?: readonly string[];
  /** Leave out AGENTS.md / CLAUDE.md / .cursorrules / .hermes.md. */
  readonly skipContextFiles?: boolean;
  /** Model calls per turn before the grace call (default `agent.max_turns`). */
  readonly maxIterations?: number;
  /**
   * An absolute prompt size (tokens) past which the conversation is compressed, when lower than
   * `compression.threshold` × the context window (`delegation.compression_threshold_tokens`).
   */
  readonly compressionThresholdTokens?: number;
  /** Delegation depth (0 for a top-level agent). */
  readonly depth?: number;
  /** Working directory for tools and context files (default `terminal.cwd`, else `process.cwd()`). */
  readonly cwd?: string;
  /** Answers approval requests; without one, dangerous commands are denied. */
  readonly approve?: ApprovalCallback;
  /** Reads secrets (default `getSecret`: the profile's secret scope). */
  readonly secret?: SecretReader;
  /** Stream replies (default `agent.stream`). */
  readonly stream?: boolean;
  /** Retries per provider (default `agent.api_max_retries`). */
  readonly maxRetries?: number;
  /** The agent that spawned this one (set by `createChild`). */
  readonly parent?: Agent;
  /**
   * A complete system prompt, used as is: no `SOUL.md`, working-directory line, context files or
   * `systemPromptParts` are added (delegation builds its children's prompts itself).
   */
  readonly systemPrompt?: string;
  /**
   * The async delegation rail of this process (`createDelegationRegistry`): with one,
   * `delegate_task` at depth 0 runs in the background and its completion re-enters the
   * conversation later; without one (a one-shot run) it runs inline.
   */
  readonly delegations?: AsyncDelegationRegistry;
  /**
   * A finite single-query run (`hermes chat -q`): `delegation.oneshot_max_children` caps the
   * subagents it may spawn.
   */
  readonly oneShot?: boolean;
}

/** Where a turn comes from, stamped on the completions of what it delegates. */
export interface TurnOrigin {
  /** The surface's route to this conversation (gateway chat key); default the session id. */
  readonly sessionKey?: string | undefined;
  /** The front-end session of a TUI or desktop client. */
  readonly uiSessionId?: string | undefined;
}

/** Lets a caller steer or stop a running turn between model calls (delegation's `steer` / `stop`). */
export interface TurnControl {
  /** Text appended to the next tool result the turn stores (returns undefined when none). */
  takeSteer?(): string | undefined;
  /** Checked before each model call: true ends the turn as `interrupted` with what was said. */
  shouldStop?(): boolean;
}

/** A conversation that does not exist yet, created by its first turn (`RunTurnOptions.newSession`). */
export type NewSessionOptions = Partial<Omit<CreateSessionInput, 'id' | 'newId'>> & {
  /** Earlier messages the client sent, stored before the turn's message (oldest first). */
  readonly history?: readonly MessageInput[];
};

export interface RunTurnOptions {
  /** Any session id of the conversation; the turn runs on its compression tip. */
  readonly sessionId: string;
  /**
   * `sessionId` names a conversation that does not exist yet: the turn creates it (these fields,
   * with `Agent.createSession`'s defaults) in the same transaction as its first messages — one
   * commit instead of two — and sends the first model request while that transaction commits
   * (the request depends on nothing the store decides). The model's answer is only used once the
   * transaction has committed; should it fail, the request is aborted and nothing is stored. The
   * id must be new: one that is taken is `AgentError` `session_exists`, nothing stored, so a turn
   * never continues a conversation it did not mean to — draw another id and run again.
   */
  readonly newSession?: NewSessionOptions;
  /**
   * The turn's run id, for a surface that named the run before it started (the gateway's
   * `/v1/runs` answers its id at once): events, the result and delegated work then carry that one
   * id. 1–128 characters from `A-Z a-z 0-9 . _ : -`; default `run_` and 32 hex digits.
   */
  readonly runId?: string;
  /** The user message, stored before the model is called. Omit to continue without one. */
  readonly message?: string;
  /** Stored `display_kind` of `message` (e.g. a re-entered delegation result). */
  readonly displayKind?: string;
  /** A system note for this turn only: sent to the model, never stored. */
  readonly ephemeralSystemNote?: string;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: AgentEvent) => void;
  /** Working directory for this turn (default the agent's). */
  readonly cwd?: string;
  /**
   * Called once `message` is stored, before the model is called, and awaited. Completion
   * delivery acknowledges its ledger row here, so the row settles only after the injected turn
   * exists.
   */
  readonly onMessageStored?: (messageId: number) => void | Promise<void>;
  /** Who is asking (stamped on delegated work); tools see it as `context.origin`. */
  readonly origin?: TurnOrigin;
  readonly control?: TurnControl;
}

export type TurnStatus = 'completed' | 'interrupted' | 'failed';

export interface TurnResult {
  readonly runId: string;
  /** Where the turn ended: the session passed in, or its compression child. */
  readonly sessionId: string;
  readonly status: TurnStatus;
  readonly exitReason: 'completed' | 'max_iterations' | 'interrupted' | 'error';
  /** The final answer (`(empty)` when the model gave none), or the partial reply when interrupted. */
  readonly finalResponse: string;
  readonly usage: Usage;
  readonly error?: { readonly code: AgentErrorCode | 'internal_error'; readonly message: string };
}

export interface Agent {
  readonly config: HermesConfig;
  readonly store: SessionStore;
  readonly home: string;
  readonly platform: string;
  readonly depth: number;
  readonly cwd: string;
  readonly maxIterations: number;
  /** The options it was built with (a child starts from these). */
  readonly options: CreateAgentOptions;
  /** The tools a turn offers, after toolsets. */
  readonly tools: readonly Tool[];
  /** The main route (resolved on first use; throws `AgentError` when config is incomplete). */
  route(): ModelRoute;
  /** The fallback chain used with `route()` (resolved with it). */
  fallbackRoutes(): readonly ModelRoute[];
  /** Runs one turn. Refusals before anything is stored (config, busy session) throw `AgentError`. */
  runTurn(options: RunTurnOptions): Promise<TurnResult>;
  /** A new agent inheriting this one's options, one level deeper, with `overrides` applied. */
  createChild(overrides?: Partial<CreateAgentOptions>): Agent;
  /** Creates a session row for this agent (`source` = platform, `cwd`, model). */
  createSession(input?: Partial<CreateSessionInput>): Promise<SessionRecord>;
  /** The toolsets this agent's platform sees. */
  listToolsets(): ToolsetInfo[];
}
