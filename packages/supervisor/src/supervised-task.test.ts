import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHomeOverride, withHome } from '@hermes/config';
import { spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { MAX_SUPERVISED_RESTARTS, messages, SUPERVISED_HEALTHY_S } from './constants.js';
import { type SupervisedTask, spawnSupervised, supervisedBackoffS } from './supervised-task.js';
import { createManualClock, createRecordingLogger, until } from './test-clock.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('spawnSupervised', () => {
  it('backs off 1, 2, 4, 8, 16 s and gives up after 5 rapid restarts (6 lifetimes)', async () => {
    const clock = createManualClock();
    const logger = createRecordingLogger();
    const spawned: SupervisedTask[] = [];
    const gaveUp: string[] = [];
    let runs = 0;
    spawnSupervised(
      async () => {
        runs += 1;
        throw new Error('boom');
      },
      {
        name: 'crasher',
        clock,
        logger,
        onSpawn: (task) => spawned.push(task),
        onGiveUp: (name) => gaveUp.push(name),
      },
    );
    await until(() => gaveUp.length > 0);
    expect(runs).toBe(1 + MAX_SUPERVISED_RESTARTS);
    expect(clock.sleeps).toEqual([1000, 2000, 4000, 8000, 16000]);
    // onSpawn saw every lifetime, respawns included, and onGiveUp survived five respawns.
    expect(spawned.map((task) => task.attempt)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(gaveUp).toEqual(['crasher']);
    expect(logger.lines.at(-1)?.message).toBe(
      messages.supervisedGaveUp('crasher', 6, SUPERVISED_HEALTHY_S),
    );
    expect(
      logger.lines.filter((line) => line.message.startsWith('Supervised task crasher died: ')),
    ).toHaveLength(6);
  });

  it('computes the reference backoff, capped at 60 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 20].map(supervisedBackoffS)).toEqual([
      1, 2, 4, 8, 16, 32, 60, 60, 60,
    ]);
  });

  it('never restarts a task that returns cleanly', async () => {
    const clock = createManualClock();
    let runs = 0;
    const task = spawnSupervised(
      () => {
        runs += 1;
      },
      { name: 'clean', clock },
    );
    await task.finished;
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(1);
    expect(task.done).toBe(true);
    expect(clock.sleeps).toEqual([]);
  });

  it('calls onSpawn synchronously with the returned task', () => {
    let seen: SupervisedTask | undefined;
    const task = spawnSupervised(() => new Promise<void>(() => undefined), {
      name: 'sync',
      onSpawn: (spawnedTask) => {
        seen = spawnedTask;
      },
    });
    expect(seen).toBe(task);
    task.abort();
  });

  it('resets the restart count after a run that lasted the healthy period', async () => {
    const clock = createManualClock();
    const gaveUp: string[] = [];
    let runs = 0;
    spawnSupervised(
      async () => {
        runs += 1;
        // The third lifetime is healthy: it runs for the whole healthy period before crashing.
        if (runs === 3) clock.advance(SUPERVISED_HEALTHY_S * 1000);
        throw new Error('boom');
      },
      {
        name: 'flaky',
        clock,
        logger: createRecordingLogger(),
        onGiveUp: (name) => gaveUp.push(name),
      },
    );
    await until(() => gaveUp.length > 0);
    // 3 lifetimes, then a fresh chain of 6 counted from the healthy one's successor.
    expect(runs).toBe(3 + MAX_SUPERVISED_RESTARTS);
    expect(clock.sleeps).toEqual([1000, 2000, 1000, 2000, 4000, 8000, 16000]);
  });

  it('does not restart an aborted task, or when the owner has stopped, or with restart off', async () => {
    const clock = createManualClock();
    const logger = createRecordingLogger();
    let aborted = 0;
    const task = spawnSupervised(
      (signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted += 1;
            reject(new Error('cancelled'));
          });
        }),
      { name: 'cancellable', clock, logger },
    );
    task.abort();
    await task.finished;

    let stoppedRuns = 0;
    await spawnSupervised(
      async () => {
        stoppedRuns += 1;
        throw new Error('boom');
      },
      { name: 'owner-stopped', clock, logger, isRunning: () => false },
    ).finished;

    let oneShotRuns = 0;
    await spawnSupervised(
      async () => {
        oneShotRuns += 1;
        throw new Error('boom');
      },
      { name: 'one-shot', clock, logger, restart: false },
    ).finished;

    await new Promise((resolve) => setImmediate(resolve));
    expect([aborted, stoppedRuns, oneShotRuns]).toEqual([1, 1, 1]);
    expect(clock.sleeps).toEqual([]);
  });

  it('never starts the factory when the owner signal is already aborted: the task settles as aborted', async () => {
    const clock = createManualClock();
    const owner = new AbortController();
    owner.abort();
    const tasks = new Set<SupervisedTask>();
    const seen: SupervisedTask[] = [];
    let runs = 0;
    const task = spawnSupervised(
      () => {
        runs += 1;
      },
      { name: 'too-late', clock, signal: owner.signal, tasks, onSpawn: (t) => seen.push(t) },
    );
    await task.finished;
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(0);
    expect(task.state).toBe('aborted');
    expect(task.done).toBe(true);
    expect(tasks.size).toBe(0);
    // The handle callers keep is the settled one.
    expect(seen).toEqual([task]);
    expect(clock.sleeps).toEqual([]);
  });

  it('starts every lifetime in a fresh context that does not inherit the spawner home override', async () => {
    const clock = createManualClock();
    const seen: (string | undefined)[] = [];
    const gaveUp: string[] = [];
    withHome('/tmp/some-profile', () => {
      spawnSupervised(
        async () => {
          seen.push(getHomeOverride());
          throw new Error('boom');
        },
        {
          name: 'scoped',
          clock,
          logger: createRecordingLogger(),
          onGiveUp: (name) => gaveUp.push(name),
        },
      );
    });
    await until(() => gaveUp.length > 0);
    expect(seen).toHaveLength(6);
    expect(seen.every((value) => value === undefined)).toBe(true);
  });

  it('swallows onSpawn errors and keeps the task in the background set until it ends', async () => {
    const tasks = new Set<SupervisedTask>();
    let release: () => void = () => undefined;
    const task = spawnSupervised(() => new Promise<void>((resolve) => (release = resolve)), {
      name: 'tracked',
      tasks,
      onSpawn: () => {
        throw new Error('observer broke');
      },
    });
    expect(tasks.has(task)).toBe(true);
    release();
    await task.finished;
    expect(tasks.size).toBe(0);
  });

  it('an abort during the restart backoff cancels the pending respawn', async () => {
    const logger = createRecordingLogger();
    const spawned: SupervisedTask[] = [];
    let runs = 0;
    // Default clock and backoff: the respawn is due 1 s after the crash.
    const task = spawnSupervised(
      async () => {
        runs += 1;
        throw new Error('boom');
      },
      { name: 'aborted-in-backoff', logger, onSpawn: (spawnedTask) => spawned.push(spawnedTask) },
    );
    await task.finished;
    expect(task.state).toBe('restarting');
    task.abort();
    expect(task.state).toBe('aborted');
    // Well past the 1 s backoff.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(runs).toBe(1);
    expect(spawned).toEqual([task]);
    expect(task.state).toBe('aborted');
  });

  it("an abort of the owner's signal during the backoff cancels the pending respawn", async () => {
    const owner = new AbortController();
    let runs = 0;
    const task = spawnSupervised(
      async () => {
        runs += 1;
        throw new Error('boom');
      },
      { name: 'owner-aborted-in-backoff', logger: createRecordingLogger(), signal: owner.signal },
    );
    await task.finished;
    expect(task.state).toBe('restarting');
    owner.abort();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(runs).toBe(1);
    expect(task.state).toBe('aborted');
  });

  it('a first import inside AsyncLocalStorage stores does not leak them into tasks (fresh process)', async () => {
    // vitest has imported the module long ago, outside any store: only a fresh process can show
    // what a module-load capture would pin.
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '--conditions=@hermes/source',
        '--import',
        'tsx',
        path.join(packageRoot, 'test/fixtures/first-import-in-store-child.ts'),
      ],
      cwd: packageRoot,
      env: { ...process.env },
    });
    const exit = await child.exited;
    expect(child.stderr()).toBe('');
    expect(exit).toEqual({ code: 0, signal: null });
    const seen = JSON.parse(child.stdout()) as {
      task: string;
      scope: string | null;
      home: string | null;
    }[];
    // Three lifetimes each (two crashes, then a clean return), none seeing the spawner's stores.
    expect(seen.map((entry) => entry.task)).toEqual([
      'spawned-inside',
      'spawned-inside',
      'spawned-inside',
      'spawned-outside',
      'spawned-outside',
      'spawned-outside',
    ]);
    expect(seen.every((entry) => entry.scope === null && entry.home === null)).toBe(true);
  });
});
