import type { DelegationRail } from '@hermes/review-engine';
import type { LiveSession } from './live-session.js';

/** A live subagent as `subagent.list` shows it. */
export interface SubagentView {
  readonly subagent_id: string;
  readonly delegation_id: string;
  readonly goal: string;
  readonly status: string;
  readonly running_seconds: number;
  readonly accepting_steer: boolean;
  readonly api_calls: number;
  readonly current_tool: string | null;
}

/**
 * What the bridge needs from the agent's async delegation rail: a rail for `/review`, the live
 * subagents of a session's spawn tree, steer and stop. Completions come back through
 * `Bridge.deliverCompletions` (owned by the session that asked, injected when it is idle).
 */
export interface DelegationSupport {
  rail(session: LiveSession): Promise<DelegationRail>;
  list(session: LiveSession): Promise<readonly SubagentView[]>;
  steer(
    session: LiveSession,
    subagentId: string,
    message: string,
  ): Promise<{ status: 'queued' | 'rejected'; reason?: string } | undefined>;
  stop(
    session: LiveSession,
    subagentId: string,
  ): Promise<'stopping' | 'already_stopping' | undefined>;
}
