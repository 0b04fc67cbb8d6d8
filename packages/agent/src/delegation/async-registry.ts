import { getHermesHome, getHomeScope, withHomeScope } from '@hermes/config';
import {
  currentProcessIdentity,
  RELEASED_DELEGATION_OWNER,
  type SessionStore,
} from '@hermes/session-store';
import type { AsyncUnit, DispatchOutcome, ResumeUnitRequest } from './async-unit.js';
import { batchStatus, type ChildResult, placeholderResults } from './child-result.js';
import {
  type DelegationResultRecord,
  type DelegationTaskRecord,
  eventFromLedgerRow,
} from './completion-event.js';
import { CompletionQueue } from './completion-queue.js';
import type { DelegationLifecycleEvent, DelegationRecoveryReport } from './delegation-lifecycle.js';
import {
  SHUTDOWN_INTERRUPT_REASON,
  STALL_CHECK_INTERVAL_MS,
  STALL_GRACE_MS,
  STALL_IDLE_MS,
  STALL_IN_TOOL_MS,
} from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';
import { removeCheckpoints, writeTerminalCheckpoint } from './ledger-files.js';
import { applyDeadCheckpoints, releaseDeadClaims } from './recover-dead-owners.js';
import { type ResumeHost, StoppedUnitResumer } from './resume-stopped-units.js';
import { SubagentTracker } from './subagent-tracker.js';
import {
  type AsyncDelegationListing,
  advanceStall,
  completionEventOf,
  listingOf,
  matchesOrigin,
  newUnitRecord,
  type StallThresholds,
  stalledOutcome,
  type UnitRecord,
} from './unit-record.js';

export interface AsyncDelegationRegistryOptions {
  readonly store: SessionStore;
  /** Checkpoints and claim markers live here (default `getHermesHome()` now). */
  readonly home?: string;
  readonly queue?: CompletionQueue;
  /** Concurrent units (default: each dispatch's `delegation.max_concurrent_children`). */
  readonly maxConcurrent?: number;
  readonly stall?: Partial<StallThresholds>;
  readonly onEvent?: (event: DelegationLifecycleEvent) => void;
  /**
   * Builds a resumable unit again (`resumeDelegation(request, { parent })` with an agent of this
   * profile). Without it, this registry resumes nothing: a stopped owner's resumable units end
   * `unknown` like the others.
   */
  readonly resume?: (request: ResumeUnitRequest) => Promise<AsyncUnit>;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * The async delegation registry of one profile's store: it runs background units, holds the
 * capacity, writes the durable ledger (row before the child starts; terminal result
 * checkpointed, then recorded, then published), watches for stalls, and restores owed
 * completions after a restart. Create one per store and process; `close()` on shutdown.
 */
export class AsyncDelegationRegistry {
  readonly store: SessionStore;
  readonly home: string;
  readonly queue: CompletionQueue;
  /** The live subagents of this registry's delegations (`list` / `steer` / `stop`). */
  readonly subagents = new SubagentTracker();
  readonly #records = new Map<string, UnitRecord>();
  readonly #delivering = new Set<string>();
  readonly #options: AsyncDelegationRegistryOptions;
  readonly #stall: StallThresholds;
  #monitor: NodeJS.Timeout | undefined;
  #paused = false;
  #closing = false;
  #closed = false;
  /** Takes over what stopped owners left running (with the `resume` option). */
  readonly #resumer: StoppedUnitResumer | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(options: AsyncDelegationRegistryOptions) {
    this.store = options.store;
    this.home = options.home ?? getHermesHome();
    this.queue = options.queue ?? new CompletionQueue();
    this.#options = options;
    this.#stall = {
      checkIntervalMs: options.stall?.checkIntervalMs ?? STALL_CHECK_INTERVAL_MS,
      idleMs: options.stall?.idleMs ?? STALL_IDLE_MS,
      inToolMs: options.stall?.inToolMs ?? STALL_IN_TOOL_MS,
      graceMs: options.stall?.graceMs ?? STALL_GRACE_MS,
    };
    if (options.resume)
      this.#resumer = new StoppedUnitResumer(
        {
          store: this.store,
          home: this.home,
          closing: () => this.#closing,
          holds: (delegationId) => this.#records.has(delegationId),
          adopt: (input) => this.#adopt(input),
          finalizeUnrun: (input) => this.#finalizeUnrun(input),
          giveBack: (delegationId, task) => this.#giveBack(delegationId, task),
        },
        options.resume,
      );
  }

  /** Spawning paused (the TUI's `p`, the `delegation.pause` RPC): new delegations are refused. */
  get paused(): boolean {
    return this.#paused;
  }

  setPaused(paused: boolean): void {
    this.#paused = paused;
  }

  /** Units running now (not those waiting for a free slot). */
  get running(): number {
    let count = 0;
    for (const record of this.#records.values()) if (record.started) count += 1;
    return count;
  }

  #emit(event: DelegationLifecycleEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch {
      // An observer must not break the rail.
    }
  }

  /** Reports something a caller may want to know (batch events, warnings). */
  report(event: DelegationLifecycleEvent): void {
    this.#emit(event);
  }

  /**
   * Starts a unit in the background. The capacity check and the slot reservation happen with
   * no await between them; the ledger row is written before the unit runs. Rejections:
   * capacity (`Async delegation capacity reached …`), shutting down, or a ledger write failure.
   */
  async dispatch(unit: AsyncUnit): Promise<DispatchOutcome> {
    // The caller's home and secrets, captured before any hand-off.
    const scope = getHomeScope();
    // From the moment close() starts: a unit started while it waits for the others would run on
    // uninterrupted, past the wait, on a store about to close.
    if (this.#closing || this.#closed)
      return { status: 'rejected', error: 'the delegation rail is shutting down', capacity: false };
    // Units waiting for a slot count: they were there first.
    const slots = this.#slots(() => true);
    if (!slots.has(unit.slotKey) && slots.size >= this.#capacity(unit))
      return { status: 'rejected', error: MESSAGES.capacity(slots.size), capacity: true };
    const record = newUnitRecord(unit, Date.now() / 1000, scope);
    this.#records.set(unit.delegationId, record);
    try {
      await this.store.recordDelegationStart({
        delegationId: unit.delegationId,
        sessionKey: unit.origin.sessionKey ?? null,
        originUiSessionId: unit.origin.originUiSessionId ?? null,
        parentSessionId: unit.origin.parentSessionId ?? null,
        task: unit.task,
      });
    } catch (error) {
      this.#remove(unit.delegationId);
      return {
        status: 'rejected',
        error: `the delegation could not be recorded: ${error instanceof Error ? error.message : String(error)}`,
        capacity: false,
      };
    }
    this.#ensureMonitor();
    this.#start(record);
    this.#emit({ type: 'dispatched', delegationId: unit.delegationId });
    return { status: 'dispatched', delegationId: unit.delegationId };
  }

  /** The slot keys of the units `include` selects. */
  #slots(include: (record: UnitRecord) => boolean): Set<string> {
    const slots = new Set<string>();
    for (const record of this.#records.values())
      if (include(record)) slots.add(record.unit.slotKey);
    return slots;
  }

  #capacity(unit: AsyncUnit): number {
    return Math.max(1, this.#options.maxConcurrent ?? unit.maxConcurrent);
  }

  /** Runs a unit now, in the home scope it was dispatched (or taken over) in. */
  #start(record: UnitRecord): void {
    record.started = true;
    record.status = 'running';
    record.startedMs = performance.now();
    record.lastProgressMs = record.startedMs;
    const start = () =>
      (record.unrunTask ? this.#recordResumedRun(record) : Promise.resolve())
        .then(() => this.#runUnit(record))
        .catch((error: unknown) =>
          this.#emit({
            type: 'warning',
            message: `delegation ${record.unit.delegationId}: ${String(error)}`,
          }),
        );
    void (record.scope ? withHomeScope(record.scope, start) : start());
  }

  /**
   * A unit taken over starts running: its row, which kept the record from before the takeover
   * while the unit waited, now counts this run (`resume_count`, `crash_resumes`), so a crash from
   * here on spends the resume. Should the write fail, the unit runs anyway and a warning says so.
   */
  async #recordResumedRun(record: UnitRecord): Promise<void> {
    const { delegationId, task } = record.unit;
    try {
      await this.store.transferDelegationOwner({
        delegationId,
        from: currentProcessIdentity(),
        task,
      });
    } catch (failure) {
      this.#emit({
        type: 'warning',
        message: `delegation ${delegationId}: its run was not recorded before it started (${(failure as Error).message})`,
      });
    }
  }

  /** Starts waiting units, first come first served, while their slots are free. */
  #startWaiting(): void {
    if (this.#closing) return;
    for (const record of this.#records.values()) {
      if (record.started || record.finalized) continue;
      const running = this.#slots((other) => other.started);
      if (!running.has(record.unit.slotKey) && running.size >= this.#capacity(record.unit)) return;
      this.#start(record);
      this.#emit({
        type: 'resumed',
        delegationId: record.unit.delegationId,
        resumeCount: record.unit.task.resume_count ?? 1,
      });
    }
  }

  /**
   * A waiting unit interrupted before it ran: a shutdown gives its row back as it was taken over
   * (the next start runs it, resume not spent); any other interrupt (`/stop`, `/new`) ends it
   * `interrupted`, published like a running unit's.
   */
  async #stopWaiting(record: UnitRecord): Promise<void> {
    if (record.started || record.finalized) return;
    const { delegationId, task } = record.unit;
    if (record.controller.signal.reason === SHUTDOWN_INTERRUPT_REASON) {
      record.finalized = true;
      record.status = 'suspended';
      try {
        await this.#giveBack(delegationId, record.unrunTask ?? task);
      } finally {
        this.#remove(delegationId);
      }
      return;
    }
    const error = MESSAGES.interruptedWaiting;
    // It did not run here: its completion counts the runs its row had before the takeover (no
    // "Resumed after a restart … what follows is from the last run" over a run that never was).
    if (record.unrunTask) record.unit = { ...record.unit, task: record.unrunTask };
    const results = placeholderResults(task, 'interrupted', error);
    await this.#finalize(record, { status: batchStatus(results), results, error });
  }

  /** Forgets a unit that ended (or never ran here), starts what waited for its slot. */
  #remove(delegationId: string): void {
    this.#records.delete(delegationId);
    this.#startWaiting();
    this.#settleIdle();
  }

  async #runUnit(record: UnitRecord): Promise<void> {
    const { unit } = record;
    let outcome: DelegationResultRecord;
    try {
      const batch = await unit.run(record.controller.signal);
      if (this.#suspends(record, batch.results)) return await this.#suspend(record);
      const status = batchStatus(batch.results);
      outcome = {
        status,
        results: batch.results,
        error:
          status === 'error'
            ? (batch.results.find((entry) => entry.error)?.error ?? 'no subagent completed')
            : null,
        total_duration_seconds: batch.total_duration_seconds,
      };
    } catch (error) {
      if (this.#suspends(record)) return await this.#suspend(record);
      outcome = {
        status: 'error',
        results: [...(unit.partialResults?.() ?? [])],
        error: error instanceof Error ? error.message : String(error),
        total_duration_seconds: Math.round((performance.now() - record.startedMs) / 10) / 100,
      };
    }
    await this.#finalize(record, outcome);
  }

  /**
   * A resumable unit that a graceful shutdown stopped before it finished is suspended instead of
   * finalised: the next start runs it again. A graceful stop spends no resume (the budget is for
   * crashes), so a unit run again after a restart is suspended again by the next restart.
   */
  #suspends(record: UnitRecord, results?: readonly ChildResult[]): boolean {
    const { signal } = record.controller;
    const { task } = record.unit;
    if (record.finalized || !signal.aborted || signal.reason !== SHUTDOWN_INTERRUPT_REASON)
      return false;
    if (task.resumable !== true || !task.resume) return false;
    // Every child finished anyway: that is its result, recorded as usual.
    return results === undefined || results.some((entry) => entry.status !== 'completed');
  }

  /**
   * Leaves a stopped resumable unit `running` in the ledger with its owner released (no live
   * process), so the next recovery — this home's next start, or another live process — takes it
   * over and runs it again. Nothing is published: the chat gets one completion, from that run.
   */
  async #suspend(record: UnitRecord): Promise<void> {
    record.finalized = true;
    record.status = 'suspended';
    const { delegationId } = record.unit;
    try {
      // Partial results of this run are stale: the next run starts over.
      if (await this.#release(delegationId)) {
        await removeCheckpoints(this.home, delegationId);
        this.#emit({ type: 'suspended', delegationId });
      }
    } finally {
      this.#remove(delegationId);
    }
  }

  /**
   * Lets go of a row this process owns (owner `RELEASED_DELEGATION_OWNER`; `task` replaces its
   * record when given): true when released. On failure the row stays ours — once this process has
   * exited, recovery finds its owner dead — and a warning says so.
   */
  async #release(delegationId: string, task?: DelegationTaskRecord): Promise<boolean> {
    try {
      return await this.store.transferDelegationOwner({
        delegationId,
        from: currentProcessIdentity(),
        to: RELEASED_DELEGATION_OWNER,
        ...(task ? { task } : {}),
      });
    } catch (failure) {
      this.#emit({
        type: 'warning',
        message: `delegation ${delegationId}: not released on shutdown (${(failure as Error).message})`,
      });
      return false;
    }
  }

  /** Records a unit's terminal result once: checkpoint file, ledger (CAS on owner), queue. */
  async #finalize(record: UnitRecord, outcome: DelegationResultRecord): Promise<void> {
    if (record.finalized) return;
    record.finalized = true;
    record.status = 'finalizing';
    const { delegationId } = record.unit;
    const error = outcome.error ?? null;
    try {
      try {
        await writeTerminalCheckpoint(this.home, {
          delegation_id: delegationId,
          owner: currentProcessIdentity(),
          status: outcome.status,
          result: outcome,
          error,
        });
        this.#emit({ type: 'checkpointed', delegationId, status: outcome.status });
      } catch (failure) {
        this.#emit({
          type: 'warning',
          message: `delegation ${delegationId}: terminal checkpoint not written (${(failure as Error).message})`,
        });
      }
      let owned: boolean | undefined;
      for (let attempt = 0; owned === undefined; attempt += 1) {
        try {
          owned = await this.store.recordDelegationTerminal({
            delegationId,
            status: outcome.status,
            result: outcome,
            error,
          });
        } catch (failure) {
          this.#emit({
            type: 'warning',
            message: `delegation ${delegationId}: terminal result not recorded yet (${(failure as Error).message})`,
          });
          // Closed store or a long outage: the checkpoint stays for the next start's recovery.
          if (this.#closed || attempt >= 5) return;
          await sleep(Math.min(5000, 250 * 2 ** attempt));
        }
      }
      this.#emit({ type: 'recorded', delegationId, owned });
      if (owned) {
        const event = completionEventOf(record, outcome, this.#stall.graceMs);
        this.queue.push(event);
        this.#emit({ type: 'published', event });
      }
      await removeCheckpoints(this.home, delegationId);
    } finally {
      this.#remove(delegationId);
    }
  }

  #ensureMonitor(): void {
    if (this.#monitor) return;
    this.#monitor = setInterval(() => this.checkStalls(), this.#stall.checkIntervalMs);
    this.#monitor.unref();
  }

  #settleIdle(): void {
    if (this.#records.size > 0) return;
    if (this.#monitor) clearInterval(this.#monitor);
    this.#monitor = undefined;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * One pass of the stall monitor (runs on its own timer; callable for tests). A unit whose
   * progress (API calls, current tool, last activity) has not moved for the idle or in-tool
   * threshold becomes `stalling` and is interrupted; one that has not returned a grace period
   * later is finalised `stalled` with its metadata. Streaming work moves the token and never
   * stalls; a unit that returns in the grace period keeps its own result.
   */
  checkStalls(nowMs = performance.now()): void {
    for (const record of this.#records.values()) {
      const step = advanceStall(record, nowMs, this.#stall);
      const { delegationId } = record.unit;
      if (step === 'stalling' && record.stall) {
        this.#emit({
          type: 'stalling',
          delegationId,
          quietSeconds: record.stall.quietSeconds,
          phase: record.stall.phase,
        });
        record.controller.abort('stalled');
      } else if (step === 'stalled') {
        this.#emit({ type: 'stalled', delegationId });
        void this.#finalize(record, stalledOutcome(record, nowMs, this.#stall.graceMs));
      }
    }
  }

  /**
   * The units this registry holds — running, or `queued` for a free slot — optionally of one
   * conversation (by session key or origin session).
   */
  list(filter: { sessionKey?: string; originSessionId?: string } = {}): AsyncDelegationListing[] {
    const nowMs = performance.now();
    return [...this.#records.values()]
      .filter((record) => matchesOrigin(record.unit.origin, filter))
      .map((record) => listingOf(record, nowMs));
  }

  /**
   * Interrupts every running unit (`/stop`, shutdown). Each still publishes its completion — except
   * a resumable unit stopped with `SHUTDOWN_INTERRUPT_REASON` (what `close()` uses), which is left
   * for the next start to run again.
   */
  interruptAll(reason = 'interrupted'): number {
    let count = 0;
    for (const record of this.#records.values()) {
      if (record.finalized || record.controller.signal.aborted) continue;
      record.controller.abort(reason);
      count += 1;
    }
    return count;
  }

  /** Interrupts the units of one conversation (session close or reset). */
  interruptForSession(
    filter: { sessionKey?: string; originSessionId?: string },
    reason = 'interrupted',
  ): number {
    if (filter.sessionKey === undefined && filter.originSessionId === undefined) return 0;
    let count = 0;
    for (const record of this.#records.values()) {
      if (record.finalized || record.controller.signal.aborted) continue;
      if (!matchesOrigin(record.unit.origin, filter)) continue;
      record.controller.abort(reason);
      count += 1;
    }
    return count;
  }

  /** Resolves once no unit is running or waiting for a slot. */
  idle(): Promise<void> {
    if (this.#records.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** @internal Completion delivery marks what it is delivering so recovery does not re-enqueue it. */
  markDelivering(delegationId: string, delivering: boolean): void {
    if (delivering) this.#delivering.add(delegationId);
    else this.#delivering.delete(delegationId);
  }

  /**
   * Startup recovery (idempotent; call it again to pick up completions other processes owe):
   * gives back delivery claims held by dead processes, records terminal results that dead
   * owners had checkpointed but not stored, lets the store stamp the remaining dead owners'
   * rows `unknown` (with the partial per-child results they checkpointed), and re-enqueues
   * every owed completion with `restored: true`. Before that, with a `resume` option, it takes
   * over the resumable units stopped owners left running (compare-and-swap on the owner, so one
   * process of several gets each) and runs them again.
   */
  async recover(): Promise<DelegationRecoveryReport> {
    const releasedClaims = await releaseDeadClaims(this.store, this.home);
    const checkpointed = await applyDeadCheckpoints({
      store: this.store,
      home: this.home,
      holds: (delegationId) => this.#records.has(delegationId),
      willResume: (row) => this.#resumer?.resumableTask(row, Date.now() / 1000) !== undefined,
    });
    const resumed = (await this.#resumer?.resumeStopped()) ?? [];
    // A registry shutting down settles nothing of others: a resumable row it could not take over
    // (or gave back) must stay `running` for the next start, not be stamped `unknown` here.
    const recovery = this.#closing
      ? { orphaned: [], restored: [], dropped: [] }
      : await this.store.recoverDelegations();
    await this.store.pruneDelegations().catch(() => 0);
    const restored: string[] = [];
    for (const row of recovery.restored) {
      const id = row.delegationId;
      if (this.#records.has(id) || this.#delivering.has(id) || this.queue.has(id)) continue;
      this.queue.push({ ...eventFromLedgerRow(row), restored: true });
      restored.push(id);
    }
    const report: DelegationRecoveryReport = {
      orphaned: recovery.orphaned,
      dropped: recovery.dropped,
      restored,
      checkpointed,
      releasedClaims,
      resumed,
    };
    this.#emit({ type: 'recovered', report });
    return report;
  }

  /**
   * Hands a taken-over row that was not run here back as it was (owner released, resume count
   * not spent), for the next recovery to take over.
   */
  async #giveBack(delegationId: string, task: DelegationTaskRecord): Promise<void> {
    if (await this.#release(delegationId, task)) this.#emit({ type: 'suspended', delegationId });
  }

  /**
   * A unit taken over and built again: it counts against the capacity like a dispatch, so it
   * waits for a free slot (after those that already wait), holding its row so that no other
   * process takes it and nothing stamps it.
   */
  #adopt(input: Parameters<ResumeHost['adopt']>[0]): void {
    const { delegationId } = input.unit;
    const record = newUnitRecord(input.unit, input.dispatchedAt, input.scope);
    record.started = false;
    record.status = 'queued';
    record.unrunTask = input.unrunTask;
    this.#records.set(delegationId, record);
    this.#ensureMonitor();
    this.#startWaiting();
    if (record.started) return;
    record.controller.signal.addEventListener('abort', () => void this.#stopWaiting(record), {
      once: true,
    });
    this.#emit({ type: 'queued', delegationId });
  }

  /** Records and publishes the result of a unit that never ran here. */
  async #finalizeUnrun(input: Parameters<ResumeHost['finalizeUnrun']>[0]): Promise<void> {
    const record = newUnitRecord(input.unit, input.dispatchedAt, input.scope);
    this.#records.set(input.unit.delegationId, record);
    await this.#finalize(record, input.outcome);
  }

  /**
   * Shutdown: interrupts every unit, waits up to `timeoutMs` for them to publish (interrupted
   * children still report), then stops the monitor. A resumable unit is suspended instead (left
   * `running`, owner released) and the next start runs it again; other units still running stay
   * `running` in the ledger and are recovered as `unknown` by the next start. A takeover of
   * `recover()` still in flight is waited for (within the same `timeoutMs`): it gives its row back
   * unrun, with the resume not spent, before the caller closes the store.
   */
  async close(timeoutMs = 5000): Promise<void> {
    this.#closing = true;
    this.interruptAll(SHUTDOWN_INTERRUPT_REASON);
    // A recovery taking over units right now gives them back (it sees `#closing`) while the store
    // is still open; only then is nothing of this registry left to settle but running units.
    const resuming = this.#resumer?.busy === true;
    const settled = (async () => {
      if (resuming) await this.#resumer?.settled();
      if (this.#records.size > 0) await this.idle();
    })();
    if (resuming || this.#records.size > 0) await Promise.race([settled, sleep(timeoutMs)]);
    this.#closed = true;
    if (this.#monitor) clearInterval(this.#monitor);
    this.#monitor = undefined;
  }
}

/** Creates the registry of one store (see `AsyncDelegationRegistry`). */
export function createDelegationRegistry(
  options: AsyncDelegationRegistryOptions,
): AsyncDelegationRegistry {
  return new AsyncDelegationRegistry(options);
}
