import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/index.js';
import { runFixture } from './processes.js';

describe('two processes on one state.db', () => {
  it('both writers commit every message, including the race to create the file', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const perWriter = 300;
    const writers = await Promise.all([
      runFixture('write-messages.ts', [databasePath, 'gateway', String(perWriter)]),
      runFixture('write-messages.ts', [databasePath, 'cli', String(perWriter)]),
    ]);
    const exits = await Promise.all(writers.map((writer) => writer.exited));
    expect(
      exits.map((exit) => exit.code),
      writers.map((writer) => writer.stderr()).join('\n'),
    ).toEqual([0, 0]);
    const store = await openSessionStore({ path: databasePath });
    try {
      expect(store.requireSession('gateway').messageCount).toBe(perWriter);
      expect(store.requireSession('cli').messageCount).toBe(perWriter);
      expect(store.getMessages('cli', { limit: 500 })).toHaveLength(perWriter);
      expect(store.searchMessages('zeta', { sessionId: 'gateway', limit: 200 }).hits).toHaveLength(
        200,
      );
    } finally {
      await store.close();
    }
  }, 60_000);
});
