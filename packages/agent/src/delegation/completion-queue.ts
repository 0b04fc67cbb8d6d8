import type { AsyncDelegationEvent } from './completion-event.js';

/**
 * The process's queue of finished delegations waiting for their conversation. Surfaces do not
 * drain it themselves: `createCompletionDelivery` takes what a session owns, between turns.
 * An event leaves the queue only when a delivery takes it; one nobody here owns stays (the
 * ledger also keeps it, so a restart still delivers it).
 */
export class CompletionQueue {
  readonly #events: AsyncDelegationEvent[] = [];
  readonly #listeners = new Set<(event: AsyncDelegationEvent) => void>();

  /** Adds an event (one per delegation id: a second push of the same id is ignored). */
  push(event: AsyncDelegationEvent): boolean {
    if (this.has(event.delegation_id)) return false;
    this.#events.push(event);
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure must not stop the others or the producer.
      }
    }
    return true;
  }

  has(delegationId: string): boolean {
    return this.#events.some((event) => event.delegation_id === delegationId);
  }

  /** Removes and returns the events `select` accepts, oldest first. */
  take(select: (event: AsyncDelegationEvent) => boolean): AsyncDelegationEvent[] {
    const taken: AsyncDelegationEvent[] = [];
    for (let index = 0; index < this.#events.length; ) {
      const event = this.#events[index] as AsyncDelegationEvent;
      if (select(event)) {
        taken.push(event);
        this.#events.splice(index, 1);
      } else index += 1;
    }
    return taken;
  }

  /** The waiting events, oldest first (a copy). */
  peek(): readonly AsyncDelegationEvent[] {
    return [...this.#events];
  }

  get size(): number {
    return this.#events.length;
  }

  /** Called for every pushed event; returns the unsubscribe function. */
  subscribe(listener: (event: AsyncDelegationEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }
}
