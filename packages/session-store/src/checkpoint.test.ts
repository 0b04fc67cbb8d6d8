import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';

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
