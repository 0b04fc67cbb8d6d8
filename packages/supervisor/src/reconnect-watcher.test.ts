import { describe, expect, it } from 'vitest';
import { messages, RECONNECT_ATTENTION_AFTER_S } from './constants.js';
import { FailedPlatformQueue } from './failed-platform-queue.js';
import { createReconnectWatcher, type ReconnectResult } from './reconnect-watcher.js';
import { createManualClock, createRecordingLogger } from './test-clock.js';

function setup(results: Record<string, () => ReconnectResult>, rounds: number) {
  const clock = createManualClock();
  const logger = createRecordingLogger();
  const queue = new FailedPlatformQueue<{ name: string }>({ clock });
  const calls: { platform: string; attempt: number }[] = [];
  const attention: { platform: string; hours: number }[] = [];
  let passes = 0;
  clock.onSleep = (ms) => {
    // Each pass ends with the pass gap; stop the watcher after `rounds` of them.
    if (ms === 10_000 && calls.length > 0) passes += 1;
  };
  const watcher = createReconnectWatcher({
    queue,
    clock,
    logger,
    isRunning: () => passes < rounds,
    onAttention: (entry, hours) => attention.push({ platform: entry.platform, hours }),
    reconnect: async (entry, attempt) => {
      calls.push({ platform: entry.platform, attempt: attempt.attempt });
      const result = results[entry.platform];
      if (result === undefined) throw new Error(`no script for ${entry.platform}`);
      return result();
    },
  });
  return { clock, logger, queue, calls, attention, watcher };
}

describe('reconnect watcher', () => {
  it('installs a platform that reconnects and drops one that cannot be reconnected', async () => {
    const { queue, calls, watcher, logger } = setup(
      {
        telegram: () => ({ status: 'connected' }),
        matrix: () => ({ status: 'drop', reason: 'no credential' }),
      },
      1,
    );
    queue.enqueue('telegram', { name: 'telegram' });
    queue.enqueue('matrix', { name: 'matrix' });
    await watcher(new AbortController().signal);
    expect(calls).toEqual([
      { platform: 'telegram', attempt: 1 },
      { platform: 'matrix', attempt: 1 },
    ]);
    expect(queue.size).toBe(0);
    expect(logger.lines.map((line) => line.message)).toContain(
      messages.reconnecting('telegram', 1),
    );
  });

  it('backs off a retryable failure or a throw and retries only when due', async () => {
    const { queue, calls, watcher, clock } = setup(
      {
        slack: () => ({ status: 'retry', error: 'rate limited' }),
        discord: () => {
          throw new Error('socket hang up');
        },
      },
      3,
    );
    queue.enqueue('slack', { name: 'slack' });
    queue.enqueue('discord', { name: 'discord' });
    await watcher(new AbortController().signal);
    // Pass gaps are 10 s and the first backoff is 30 s: only the first pass is due.
    expect(calls).toEqual([
      { platform: 'slack', attempt: 1 },
      { platform: 'discord', attempt: 1 },
    ]);
    expect(queue.get('slack')).toMatchObject({ attempts: 1, lastError: 'rate limited' });
    expect(queue.get('discord')).toMatchObject({ attempts: 1, lastError: 'socket hang up' });
    // First attempt after the 10 s initial delay, next one 30 s later.
    expect(queue.get('slack')?.nextRetry).toBe(10_000 + 30_000);
    expect(clock.now()).toBeLessThanOrEqual(40_000);
  });

  it('skips a paused platform', async () => {
    const { queue, calls, watcher } = setup({ whatsapp: () => ({ status: 'connected' }) }, 1);
    queue.enqueue('whatsapp', { name: 'whatsapp' });
    queue.pause('whatsapp', 'manual');
    const controller = new AbortController();
    const run = watcher(controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await run;
    expect(calls).toEqual([]);
    expect(queue.has('whatsapp')).toBe(true);
  });

  it('flags NEEDS_ATTENTION once after continuous failure, and keeps retrying', async () => {
    const { queue, watcher, logger, clock, attention } = setup(
      { signal: () => ({ status: 'retry', error: 'down' }) },
      3,
    );
    queue.enqueue('signal', { name: 'signal' });
    clock.advance(RECONNECT_ATTENTION_AFTER_S * 1000);
    await watcher(new AbortController().signal);
    const warnings = logger.lines.filter((line) => line.message.includes('NEEDS_ATTENTION'));
    expect(warnings.map((line) => line.message)).toEqual([messages.needsAttention('signal', 2, 0)]);
    // Called once over three passes, with the hours failed (2 h plus the 10 s initial delay).
    expect(attention).toEqual([{ platform: 'signal', hours: expect.closeTo(2, 2) }]);
    // A signal only: the platform stays queued and the retry was still made.
    expect(queue.get('signal')).toMatchObject({ attentionFlagged: true, attempts: 1 });
  });

  it('returns cleanly once the gateway stops running', async () => {
    const clock = createManualClock();
    const queue = new FailedPlatformQueue({ clock });
    const watcher = createReconnectWatcher({
      queue,
      clock,
      logger: createRecordingLogger(),
      isRunning: () => clock.now() < 60_000,
      reconnect: async () => ({ status: 'connected' }),
    });
    await expect(watcher(new AbortController().signal)).resolves.toBeUndefined();
  });
});
