import { getHomeScope, type HomeScope } from '@hermes/config';
import {
  type AsyncDelegationRecord,
  DELEGATION_RESTORE_MAX_AGE_SECONDS,
  isProcessAlive,
  LIVE_DELEGATION_STATES,
  RELEASED_DELEGATION_OWNER,
  type SessionStore,
} from '@hermes/session-store';
import type { AsyncUnit, DelegationOrigin, ResumeUnitRequest } from './async-unit.js';
import { placeholderResults } from './child-result.js';
import {
  type DelegationResultRecord,
  type DelegationTaskRecord,
  resumedSlotKey,
} from './completion-event.js';
import { DELEGATION_MAX_RESUMES } from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';
import { removeCheckpoints } from './ledger-files.js';

/** What taking over stopped units needs of the registry that runs them — and nothing else. */
export interface ResumeHost {
  readonly store: SessionStore;
  readonly home: string;
  /** Shutting down: nothing is taken over, and a unit being built is given back. */
  closing(): boolean;
  /** The registry has this unit already (running, waiting for a slot, or ending). */
  holds(delegationId: string): boolean;
  /**
   * Runs a unit built again, in `scope`, when a slot is free, first writing its record (`unit.task`,
   * this run counted) to the row, which holds `unrunTask` (the record as it was before the
   * takeover) until then; if it never runs here its row goes back to `unrunTask`.
   */
  adopt(input: {
    readonly unit: AsyncUnit;
    readonly dispatchedAt: number;
    readonly scope: HomeScope | undefined;
    readonly unrunTask: DelegationTaskRecord;
  }): void;
  /** Records and publishes the result of a unit that did not run here. */
  finalizeUnrun(input: {
    readonly unit: AsyncUnit;
    readonly dispatchedAt: number;
    readonly scope: HomeScope | undefined;
    readonly outcome: DelegationResultRecord;
  }): Promise<void>;
  /** Lets go of a row this process took over, its record back to `task` (resume not spent). */
  giveBack(delegationId: string, task: DelegationTaskRecord): Promise<void>;
}

const LIVE: readonly string[] = LIVE_DELEGATION_STATES;

/**
 * Takes over the resumable units that stopped owners left running in the ledger and hands them,
 * built again, to the registry: a row let go by a graceful stop, or one whose owner died (at most
 * `DELEGATION_MAX_RESUMES` times), dispatched less than 48 h ago. Each row is taken by
 * compare-and-swap on its owner, so of several processes recovering one home exactly one runs it.
 */
export class StoppedUnitResumer {
  readonly #host: ResumeHost;
  readonly #build: (request: ResumeUnitRequest) => Promise<AsyncUnit>;
  /** Takeovers still in flight (`settled()` waits for them). */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(host: ResumeHost, build: (request: ResumeUnitRequest) => Promise<AsyncUnit>) {
    this.#host = host;
    this.#build = build;
  }

  /** The task record of a row this process may take over and run again now, else undefined. */
  resumableTask(row: AsyncDelegationRecord, nowSeconds: number): DelegationTaskRecord | undefined {
    if (this.#host.closing() || this.#host.holds(row.delegationId)) return;
    if (!LIVE.includes(row.state)) return;
    if (row.dispatchedAt < nowSeconds - DELEGATION_RESTORE_MAX_AGE_SECONDS) return;
    const task = parseTask(row.taskJson);
    if (task?.resumable !== true || !task.resume) return;
    // A released row was let go by a graceful stop; any other owner that is gone died with it,
    // and only those runs spend the budget (a unit that crashes its process is not run forever).
    if (!releasedOwner(row) && (task.crash_resumes ?? 0) >= DELEGATION_MAX_RESUMES) return;
    if (isProcessAlive({ pid: row.ownerPid, startTicks: row.ownerStartedAt })) return;
    return task;
  }

  /** Takes over every resumable row it may and hands each to the registry: the ids it took. */
  async resumeStopped(): Promise<string[]> {
    const work = this.#takeOverStoppedUnits();
    this.#inFlight.add(work);
    try {
      return await work;
    } finally {
      this.#inFlight.delete(work);
    }
  }

  /** A takeover is in flight. */
  get busy(): boolean {
    return this.#inFlight.size > 0;
  }

  /** Resolves once the takeovers in flight now have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  async #takeOverStoppedUnits(): Promise<string[]> {
    const { store, home } = this.#host;
    const resumed: string[] = [];
    const now = Date.now() / 1000;
    for (const row of store.listLiveDelegations()) {
      const task = this.resumableTask(row, now);
      if (!task) continue;
      const next: DelegationTaskRecord = {
        ...task,
        resume_count: (task.resume_count ?? 0) + 1,
        crash_resumes: (task.crash_resumes ?? 0) + (releasedOwner(row) ? 0 : 1),
      };
      // The row keeps the record from before the takeover until the unit starts running here
      // (the registry writes `next` then): a unit that waits for a slot and dies with this
      // process has not run, so it spent no resume.
      const taken = await store.transferDelegationOwner({
        delegationId: row.delegationId,
        from: { pid: row.ownerPid, startTicks: row.ownerStartedAt },
      });
      if (!taken) continue; // another process got it first
      await removeCheckpoints(home, row.delegationId);
      if (await this.#handOver(row, next, task)) resumed.push(row.delegationId);
    }
    return resumed;
  }

  /**
   * Builds a taken-over unit again and hands it to the registry (true); one that cannot be built
   * again ends `unknown`, published with the reason (false), and one built while the registry
   * began shutting down is given back unrun (false).
   */
  async #handOver(
    row: AsyncDelegationRecord,
    task: DelegationTaskRecord,
    before: DelegationTaskRecord,
  ): Promise<boolean> {
    const scope = getHomeScope();
    const origin: DelegationOrigin = {
      sessionKey: row.sessionKey,
      originUiSessionId: row.originUiSessionId,
      originSessionId: task.origin_session_id,
      parentSessionId: row.parentSessionId,
    };
    const request: ResumeUnitRequest = {
      delegationId: row.delegationId,
      task,
      origin,
      dispatchedAt: row.dispatchedAt,
    };
    let unit: AsyncUnit;
    try {
      unit = await this.#build(request);
    } catch (error) {
      if (this.#host.closing()) {
        await this.#host.giveBack(row.delegationId, before);
        return false;
      }
      const reason = MESSAGES.resumeFailed(error instanceof Error ? error.message : String(error));
      const stub: AsyncUnit = {
        delegationId: row.delegationId,
        slotKey: resumedSlotKey(row.delegationId, task),
        task,
        origin,
        maxConcurrent: 1,
        run: () => Promise.reject(new Error(reason)),
      };
      // One `unknown` entry per task, so every goal the delegating agent asked for is named.
      const results = placeholderResults(task, 'unknown', reason);
      await this.#host.finalizeUnrun({
        unit: stub,
        dispatchedAt: row.dispatchedAt,
        scope,
        outcome: { status: 'unknown', results, error: reason },
      });
      return false;
    }
    // A shutdown began while the unit was being built: it never ran here, so the next start gets it.
    if (this.#host.closing()) {
      await this.#host.giveBack(row.delegationId, before);
      return false;
    }
    this.#host.adopt({
      // The ledger's record, origin and slot, whatever the builder gave: the units of one call
      // share one slot, as at dispatch.
      unit: { ...unit, slotKey: resumedSlotKey(row.delegationId, task), task, origin },
      dispatchedAt: row.dispatchedAt,
      scope,
      unrunTask: before,
    });
    return true;
  }
}

/** A row a graceful stop let go of (`RELEASED_DELEGATION_OWNER`), not one whose owner died. */
function releasedOwner(row: AsyncDelegationRecord): boolean {
  return row.ownerPid === RELEASED_DELEGATION_OWNER.pid;
}

function parseTask(text: string): DelegationTaskRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as DelegationTaskRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
