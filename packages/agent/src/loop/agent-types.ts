import type { HermesConfig } from '@hermes/config';
import type { CreateSessionInput, SessionRecord, SessionStore } from '@hermes/session-store';
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
}

export interface RunTurnOptions {
  /** Any session id of the conversation; the turn runs on its compression tip. */
  readonly sessionId: string;
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
  /** Runs one turn. Refusals before anything is stored (config, busy session) throw `AgentError`. */
  runTurn(options: RunTurnOptions): Promise<TurnResult>;
  /** A new agent inheriting this one's options, one level deeper, with `overrides` applied. */
  createChild(overrides?: Partial<CreateAgentOptions>): Agent;
  /** Creates a session row for this agent (`source` = platform, `cwd`, model). */
  createSession(input?: Partial<CreateSessionInput>): Promise<SessionRecord>;
  /** The toolsets this agent's platform sees. */
  listToolsets(): ToolsetInfo[];
}
