import type { DelegationRecovery } from '@hermes/session-store';
import type { AsyncDelegationEvent } from './completion-event.js';
import type { BatchEvent } from './run-batch.js';

/** What the registry reports as it works (for logs, front ends, tests and benchmarks). */
export type DelegationLifecycleEvent =
  | { readonly type: 'dispatched'; readonly delegationId: string }
  | { readonly type: 'subagent'; readonly delegationId: string; readonly event: BatchEvent }
  | { readonly type: 'checkpointed'; readonly delegationId: string; readonly status: string }
  | { readonly type: 'recorded'; readonly delegationId: string; readonly owned: boolean }
  | { readonly type: 'published'; readonly event: AsyncDelegationEvent }
  | {
      readonly type: 'stalling';
      readonly delegationId: string;
      readonly quietSeconds: number;
      readonly phase: 'idle' | 'in_tool';
    }
  | { readonly type: 'stalled'; readonly delegationId: string }
  | { readonly type: 'recovered'; readonly report: DelegationRecoveryReport }
  /** A resumable unit stopped by a graceful shutdown, left running in the ledger (owner released). */
  | { readonly type: 'suspended'; readonly delegationId: string }
  /** A resumable unit taken over from a stopped owner and run again. */
  | { readonly type: 'resumed'; readonly delegationId: string; readonly resumeCount: number }
  /** A unit taken over while every slot is taken: it runs once one is free. */
  | { readonly type: 'queued'; readonly delegationId: string }
  | { readonly type: 'warning'; readonly message: string };

export interface DelegationRecoveryReport extends Omit<DelegationRecovery, 'restored'> {
  /** Completions re-enqueued (restored from the ledger). */
  readonly restored: string[];
  /** Terminal results recovered from checkpoints of processes that died before the ledger write. */
  readonly checkpointed: string[];
  /** Delivery claims of dead processes given back. */
  readonly releasedClaims: string[];
  /**
   * Resumable units taken over from stopped owners to run again here: running, or waiting for a
   * free slot (`max_concurrent_children`).
   */
  readonly resumed: string[];
}
