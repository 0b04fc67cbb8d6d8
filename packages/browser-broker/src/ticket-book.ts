import { randomBytes } from 'node:crypto';
import { type MonotonicClock, monotonicSeconds } from './clock.js';
import {
  DEFAULT_TICKET_TTL_SECONDS,
  TICKET_CONSUMED_MESSAGE,
  TICKET_EXPIRED_MESSAGE,
  TICKET_UNKNOWN_MESSAGE,
} from './constants.js';
import { ControllerTicketInvalid } from './errors.js';
import type { ControllerScope } from './scope.js';

export interface Ticket {
  /** 43 URL-safe characters (32 random bytes, base64url without padding). */
  readonly value: string;
  /** Expiry in seconds of the book's monotonic clock. */
  readonly expiresAt: number;
}

interface TicketRecord {
  readonly scope: ControllerScope;
  readonly expiresAt: number;
  consumed: boolean;
}

/**
 * Single-use registration tickets. A consumed ticket is kept until a later mint prunes it after
 * expiry, so a replay inside the TTL reports "ticket already consumed" and later "unknown ticket".
 */
export class TicketBook {
  readonly ttlSeconds: number;
  readonly #clock: MonotonicClock;
  readonly #tickets = new Map<string, TicketRecord>();

  constructor(options: { ttlSeconds?: number; clock?: MonotonicClock } = {}) {
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TICKET_TTL_SECONDS;
    this.#clock = options.clock ?? monotonicSeconds;
  }

  get size(): number {
    return this.#tickets.size;
  }

  mint(scope: ControllerScope): Ticket {
    const now = this.#clock();
    for (const [value, record] of this.#tickets) {
      if (record.expiresAt <= now) this.#tickets.delete(value);
    }
    const value = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlSeconds;
    this.#tickets.set(value, { scope, expiresAt, consumed: false });
    return { value, expiresAt };
  }

  /** Marks the ticket used and returns its scope; exactly at expiry it is still valid. */
  consume(value: string): ControllerScope {
    const record = this.#tickets.get(value);
    if (!record) throw new ControllerTicketInvalid(TICKET_UNKNOWN_MESSAGE);
    if (record.consumed) throw new ControllerTicketInvalid(TICKET_CONSUMED_MESSAGE);
    if (this.#clock() > record.expiresAt) throw new ControllerTicketInvalid(TICKET_EXPIRED_MESSAGE);
    record.consumed = true;
    return record.scope;
  }

  clear(): void {
    this.#tickets.clear();
  }
}
