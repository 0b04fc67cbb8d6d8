import { randomBytes } from 'node:crypto';

/** Finished runs kept for `GET /v1/runs/:id` (oldest dropped first). */
export const MAX_FINISHED_RUNS = 200;
/** Events a run keeps for replay to late `GET /v1/runs/:id/events` readers. */
export const MAX_RUN_EVENTS = 10_000;

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled';

export interface RunEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface RunRecord {
  readonly id: string;
  readonly profile: string;
  readonly sessionId: string;
  readonly createdAt: number;
  readonly controller: AbortController;
  readonly idempotencyKey: string | undefined;
  status: RunStatus;
  completedAt: number | null;
  output: string | null;
  error: { code: string; message: string } | null;
  usage: Record<string, unknown> | null;
  messages: unknown[];
  /** How the turn ran (the chat stream's `runtime`), or the command that answered; null before. */
  runtime: Record<string, unknown> | null;
  readonly events: RunEvent[];
  /** Events dropped past `MAX_RUN_EVENTS` (deltas only; terminal events are always kept). */
  droppedEvents: number;
  readonly listeners: Set<(event: RunEvent | null) => void>;
}

/**
 * Background runs of `/v1/runs`: each has an id, an abort handle (`/stop`), a replayable event log
 * and a final result. In memory only: a run is a live activity of this process; its transcript is
 * in the session store either way.
 */
export class RunRegistry {
  readonly #runs = new Map<string, RunRecord>();
  readonly #idempotent = new Map<string, string>();
  /** Keys a request is starting a run under: until it answers, others with the key wait. */
  readonly #claims = new Map<string, Promise<void>>();

  create(input: { profile: string; sessionId: string; idempotencyKey?: string }): RunRecord {
    const run: RunRecord = {
      id: `run_${randomBytes(12).toString('hex')}`,
      profile: input.profile,
      sessionId: input.sessionId,
      createdAt: Date.now() / 1000,
      controller: new AbortController(),
      idempotencyKey: input.idempotencyKey,
      status: 'running',
      completedAt: null,
      output: null,
      error: null,
      usage: null,
      messages: [],
      runtime: null,
      events: [],
      droppedEvents: 0,
      listeners: new Set(),
    };
    this.#runs.set(run.id, run);
    if (input.idempotencyKey !== undefined)
      this.#idempotent.set(`${input.profile}\0${input.idempotencyKey}`, run.id);
    return run;
  }

  /**
   * Claims `key` for a request about to start a run, or answers the run the key already
   * started. While one request holds the claim (from here until it answers: its run admitted or
   * refused), others with the same key wait for it, so two simultaneous requests never start two
   * runs. After a refusal (the key released) the next waiter claims it in turn. `release` must be
   * called on every path.
   */
  async claimIdempotencyKey(
    profile: string,
    key: string,
  ): Promise<{ readonly existing: RunRecord } | { readonly release: () => void }> {
    const mapKey = `${profile}\0${key}`;
    for (;;) {
      const pending = this.#claims.get(mapKey);
      if (pending) {
        await pending;
        continue;
      }
      const existing = this.byIdempotencyKey(profile, key);
      if (existing) return { existing };
      let settle = () => {};
      const claim = new Promise<void>((resolve) => {
        settle = resolve;
      });
      this.#claims.set(mapKey, claim);
      return {
        release: () => {
          if (this.#claims.get(mapKey) === claim) this.#claims.delete(mapKey);
          settle();
        },
      };
    }
  }

  /** The run an `Idempotency-Key` already started, if it is still known. */
  byIdempotencyKey(profile: string, key: string): RunRecord | undefined {
    const id = this.#idempotent.get(`${profile}\0${key}`);
    return id === undefined ? undefined : this.get(profile, id);
  }

  /**
   * Frees the run's `Idempotency-Key` (a run refused before its turn started): the next request
   * with that key starts a new run. The run itself stays readable by its id.
   */
  releaseIdempotencyKey(run: RunRecord): void {
    if (run.idempotencyKey === undefined) return;
    const mapKey = `${run.profile}\0${run.idempotencyKey}`;
    if (this.#idempotent.get(mapKey) === run.id) this.#idempotent.delete(mapKey);
  }

  get(profile: string, id: string): RunRecord | undefined {
    const run = this.#runs.get(id);
    return run && run.profile === profile ? run : undefined;
  }

  emit(run: RunRecord, event: string, data: Record<string, unknown>): void {
    const entry: RunEvent = { event, data };
    const terminal = event.startsWith('run.') && event !== 'run.started';
    if (run.events.length < MAX_RUN_EVENTS || terminal) run.events.push(entry);
    else run.droppedEvents += 1;
    for (const listener of run.listeners) listener(entry);
  }

  finish(run: RunRecord, status: Exclude<RunStatus, 'running'>): void {
    run.status = status;
    run.completedAt = Date.now() / 1000;
    for (const listener of run.listeners) listener(null);
    run.listeners.clear();
    this.#prune();
  }

  get running(): number {
    let count = 0;
    for (const run of this.#runs.values()) if (run.status === 'running') count += 1;
    return count;
  }

  #prune(): void {
    const finished = [...this.#runs.values()].filter((run) => run.status !== 'running');
    for (const run of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_RUNS))) {
      this.#runs.delete(run.id);
      // The key may name a newer run by now (this one was refused and the key released).
      this.releaseIdempotencyKey(run);
    }
  }
}
