import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { END_REASON, ORPHANED_COMPRESSION_FINALIZE_SECONDS } from './index.js';

const day = 24 * 3600;

describe('messages written during a compression', () => {
  it('parent rows after the watermark are copied into the child, after the handoff', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'telegram' });
    await store.appendMessage('p', { role: 'user', content: 'summarised question' });
    const watermark = await store.appendMessage('p', { role: 'assistant', content: 'answer' });
    // The summary is being made from rows ≤ watermark; meanwhile the chat goes on.
    const late = await store.appendMessages('p', [
      { role: 'user', content: 'said during the compression' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1' }], finishReason: 'tool_calls' },
    ]);
    const child = await store.publishCompressionChild({
      parentId: 'p',
      summary: 'handoff summary',
      retainedMessages: [{ role: 'assistant', content: 'answer' }],
      watermark,
    });
    const rows = store.getMessages(child);
    expect(rows.map((row) => [row.role, row.content, row.compressedSummary])).toEqual([
      ['user', 'handoff summary', 1],
      ['assistant', 'answer', 0],
      ['user', 'said during the compression', 0],
      ['assistant', '', 0],
    ]);
    expect(JSON.parse(rows[3]?.toolCalls ?? 'null')).toEqual([{ id: 'c1' }]);
    expect(rows[3]?.finishReason).toBe('tool_calls');
    expect(store.requireSession(child)).toMatchObject({ messageCount: 4, toolCallCount: 1 });
    // The parent keeps its rows (history), the child has copies.
    expect(store.getMessages('p').map((row) => row.id)).toContain(late[0]);
  });

  it('without a watermark nothing is copied; an invalid watermark is refused', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.appendMessage('p', { role: 'user', content: 'hello' });
    const child = await store.publishCompressionChild({ parentId: 'p', summary: 's' });
    expect(store.getMessages(child)).toHaveLength(1);
    await store.createSession({ id: 'q', source: 'cli' });
    await expect(
      store.publishCompressionChild({ parentId: 'q', summary: 's', watermark: Number.NaN }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(store.requireSession('q').endedAt).toBeNull();
  });
});

describe('orphaned compressions', () => {
  it('finds the one live compression child, and none when there are two', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    expect(store.findLiveCompressionChild('p')).toBeUndefined();
    const child = await store.publishCompressionChild({ parentId: 'p', summary: 's' });
    expect(store.findLiveCompressionChild('p')?.id).toBe(child);
    await store.createSession({ id: 'side', source: 'cli', parentSessionId: 'p' }); // a branch
    expect(store.findLiveCompressionChild('p')?.id).toBe(child);
    // A second live compression child (an old release's double publication): ambiguous.
    const raw = new BetterSqlite3(databasePath);
    raw
      .prepare(
        `INSERT INTO sessions (id, source, parent_session_id, parent_edge, lineage_root_id, started_at)
         VALUES ('twin', 'cli', 'p', 'compression', 'p', 1)`,
      )
      .run();
    raw.close();
    expect(store.findLiveCompressionChild('p')).toBeUndefined();
    await store.endSession('twin', 'agent_close');
    expect(store.findLiveCompressionChild('p')?.id).toBe(child);
  });

  it('reopens a compression-ended session whose child is gone, and only that', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    const child = await store.publishCompressionChild({ parentId: 'p', summary: 's' });
    expect(await store.reopenOrphanedCompressionSession('p')).toBe(false); // it has its child
    await store.deleteSession(child);
    expect(await store.reopenOrphanedCompressionSession('p')).toBe(true);
    expect(store.requireSession('p')).toMatchObject({ endedAt: null, endReason: null });
    await store.createSession({ id: 'reset', source: 'cli' });
    await store.endSession('reset', 'session_reset');
    expect(await store.reopenOrphanedCompressionSession('reset')).toBe(false);
  });

  it('finalises compression orphans older than 7 days as orphaned_compression', async () => {
    const { store, databasePath } = await openTestStore();
    for (const id of ['old-orphan', 'young-orphan', 'old-with-child']) {
      await store.createSession({ id, source: 'cli' });
    }
    const oldChild = await store.publishCompressionChild({
      parentId: 'old-with-child',
      summary: 's',
    });
    for (const id of ['old-orphan', 'young-orphan']) {
      const child = await store.publishCompressionChild({ parentId: id, summary: 's' });
      await store.deleteSession(child);
    }
    const now = Date.now() / 1000;
    const raw = new BetterSqlite3(databasePath);
    raw
      .prepare("UPDATE sessions SET ended_at = ? WHERE id IN ('old-orphan', 'old-with-child')")
      .run(now - ORPHANED_COMPRESSION_FINALIZE_SECONDS - day);
    raw.prepare("UPDATE sessions SET ended_at = ? WHERE id = 'young-orphan'").run(now - day);
    raw.close();
    expect(await store.finalizeOrphanedCompressionSessions()).toBe(1);
    expect(store.requireSession('old-orphan').endReason).toBe(END_REASON.orphanedCompression);
    expect(store.requireSession('young-orphan').endReason).toBe(END_REASON.compression);
    expect(store.requireSession('old-with-child').endReason).toBe(END_REASON.compression);
    expect(store.getSession(oldChild)).toBeDefined();
  });
});

describe('conversation generations', () => {
  it('are bumped once per end of a peer session, never for an ignored second end', async () => {
    const { store } = await openTestStore();
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(0);
    await store.createSession({ id: 'a', source: 'telegram', sessionKey: 'tg:1' });
    await store.endSession('a', 'agent_close');
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(1);
    await store.endSession('a', 'session_reset'); // the first end wins: nothing changed
    await store.promoteToSessionReset('a'); // already ended: no new end
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(1);
    await store.createSession({ id: 'b', source: 'telegram', sessionKey: 'tg:1' });
    await store.promoteToSessionReset('b'); // a live row ended as a reset
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(2);
    await store.reopenSession('a');
    await store.endSession('a', 'idle');
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(3);
    // Other peers and keyless rows are unaffected.
    await store.createSession({ id: 'c', source: 'discord', sessionKey: 'tg:1' });
    await store.createSession({ id: 'd', source: 'cli' });
    await store.endSession('d', 'tui_close');
    expect(store.getConversationGeneration('discord', 'tg:1')).toBe(0);
    expect(store.getConversationGeneration('telegram', 'tg:1')).toBe(3);
  });
});
