import { httpErrors } from '../http/errors.js';

export type TurnKind = 'chat' | 'api' | 'run' | 'delegation' | 'platform';

export interface ActiveTurn {
  readonly id: number;
  readonly kind: TurnKind;
  readonly profile: string;
  /** The lineage root of the session the turn runs on (any id of the conversation maps to it). */
  readonly conversationId: string;
  readonly startedAt: number;
  readonly controller: AbortController;
}

/**
 * Every model turn running in this process. Admission closes when the gateway starts draining
 * (new turns get 503 `gateway_draining`); the stop sequence waits for the running ones within the
 * drain budget and then interrupts them.
 */
export class ActiveTurns {
  readonly #turns = new Map<number, ActiveTurn>();
  readonly #idleWaiters = new Set<() => void>();
  #nextId = 1;
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  get size(): number {
    return this.#turns.size;
  }

  /** Refuses new turns from now on. */
  startDraining(): void {
    this.#draining = true;
  }

  /** Throws 503 while draining. */
  assertAdmitting(): void {
    if (this.#draining) throw httpErrors.draining();
  }

  isRunning(profile: string, conversationId: string): boolean {
    for (const turn of this.#turns.values()) {
      if (turn.profile === profile && turn.conversationId === conversationId) return true;
    }
    return false;
  }

  /** Registers a turn; the returned `end` must be called when it settles. */
  begin(input: {
    kind: TurnKind;
    profile: string;
    conversationId: string;
    signal?: AbortSignal | undefined;
  }): { turn: ActiveTurn; end: () => void } {
    this.assertAdmitting();
    const controller = new AbortController();
    const onAbort = () => controller.abort(input.signal?.reason);
    if (input.signal?.aborted) controller.abort(input.signal.reason);
    else input.signal?.addEventListener('abort', onAbort, { once: true });
    const turn: ActiveTurn = {
      id: this.#nextId++,
      kind: input.kind,
      profile: input.profile,
      conversationId: input.conversationId,
      startedAt: performance.now(),
      controller,
    };
    this.#turns.set(turn.id, turn);
    let ended = false;
    return {
      turn,
      end: () => {
        if (ended) return;
        ended = true;
        input.signal?.removeEventListener('abort', onAbort);
        this.#turns.delete(turn.id);
        if (this.#turns.size === 0) for (const wake of this.#idleWaiters) wake();
      },
    };
  }

  /** Resolves true once no turn runs, false when `timeoutMs` passes first. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.#turns.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#idleWaiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#idleWaiters.delete(wake);
        resolve(this.#turns.size === 0);
      }, timeoutMs);
      timer.unref();
      this.#idleWaiters.add(wake);
    });
  }

  /** Interrupts every running turn (their transcripts stay valid: the agent stores what it has). */
  interruptAll(reason: string): number {
    for (const turn of this.#turns.values()) turn.controller.abort(new Error(reason));
    return this.#turns.size;
  }

  /** Interrupts the turns of one conversation; returns how many. */
  interrupt(profile: string, conversationId: string, reason: string): number {
    let count = 0;
    for (const turn of this.#turns.values()) {
      if (turn.profile === profile && turn.conversationId === conversationId) {
        turn.controller.abort(new Error(reason));
        count += 1;
      }
    }
    return count;
  }

  byKind(): Record<TurnKind, number> {
    const counts: Record<TurnKind, number> = {
      chat: 0,
      api: 0,
      run: 0,
      delegation: 0,
      platform: 0,
    };
    for (const turn of this.#turns.values()) counts[turn.kind] += 1;
    return counts;
  }
}
