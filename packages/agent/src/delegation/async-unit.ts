import type { BatchResult, ChildResult } from './child-result.js';
import type { DelegationTaskRecord } from './completion-event.js';

/*
 * What the async delegation registry runs: a background unit, where it came from, and what it
 * takes to build one again after its process stopped.
 */

/** Where a delegation was asked from; stamped on its completion. */
export interface DelegationOrigin {
  readonly sessionKey?: string | null | undefined;
  readonly originUiSessionId?: string | null | undefined;
  readonly originSessionId?: string | null | undefined;
  readonly parentSessionId?: string | null | undefined;
}

/** A unit's liveness, read by the stall monitor. */
export interface AsyncUnitProgress {
  readonly apiCalls: number;
  readonly currentTool: string | undefined;
  /** Monotonic ms of the last event of any child (deltas count). */
  readonly lastActivityMs: number;
  readonly inTool: boolean;
}

/** One background unit (a whole `delegate_task` call, or one group of it). */
export interface AsyncUnit {
  readonly delegationId: string;
  /** Units of one call share one capacity slot. */
  readonly slotKey: string;
  readonly task: DelegationTaskRecord;
  readonly origin: DelegationOrigin;
  /** The cap that applies when the registry has none of its own. */
  readonly maxConcurrent: number;
  /** Runs the unit; `signal` is the unit's own (interrupts), never the parent turn's. */
  run(signal: AbortSignal): Promise<BatchResult>;
  progress?(): AsyncUnitProgress;
  /** Results of the children that finished so far. */
  partialResults?(): readonly ChildResult[];
}

/** A resumable unit a dead (or departed) owner left running, to be built again for `resume`. */
export interface ResumeUnitRequest {
  readonly delegationId: string;
  /** The ledger's task record, with its `resume` spec and the new `resume_count`. */
  readonly task: DelegationTaskRecord;
  readonly origin: DelegationOrigin;
  /** Epoch seconds of the first dispatch. */
  readonly dispatchedAt: number;
}

export type DispatchOutcome =
  | { readonly status: 'dispatched'; readonly delegationId: string }
  | { readonly status: 'rejected'; readonly error: string; readonly capacity: boolean };
