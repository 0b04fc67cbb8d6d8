import type { HermesConfig } from '@hermes/config';
import type { SessionStore } from '@hermes/session-store';
import type { AgentEvent } from '../events.js';
import type { Agent, TurnOrigin } from '../loop/agent-types.js';

/** What a tool asks a person to allow (today: a dangerous terminal command). */
export interface ApprovalRequest {
  readonly toolName: string;
  readonly sessionId: string;
  /** The exact command (or action) to approve. */
  readonly command: string;
  /** Why it needs approval, e.g. `recursive delete`. */
  readonly reason: string;
}

/** `once` allows this call; `session` allows this kind for the rest of the session; `deny` refuses. */
export type ApprovalDecision = 'once' | 'session' | 'deny';

/** A surface's way to ask the user. Without one, anything that needs approval is denied. */
export type ApprovalCallback = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => ApprovalDecision | Promise<ApprovalDecision>;

/**
 * Everything a tool's `run` may use. Agent-level tools (delegation) get the running agent
 * itself (`agent`), so they can build a child with `agent.createChild(…)` and report through
 * `emit`; ordinary tools mostly need `cwd`, `signal` and `home`.
 */
export interface ToolContext {
  readonly agent: Agent;
  readonly sessionId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly home: string;
  readonly cwd: string;
  readonly config: HermesConfig;
  readonly store: SessionStore;
  /** Aborts when the turn is interrupted; long work must stop promptly. */
  readonly signal: AbortSignal;
  readonly depth: number;
  readonly platform: string;
  /** Sends an event into the turn's stream (progress, nested agent events). */
  emit(event: AgentEvent): void;
  /** Asks for approval; resolves `deny` when no surface answers in time. */
  approve(request: Omit<ApprovalRequest, 'sessionId' | 'toolName'>): Promise<ApprovalDecision>;
  /** Reads a secret through the agent's secret scope. */
  secret(name: string): string | undefined;
  /** State that lives as long as the conversation in this agent (keyed by lineage root). */
  readonly sessionState: Map<string, unknown>;
  /** Who the turn is for (`runTurn({ origin })`); `sessionKey` defaults to the session id. */
  readonly origin: TurnOrigin;
}
