import { existsSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { BackgroundCheckpoint } from './background-checkpoint.js';
import { CHECKPOINT_EVERY_WRITES } from './limits.js';

/** This process's open descriptors on the database file (Linux: /proc/self/fd). */
function openDescriptorsOf(databasePath: string): string[] {
  const target = realpathSync(databasePath);
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false;
    }
  });
}

function mainFileStamp(databasePath: string): string {
  const stat = statSync(databasePath, { bigint: true });
  return `${stat.size}:${stat.mtimeNs}`;
}

async function writeAFewMessages(store: Awaited<ReturnType<typeof openTestStore>>['store']) {
  await store.createSession({ id: 'checkpointed', source: 'cli' });
  // Well below the write-count trigger, so only the timer can move pages into the main file.
  for (let index = 0; index < 5; index++) {
    await store.appendMessage('checkpointed', { role: 'user', content: `message ${index}` });
  }
}

describe('periodic passive checkpoint', () => {
  it('moves committed WAL pages into the main file on its timer', async () => {
    const { store, databasePath } = await openTestStore({ checkpointIntervalMs: 40 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    await writeAFewMessages(store);
    const afterWrites = mainFileStamp(databasePath);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(mainFileStamp(databasePath)).not.toBe(afterWrites);
  });

  it('leaves the main file alone when the timer is disabled', async () => {
    const { store, databasePath } = await openTestStore({ checkpointIntervalMs: 0 });
    await writeAFewMessages(store);
    const afterWrites = mainFileStamp(databasePath);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(mainFileStamp(databasePath)).toBe(afterWrites);
  });
});

describe('background checkpoint', () => {
  it('checkpoints every 50 writes without the timer, and not before', async () => {
    const { store, databasePath } = await openTestStore({ checkpointIntervalMs: 0 });
    await store.createSession({ id: 's', source: 'cli' });
    const start = mainFileStamp(databasePath);
    for (let index = 0; index < CHECKPOINT_EVERY_WRITES - 5; index += 1) {
      await store.appendMessage('s', { role: 'user', content: `message ${index}` });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mainFileStamp(databasePath)).toBe(start);
    for (let index = 0; index < 10; index += 1) {
      await store.appendMessage('s', { role: 'user', content: `more ${index}` });
    }
    const deadline = Date.now() + 10_000;
    while (mainFileStamp(databasePath) === start && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(mainFileStamp(databasePath)).not.toBe(start);
  });

  it('close() closes the checkpoint thread’s connection too: no descriptor left, no WAL', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    for (let index = 0; index < 3 * CHECKPOINT_EVERY_WRITES; index += 1) {
      await store.appendMessage('s', { role: 'user', content: `message ${index}` });
    }
    // The checkpoint thread starts with the first checkpoint due and opens its own connection.
    const deadline = Date.now() + 10_000;
    while (openDescriptorsOf(databasePath).length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(openDescriptorsOf(databasePath)).toHaveLength(2); // the writer's and the thread's
    await store.close();
    expect(openDescriptorsOf(databasePath)).toEqual([]);
    expect(existsSync(`${databasePath}-wal`)).toBe(false);
    const reopened = await reopenStore(databasePath);
    expect(reopened.requireSession('s').messageCount).toBe(3 * CHECKPOINT_EVERY_WRITES);
  });

  it('falls back to the calling thread when the worker cannot open the database', async () => {
    const home = await tempHome();
    const warnings: string[] = [];
    let checkpointsHere = 0;
    const background = new BackgroundCheckpoint({
      databasePath: path.join(home.path, 'missing', 'state.db'),
      pragmas: [],
      checkpointHere: () => {
        checkpointsHere += 1;
      },
      logger: { warn: (message) => warnings.push(message) },
    });
    background.request();
    const deadline = Date.now() + 10_000;
    while (checkpointsHere === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(checkpointsHere).toBe(1); // the owed checkpoint ran here
    expect(warnings.join('\n')).toMatch(/background WAL checkpoint unavailable/);
    background.request();
    expect(checkpointsHere).toBe(2); // and every later one, at once
    await background.close();
  });
});
