import { describe, expect, it } from 'vitest';
import {
  TICKET_CONSUMED_MESSAGE,
  TICKET_EXPIRED_MESSAGE,
  TICKET_UNKNOWN_MESSAGE,
} from './constants.js';
import { ControllerTicketInvalid } from './errors.js';
import { createScope } from './scope.js';
import { TicketBook } from './ticket-book.js';

function manualClock(start = 100) {
  let now = start;
  return { read: () => now, advance: (seconds: number) => (now += seconds) };
}

const scope = createScope({ principalId: 'p', sessionId: 's', capabilities: ['controller.noop'] });

describe('TicketBook', () => {
  it('mints 43-character URL-safe values that expire ttl seconds from now', () => {
    const clock = manualClock();
    const book = new TicketBook({ ttlSeconds: 30, clock: clock.read });
    const ticket = book.mint(scope);
    expect(ticket.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ticket.expiresAt).toBe(130);
    expect(book.mint(scope).value).not.toBe(ticket.value);
  });

  it('consumes a ticket once and reports a replay as already consumed', () => {
    const book = new TicketBook({ clock: manualClock().read });
    const ticket = book.mint(scope);
    expect(book.consume(ticket.value)).toBe(scope);
    expect(() => book.consume(ticket.value)).toThrow(TICKET_CONSUMED_MESSAGE);
  });

  it('refuses an unknown ticket', () => {
    const book = new TicketBook();
    let caught: unknown;
    try {
      book.consume('nope');
    } catch (error) {
      caught = error;
    }
    expect(ControllerTicketInvalid.isInstance(caught)).toBe(true);
    expect((caught as Error).message).toBe(TICKET_UNKNOWN_MESSAGE);
  });

  it('accepts a ticket exactly at expiry and refuses it just after', () => {
    const clock = manualClock();
    const book = new TicketBook({ ttlSeconds: 30, clock: clock.read });
    const onTime = book.mint(scope);
    const late = book.mint(scope);
    clock.advance(30);
    expect(book.consume(onTime.value)).toBe(scope);
    clock.advance(0.001);
    expect(() => book.consume(late.value)).toThrow(TICKET_EXPIRED_MESSAGE);
  });

  it('prunes expired and consumed tickets on the next mint, which then read as unknown', () => {
    const clock = manualClock();
    const book = new TicketBook({ ttlSeconds: 30, clock: clock.read });
    const used = book.mint(scope);
    book.consume(used.value);
    clock.advance(31);
    book.mint(scope);
    expect(book.size).toBe(1);
    expect(() => book.consume(used.value)).toThrow(TICKET_UNKNOWN_MESSAGE);
  });
});
