import { describe, expect, it } from 'vitest';
import {
  MAX_SLOW_WATCHER_RESPAWNS,
  messages,
  RECONNECT_WATCHER_SLOW_RETRY_S,
  RECONNECT_WATCHER_SPAWN_CEILING,
} from './constants.js';
import { createReconnectWatcherKeeper } from './reconnect-watcher-keeper.js';
import { createManualClock, createRecordingLogger, until } from './test-clock.js';

const crash = async () => {
  throw new Error('watcher bug');
};

async function settle(turns = 200): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

describe('reconnect watcher keeper', () => {
  it('a silent crash loop stops at 42 watcher lifetimes with one loud error naming the platforms', async () => {
    expect(RECONNECT_WATCHER_SPAWN_CEILING).toBe(42);
    const clock = createManualClock();
    const logger = createRecordingLogger();
    const keeper = createReconnectWatcherKeeper({
      watcher: crash,
      queuedPlatforms: () => ['telegram', 'slack'],
      isRunning: () => true,
      clock,
      logger,
    });
    keeper.start();
    await until(() => keeper.abandoned);
    await settle();
    expect(keeper.spawnCount).toBe(RECONNECT_WATCHER_SPAWN_CEILING);
    const slowSleeps = clock.sleeps.filter((ms) => ms === RECONNECT_WATCHER_SLOW_RETRY_S * 1000);
    expect(slowSleeps).toHaveLength(MAX_SLOW_WATCHER_RESPAWNS);
    const abandonedLines = logger.lines.filter(
      (line) =>
        line.message ===
        messages.watcherAbandoned(MAX_SLOW_WATCHER_RESPAWNS, ['telegram', 'slack']),
    );
    expect(abandonedLines).toHaveLength(1);
    expect(
      logger.lines.filter((line) => line.message.startsWith('Reconnect watcher still down')),
    ).toHaveLength(6);
  });

  it('stays down with an empty queue, and the next enqueue spawns a fresh watcher', async () => {
    const clock = createManualClock();
    const logger = createRecordingLogger();
    const queued: string[] = [];
    const keeper = createReconnectWatcherKeeper({
      watcher: crash,
      queuedPlatforms: () => queued,
      isRunning: () => true,
      clock,
      logger,
    });
    keeper.start();
    await until(() => keeper.task?.state === 'gave-up');
    await settle();
    expect(keeper.spawnCount).toBe(6);
    expect(logger.lines.at(-1)?.message).toBe(messages.watcherExhaustedEmpty);
    queued.push('discord');
    expect(keeper.ensureRunning()).toBe(true);
    expect(keeper.spawnCount).toBe(7);
    expect(logger.lines.some((line) => line.message === messages.watcherDead(true))).toBe(true);
    keeper.stop();
  });

  it('the slow tier stands down when the queue drains while it waits', async () => {
    const clock = createManualClock();
    const logger = createRecordingLogger();
    const queued = ['telegram'];
    clock.onSleep = (ms) => {
      if (ms === RECONNECT_WATCHER_SLOW_RETRY_S * 1000) queued.length = 0;
    };
    const keeper = createReconnectWatcherKeeper({
      watcher: crash,
      queuedPlatforms: () => queued,
      isRunning: () => true,
      clock,
      logger,
    });
    keeper.start();
    await until(() => clock.sleeps.includes(RECONNECT_WATCHER_SLOW_RETRY_S * 1000));
    await settle();
    expect(keeper.spawnCount).toBe(6);
    expect(keeper.abandoned).toBe(false);
  });

  it('the slow tier ends when a respawned watcher returns on its own', async () => {
    const clock = createManualClock();
    let lifetimes = 0;
    const keeper = createReconnectWatcherKeeper({
      watcher: async () => {
        lifetimes += 1;
        if (lifetimes <= 6) throw new Error('watcher bug');
      },
      queuedPlatforms: () => ['telegram'],
      isRunning: () => true,
      clock,
      logger: createRecordingLogger(),
    });
    keeper.start();
    await until(() => keeper.task?.state === 'returned');
    await settle();
    expect(lifetimes).toBe(7);
    expect(clock.sleeps.filter((ms) => ms === RECONNECT_WATCHER_SLOW_RETRY_S * 1000)).toHaveLength(
      1,
    );
  });

  it('ensureRunning is a no-op while a watcher lives or a supervised respawn is pending', async () => {
    const clock = createManualClock();
    let release: () => void = () => undefined;
    const keeper = createReconnectWatcherKeeper({
      watcher: () => new Promise<void>((resolve) => (release = resolve)),
      queuedPlatforms: () => ['telegram'],
      isRunning: () => true,
      clock,
      logger: createRecordingLogger(),
    });
    const first = keeper.start();
    expect(keeper.ensureRunning()).toBe(false);
    expect(keeper.task).toBe(first);
    release();
    await first?.finished;
    // The watcher returned cleanly: it is dead, so ensureRunning respawns it.
    expect(keeper.ensureRunning()).toBe(true);
    expect(keeper.task).not.toBe(first);
    keeper.stop();
  });

  it('does nothing once the gateway has stopped running', async () => {
    const clock = createManualClock();
    let running = true;
    const keeper = createReconnectWatcherKeeper({
      watcher: crash,
      queuedPlatforms: () => ['telegram'],
      isRunning: () => running,
      clock,
      logger: createRecordingLogger(),
    });
    keeper.start();
    running = false;
    await settle();
    expect(keeper.spawnCount).toBe(1);
    expect(keeper.ensureRunning()).toBe(false);
  });
});
