import { describe, expect, it } from 'vitest';
import { RECONNECT_ATTENTION_AFTER_S } from './constants.js';
import { FailedPlatformQueue, reconnectBackoffS } from './failed-platform-queue.js';
import { createManualClock } from './test-clock.js';

describe('FailedPlatformQueue', () => {
  it('backs off 30, 60, 120, 240, then 300 s forever', () => {
    expect([1, 2, 3, 4, 5, 6, 26, 1000].map(reconnectBackoffS)).toEqual([
      30, 60, 120, 240, 300, 300, 300, 300,
    ]);
  });

  it('does not reset attempts or next retry when an already-queued platform is queued again', () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue<{ token: string }>({ clock });
    expect(queue.enqueue('telegram', { token: 'a' }, { attempts: 1, delayS: 30 })).toBe(true);
    queue.recordFailure('telegram', 4, 'connect refused');
    const before = { ...queue.get('telegram') };
    clock.advance(5000);
    expect(queue.enqueue('telegram', { token: 'b' })).toBe(false);
    expect(queue.get('telegram')).toMatchObject({
      attempts: before.attempts,
      nextRetry: before.nextRetry,
      config: { token: 'a' },
    });
  });

  it('keeps retrying after many failures: still queued, not paused, next retry in the future', () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue({ clock });
    queue.enqueue('slack', {}, { attempts: 25 });
    queue.recordFailure('slack', 26, 'still down');
    const entry = queue.get('slack');
    expect(entry?.attempts).toBe(26);
    expect(entry?.paused).toBe(false);
    expect(entry?.pauseReason).toBeUndefined();
    expect(entry?.nextRetry).toBe(clock.now() + 300_000);
    expect(queue.isDue('slack')).toBe(false);
    clock.advance(300_000);
    expect(queue.isDue('slack')).toBe(true);
  });

  it('flags NEEDS_ATTENTION once after 7,200 s of continuous failure', () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue({ clock });
    queue.enqueue('discord', {});
    clock.advance((RECONNECT_ATTENTION_AFTER_S - 1) * 1000);
    expect(queue.checkAttention('discord')).toBeUndefined();
    clock.advance(1000);
    expect(queue.checkAttention('discord')).toBe(2);
    expect(queue.get('discord')?.attentionFlagged).toBe(true);
    clock.advance(3600_000);
    expect(queue.checkAttention('discord')).toBeUndefined();
  });

  it('stamps a missing queuedAt without flagging, and never flags when the threshold is ≤ 0', () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue({ clock });
    clock.advance(10_000_000);
    queue.enqueue('matrix', {}, { stampQueuedAt: false });
    expect(queue.checkAttention('matrix')).toBeUndefined();
    expect(queue.get('matrix')?.queuedAt).toBe(clock.now());
    const disabled = new FailedPlatformQueue({ clock, attentionAfterS: 0 });
    disabled.enqueue('matrix', {});
    clock.advance(100_000_000);
    expect(disabled.checkAttention('matrix')).toBeUndefined();
  });

  it('pauses idempotently keeping the first reason, and resume resets attempts and due time', () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue({ clock });
    queue.enqueue('whatsapp', {}, { attempts: 3, delayS: 300 });
    expect(queue.pause('whatsapp', 'maintenance')).toBe(true);
    queue.pause('whatsapp', 'other');
    expect(queue.get('whatsapp')).toMatchObject({ paused: true, pauseReason: 'maintenance' });
    clock.advance(600_000);
    expect(queue.isDue('whatsapp')).toBe(false);
    queue.resume('whatsapp');
    expect(queue.get('whatsapp')).toMatchObject({ paused: false, attempts: 0 });
    expect(queue.isDue('whatsapp')).toBe(true);
  });
});
