import { describe, expect, it } from 'vitest';
import { RestoreGate, waitBounded } from './restore-gate.js';

describe('restore gate', () => {
  it('holds work while closed, replays it in arrival order once, and lets later work through at once', () => {
    const order: string[] = [];
    const queued: string[] = [];
    const gate = new RestoreGate({ onQueued: (label) => queued.push(label) });
    gate.submit('a', () => order.push('a'));
    gate.submit('b', () => order.push('b'));
    expect(order).toEqual([]);
    expect(gate.waiting).toBe(2);
    expect(gate.open()).toBe(2);
    expect(order).toEqual(['a', 'b']);
    expect(gate.open()).toBe(0);
    gate.submit('c', () => order.push('c'));
    expect(order).toEqual(['a', 'b', 'c']);
    expect(queued).toEqual(['a', 'b']);
  });
});

describe('waitBounded', () => {
  it('returns when every task settled (failures included)', async () => {
    expect(await waitBounded([Promise.resolve(1), Promise.reject(new Error('x'))], 5)).toBe(0);
  });

  it('gives up after the timeout without cancelling: the task still finishes afterwards', async () => {
    let finished = false;
    const slow = new Promise<void>((resolve) =>
      setTimeout(() => {
        finished = true;
        resolve();
      }, 150),
    );
    expect(await waitBounded([slow, Promise.resolve()], 0.03)).toBe(1);
    expect(finished).toBe(false);
    await slow;
    expect(finished).toBe(true);
  });

  it('waits for everything when the timeout is 0 or less', async () => {
    let finished = false;
    const slow = new Promise<void>((resolve) =>
      setTimeout(() => {
        finished = true;
        resolve();
      }, 50),
    );
    expect(await waitBounded([slow], 0)).toBe(0);
    expect(finished).toBe(true);
  });
});
