import path from 'node:path';
import { spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { BOT_CHAT_TITLE, RECOVERABLE_END_REASONS, type SessionStore } from './index.js';

const holdLock = path.join(import.meta.dirname, '../test/fixtures/hold-write-lock.mjs');

/**
 * Runs `decide` (a store call that reads, then writes) while another process holds the write
 * lock with `operation` applied but uncommitted; the other process commits right after `decide`
 * has made its decision, so the write lands on state the decision did not see.
 */
async function raceAgainstOtherProcess<T>(options: {
  databasePath: string;
  sessionId: string;
  operation: 'promote-reset' | 'unarchive';
  decide: () => Promise<T>;
}): Promise<T> {
  const other = await runFixture(
    'write-in-open-transaction.ts',
    [options.databasePath, options.sessionId, options.operation],
    'holding true',
  );
  const decided = options.decide();
  other.kill('SIGUSR2');
  expect((await other.exited).code, other.stderr()).toBe(0);
  return decided;
}

/** A hidden canonical Bot Chat that machinery reaped and archived. */
async function reapedBotChat(store: SessionStore, reason = 'ws_orphan_reap'): Promise<void> {
  await store.createSession({ id: 'bot', source: 'desktop', title: BOT_CHAT_TITLE, hidden: true });
  await store.endSession('bot', reason);
  await store.setArchived('bot', true);
}

describe('resurrection of the canonical chat', () => {
  it.each(RECOVERABLE_END_REASONS)(
    'unarchives a chat reaped with %s and clears its end stamp',
    async (reason) => {
      const { store } = await openTestStore();
      await store.createSession({
        id: 'bot',
        source: 'desktop',
        title: BOT_CHAT_TITLE,
        hidden: true,
      });
      await store.endSession('bot', reason);
      await store.setArchived('bot', true);
      expect(await store.unarchiveRecoverableSession('bot')).toBe(true);
      expect(store.requireSession('bot')).toMatchObject({
        archived: 0,
        endedAt: null,
        endReason: null,
      });
    },
  );

  it('leaves a deliberate archive and a boundary end archived', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'deliberate', source: 'cli' });
    await store.setArchived('deliberate', true);
    expect(await store.unarchiveRecoverableSession('deliberate')).toBe(false);
    await store.createSession({ id: 'boundary', source: 'cli' });
    await store.endSession('boundary', 'new_session');
    await store.setArchived('boundary', true);
    expect(await store.unarchiveRecoverableSession('boundary')).toBe(false);
    expect(store.requireSession('boundary')).toMatchObject({
      archived: 1,
      endReason: 'new_session',
    });
  });

  it('judges recoverability at the compression tip, not the compression-ended root', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'root',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    const tip = await store.publishCompressionChild({ parentId: 'root', summary: 'summary' });
    await store.endSession(tip, 'ws_orphan_reap');
    await store.setArchived('root', true);
    expect(await store.unarchiveRecoverableSession('root')).toBe(true);
    expect(store.requireSession(tip)).toMatchObject({ archived: 0, endReason: null });
    expect(store.requireSession('root')).toMatchObject({ archived: 0, endReason: 'compression' });
  });

  it('resurrect, then a deliberate archive: the chat stays archived through later lookups', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.endSession('bot', 'agent_close');
    await store.setArchived('bot', true);
    expect((await store.canonicalSession())?.id).toBe('bot');
    await store.setArchived('bot', true); // the person archives it on purpose now
    expect(await store.canonicalSession()).toBeNull();
    expect(await store.canonicalSession()).toBeNull();
    expect(store.requireSession('bot').archived).toBe(1);
  });

  it('a reset another process commits between the decision and the write wins (compare-and-swap)', async () => {
    const { store, databasePath } = await openTestStore();
    await reapedBotChat(store);
    // This process decides from what it can see (the reaped, recoverable chat); its write waits
    // for the lock while the other process commits a reset.
    const resurrected = await raceAgainstOtherProcess({
      databasePath,
      sessionId: 'bot',
      operation: 'promote-reset',
      decide: () => store.unarchiveRecoverableSession('bot'),
    });
    expect(resurrected).toBe(false);
    expect(store.requireSession('bot')).toMatchObject({ archived: 1, endReason: 'session_reset' });
    expect(await store.canonicalSession()).toBeNull();
  }, 60_000);

  it('the same race through the profiles listing helper: the canonical chat stays archived', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    const tip = await store.publishCompressionChild({ parentId: 'bot', summary: 's' });
    await store.endSession(tip, 'agent_close');
    await store.setArchived('bot', true);
    const canonical = await raceAgainstOtherProcess({
      databasePath,
      sessionId: tip,
      operation: 'promote-reset',
      decide: () => store.canonicalSession(),
    });
    expect(canonical).toBeNull();
    expect(store.requireSession(tip)).toMatchObject({ archived: 1, endReason: 'session_reset' });
  }, 60_000);

  it('an unarchive another process commits in between is a valid order: resurrected, flags cleared', async () => {
    const { store, databasePath } = await openTestStore();
    await reapedBotChat(store);
    const resurrected = await raceAgainstOtherProcess({
      databasePath,
      sessionId: 'bot',
      operation: 'unarchive',
      decide: () => store.unarchiveRecoverableSession('bot'),
    });
    expect(resurrected).toBe(true);
    expect(store.requireSession('bot')).toMatchObject({
      archived: 0,
      endedAt: null,
      endReason: null,
    });
  }, 60_000);

  it('the profiles listing helper takes no write lock when nothing needs writing', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.appendMessage('bot', { role: 'user', content: 'hello bot' });
    const holder = await spawnProcess({
      command: process.execPath,
      args: [holdLock, databasePath, '60000'],
      readyLine: 'locked',
    });
    // Answered from a read while another process holds the write lock.
    expect(await store.canonicalSession()).toMatchObject({ id: 'bot', preview: 'hello bot' });
    expect(holder.stdout()).not.toContain('released');
    await holder.stop();
  }, 60_000);

  it('the profiles listing helper is idempotent and resolves the tip', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.appendMessage('bot', { role: 'user', content: 'first words' });
    const tip = await store.publishCompressionChild({
      parentId: 'bot',
      summary: 'sum',
      retainedMessages: [{ role: 'assistant', content: 'latest answer' }],
    });
    await store.endSession(tip, 'startup_orphan_reap');
    await store.setArchived('bot', true);
    const first = await store.canonicalSession();
    const second = await store.canonicalSession();
    expect(first).toEqual(second);
    expect(first).toMatchObject({
      id: 'bot',
      resolvedId: tip,
      rootTitle: BOT_CHAT_TITLE,
      preview: 'latest answer',
    });
  });

  it('the profiles listing helper returns null for a denied source', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'bot_peer_dm',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    expect(await store.canonicalSession({ deniedSources: ['bot_peer_dm'] })).toBeNull();
    expect((await store.canonicalSession())?.id).toBe('bot');
  });
});
