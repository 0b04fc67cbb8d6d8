import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { BOT_CHAT_TITLE } from './index.js';

const day = 24 * 3600;

describe('stale auto-archive sweep', () => {
  it('archives idle lineages as automatic and keeps ordinary rows eligible', async () => {
    const { store } = await openTestStore();
    const now = Date.now() / 1000;
    await store.createSession({ id: 'idle', source: 'cli', startedAt: now - 90 * day });
    await store.publishCompressionChild({ parentId: 'idle', summary: 's', childId: 'idle-tip' });
    await store.withWriteTransaction((database) =>
      database
        .prepare("UPDATE sessions SET lineage_active_at = ? WHERE id = 'idle'")
        .run(now - 90 * day),
    );
    await store.createSession({ id: 'fresh', source: 'cli', startedAt: now });
    await store.createSession({
      id: 'pinned',
      source: 'cli',
      startedAt: now - 90 * day,
      pinned: true,
    });
    expect(await store.archiveStaleSessions()).toBe(1);
    expect(store.requireSession('idle')).toMatchObject({ archived: 1, autoArchived: 1 });
    expect(store.requireSession('idle-tip').archived).toBe(1);
    expect(store.requireSession('fresh').archived).toBe(0);
    expect(store.requireSession('pinned').archived).toBe(0);
  });

  it('spares the hidden canonical Bot Chat, and only it: hidden rows and a visible Bot Chat stay eligible', async () => {
    const old = Date.now() / 1000 - 90 * day;
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
      startedAt: old,
    });
    await store.createSession({
      id: 'hidden-other',
      source: 'desktop',
      title: 'Another hidden chat',
      hidden: true,
      startedAt: old,
    });
    expect(await store.archiveStaleSessions()).toBe(1);
    expect(store.requireSession('bot').archived).toBe(0);
    expect(store.requireSession('hidden-other').archived).toBe(1);
    // A visible chat titled Bot Chat is not the hidden canonical one: it is swept like any other.
    const { store: second } = await openTestStore();
    await second.createSession({
      id: 'visible-bot',
      source: 'cli',
      title: BOT_CHAT_TITLE,
      startedAt: old,
    });
    expect(await second.archiveStaleSessions()).toBe(1);
    expect(second.requireSession('visible-bot')).toMatchObject({
      title: BOT_CHAT_TITLE,
      hidden: 0,
      archived: 1,
    });
  });

  it('a compression of an auto-archived lineage brings it back', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli', startedAt: Date.now() / 1000 - 90 * day });
    await store.archiveStaleSessions();
    const child = await store.publishCompressionChild({ parentId: 'a', summary: 's' });
    expect([store.requireSession('a').archived, store.requireSession(child).archived]).toEqual([
      0, 0,
    ]);
  });
});
