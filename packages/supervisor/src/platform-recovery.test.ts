import { describe, expect, it } from 'vitest';
import { messages } from './constants.js';
import { FailedPlatformQueue } from './failed-platform-queue.js';
import {
  createPlatformRecovery,
  type OnAllAdaptersDown,
  type PlatformLostEvent,
} from './platform-recovery.js';
import { createManualClock, createRecordingLogger } from './test-clock.js';

function setup(onAllAdaptersDown?: OnAllAdaptersDown) {
  const clock = createManualClock();
  const logger = createRecordingLogger();
  const queue = new FailedPlatformQueue<{ token: string }>({ clock });
  let ensured = 0;
  const lost: PlatformLostEvent[] = [];
  const recovery = createPlatformRecovery({
    queue,
    logger,
    ensureWatcherRunning: () => {
      ensured += 1;
    },
    onPlatformLost: (event) => lost.push(event),
    ...(onAllAdaptersDown === undefined ? {} : { onAllAdaptersDown }),
  });
  return { queue, logger, recovery, lost, ensured: () => ensured };
}

describe('platform recovery', () => {
  it('queues a retryable fatal platform, logs it and makes sure the watcher runs', () => {
    const { queue, logger, recovery, ensured } = setup();
    expect(
      recovery.queueRetryableFatal({
        platform: 'telegram',
        retryable: true,
        config: { token: 't' },
      }),
    ).toBe(true);
    expect(queue.get('telegram')).toMatchObject({ attempts: 0 });
    expect(logger.lines.map((line) => line.message)).toEqual([messages.platformQueued('telegram')]);
    expect(ensured()).toBe(1);
  });

  it('neither queues nor wakes the watcher for a non-retryable error or a missing config', () => {
    const { queue, recovery, ensured } = setup();
    expect(
      recovery.queueRetryableFatal({ platform: 'slack', retryable: false, config: { token: 't' } }),
    ).toBe(false);
    expect(
      recovery.queueRetryableFatal({ platform: 'slack', retryable: true, config: undefined }),
    ).toBe(false);
    expect(queue.size).toBe(0);
    expect(ensured()).toBe(0);
  });

  it('an already-queued platform going fatal again wakes the watcher but keeps its schedule', () => {
    const { queue, recovery, ensured } = setup();
    queue.enqueue('discord', { token: 'd' }, { attempts: 4, delayS: 240 });
    const nextRetry = queue.get('discord')?.nextRetry;
    expect(
      recovery.queueRetryableFatal({
        platform: 'discord',
        retryable: true,
        config: { token: 'x' },
      }),
    ).toBe(false);
    expect(ensured()).toBe(1);
    expect(queue.get('discord')).toMatchObject({ attempts: 4, nextRetry, config: { token: 'd' } });
  });

  it('hands a stranded retryable platform to the owner exactly once, with the exit reason', () => {
    const { logger, recovery, lost } = setup();
    expect(
      recovery.checkStranded({
        platform: 'feishu',
        retryable: true,
        connected: false,
        shuttingDown: false,
      }),
    ).toBe(true);
    expect(lost).toEqual([
      { platform: 'feishu', exitReason: 'feishu adapter lost without reconnection queue' },
    ]);
    expect(logger.lines.at(-1)?.message).toBe(messages.platformLost('feishu'));
  });

  it('with stay_alive keeps the gateway up and the watcher running instead', () => {
    const { recovery, lost, ensured, logger } = setup('stay_alive');
    expect(
      recovery.checkStranded({
        platform: 'feishu',
        retryable: true,
        connected: false,
        shuttingDown: false,
      }),
    ).toBe(true);
    expect(lost).toEqual([]);
    expect(ensured()).toBe(1);
    expect(logger.lines.at(-1)).toEqual({
      level: 'warn',
      message: messages.platformLostStayingAlive('feishu'),
    });
  });

  it('is not stranded when queued, connected, non-retryable or shutting down', () => {
    const { queue, recovery, lost } = setup();
    queue.enqueue('queued', { token: 'q' });
    const base = { retryable: true, connected: false, shuttingDown: false };
    expect(recovery.checkStranded({ ...base, platform: 'queued' })).toBe(false);
    expect(recovery.checkStranded({ ...base, platform: 'a', connected: true })).toBe(false);
    expect(recovery.checkStranded({ ...base, platform: 'b', retryable: false })).toBe(false);
    expect(recovery.checkStranded({ ...base, platform: 'c', shuttingDown: true })).toBe(false);
    expect(lost).toEqual([]);
  });
});
