import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { MAX_STORED_RESPONSES, openSessionStore } from './index.js';

const body = (id: string, text = 'hello') => ({
  id,
  object: 'response',
  status: 'completed',
  output_text: text,
  output: [{ type: 'message', content: [{ type: 'output_text', text }] }],
});

describe('stored responses', () => {
  it('stores, replaces, reads back and deletes a response, and keeps it across a reopen', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'api_server' });
    const stored = await store.storeResponse({
      responseId: 'resp_1',
      sessionId: 's',
      lastMessageId: 7,
      body: body('resp_1'),
    });
    expect(stored).toMatchObject({
      responseId: 'resp_1',
      sessionId: 's',
      lastMessageId: 7,
      previousResponseId: null,
      body: body('resp_1'),
    });
    expect(stored.createdAt).toBeGreaterThan(0);
    await store.storeResponse({
      responseId: 'resp_2',
      sessionId: 's',
      previousResponseId: 'resp_1',
      body: body('resp_2', 'again'),
    });
    await store.storeResponse({
      responseId: 'resp_1',
      sessionId: 's',
      lastMessageId: 9,
      body: body('resp_1', 'replaced'),
    });
    await store.close();

    const reopened = await reopenStore(databasePath);
    expect(reopened.getStoredResponse('resp_1')).toMatchObject({
      lastMessageId: 9,
      body: body('resp_1', 'replaced'),
    });
    expect(reopened.getStoredResponse('resp_2')?.previousResponseId).toBe('resp_1');
    expect(await reopened.deleteStoredResponse('resp_1')).toBe(true);
    expect(await reopened.deleteStoredResponse('resp_1')).toBe(false);
    expect(reopened.getStoredResponse('resp_1')).toBeUndefined();
    expect(reopened.getStoredResponse('x'.repeat(10_000))).toBeUndefined();
  });

  it(`keeps the ${MAX_STORED_RESPONSES} most recently stored or used, dropping the least recently used`, async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'api_server' });
    for (let index = 0; index < MAX_STORED_RESPONSES; index += 1) {
      await store.storeResponse({
        responseId: `r${index}`,
        sessionId: 's',
        body: body(`r${index}`),
      });
    }
    // A request chains from the oldest: it is used now, so the next prune spares it.
    expect(await store.touchStoredResponse('r0')).toBe(true);
    expect(await store.touchStoredResponse('missing')).toBe(false);
    for (let index = MAX_STORED_RESPONSES; index < MAX_STORED_RESPONSES + 5; index += 1) {
      await store.storeResponse({
        responseId: `r${index}`,
        sessionId: 's',
        body: body(`r${index}`),
      });
    }
    const kept = (index: number) => store.getStoredResponse(`r${index}`) !== undefined;
    expect(kept(0)).toBe(true);
    expect([1, 2, 3, 4, 5].map(kept)).toEqual([false, false, false, false, false]);
    expect(kept(6)).toBe(true);
    expect(kept(MAX_STORED_RESPONSES + 4)).toBe(true);
    const count = await store.withWriteTransaction(
      (database) =>
        database.prepare('SELECT count(*) FROM stored_responses').pluck().get() as number,
    );
    expect(count).toBe(MAX_STORED_RESPONSES);
  });

  it('holds the cap when two processes store at the same time', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const store = await openSessionStore({ path: databasePath });
    try {
      await store.createSession({ id: 's', source: 'api_server' });
      const perProcess = 80;
      const children = await Promise.all(
        [0, 1].map(() =>
          runFixture(
            'store-ops.ts',
            [databasePath, 'store-responses', 's', String(perProcess)],
            'ready',
          ),
        ),
      );
      for (const child of children) child.kill('SIGUSR2');
      const exits = await Promise.all(children.map((child) => child.exited));
      expect(
        exits.map((exit) => exit.code),
        children.map((child) => child.stderr()).join('\n'),
      ).toEqual([0, 0]);
      const rows = await store.withWriteTransaction(
        (database) =>
          database
            .prepare('SELECT response_id AS id FROM stored_responses ORDER BY used_seq')
            .pluck()
            .all() as string[],
      );
      expect(rows).toHaveLength(MAX_STORED_RESPONSES);
      // Each process's newest responses survive; whatever was pruned was older than all of them.
      for (const child of children) {
        const pid = child.pid;
        const mine = rows.filter((id) => id.startsWith(`${pid}-`));
        expect(mine.length).toBeGreaterThan(0);
        const indexes = mine.map((id) => Number(id.split('-')[1]));
        expect(Math.max(...indexes)).toBe(perProcess - 1);
        expect(indexes).toEqual(
          Array.from({ length: mine.length }, (_, offset) => perProcess - mine.length + offset),
        );
      }
    } finally {
      await store.close();
    }
  }, 60_000);

  it('refuses what is not a response, changing nothing', async () => {
    const { store } = await openTestStore();
    const bad = [
      { responseId: '', sessionId: 's', body: {} },
      { responseId: 'r', sessionId: '', body: {} },
      { responseId: 'r', sessionId: 's', body: [] },
      { responseId: 'r', sessionId: 's', body: { big: 10n } },
      { responseId: 'r', sessionId: 's', lastMessageId: 1.5, body: {} },
      { responseId: 'r', sessionId: 's', previousResponseId: '', body: {} },
    ];
    for (const input of bad) {
      await expect(store.storeResponse(input as never)).rejects.toMatchObject({
        code: 'invalid_argument',
      });
    }
    expect(store.getStoredResponse('r')).toBeUndefined();
  });
});
