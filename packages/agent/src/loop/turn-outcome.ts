import { AgentError } from '../errors.js';
import type { TurnResult } from './agent-types.js';

/** The final answer when the model ends a turn with nothing to say (the reference's sentinel). */
export const EMPTY_RESPONSE_SENTINEL = '(empty)';

/** Sent (never stored) with the grace call after the iteration budget is spent. */
export const GRACE_CALL_NOTE =
  'You have used every tool-calling step allowed for this turn. Do not call tools. Reply now with your final answer: what you did, what you found, and what is left.';

/** How a steer appears inside a tool result. */
export function steerNote(text: string): string {
  return `[STEER — message from the agent that delegated this task]: ${text}`;
}

/** How a turn ended, before the run id, the session and the usage are added. */
export type TurnOutcome = Omit<TurnResult, 'runId' | 'sessionId' | 'usage'>;

export function interrupted(partial: string): TurnOutcome {
  return { status: 'interrupted', exitReason: 'interrupted', finalResponse: partial };
}

export function failed(error: unknown): TurnOutcome {
  const described = AgentError.isInstance(error)
    ? { code: error.code, message: error.message }
    : {
        code: 'internal_error' as const,
        message: error instanceof Error ? error.message : String(error),
      };
  return { status: 'failed', exitReason: 'error', finalResponse: '', error: described };
}
