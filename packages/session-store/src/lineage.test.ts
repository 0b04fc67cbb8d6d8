import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { BOT_CHAT_TITLE, END_REASON, ERROR_MESSAGES, RECOVERABLE_END_REASONS } from './index.js';

describe('compression', () => {
  it('creates the child with the handoff summary and ends the parent with compression in one step', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'root',
      source: 'telegram',
      sessionKey: 'peer-1',
      chatId: 'c1',
      pinned: true,
    });
    await store.appendMessage('root', { role: 'user', content: 'hello there' });
    const child = await store.publishCompressionChild({
      parentId: 'root',
      summary: '[CONTEXT COMPACTION — REFERENCE ONLY] we said hello',
      retainedMessages: [{ role: 'assistant', content: 'kept tail' }],
    });
    const parent = store.requireSession('root');
    expect(parent.endReason).toBe(END_REASON.compression);
    expect(parent.endedAt).not.toBeNull();
    const created = store.requireSession(child);
    expect(created).toMatchObject({
      parentSessionId: 'root',
      parentEdge: 'compression',
      lineageRootId: 'root',
      sessionKey: 'peer-1',
      chatId: 'c1',
      pinned: 1,
      messageCount: 2,
    });
    const messages = store.getMessages(child);
    expect(messages.map((message) => [message.role, message.compressedSummary])).toEqual([
      ['user', 1],
      ['assistant', 0],
    ]);
  });

  it('refuses a parent that a person already ended, but revives one ended by machinery', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'ended', source: 'cli' });
    await store.endSession('ended', 'session_reset');
    await expect(
      store.publishCompressionChild({ parentId: 'ended', summary: 's' }),
    ).rejects.toThrow(ERROR_MESSAGES.compressionParentEnded);
    expect(store.getLineageIds('ended')).toEqual(['ended']);

    await store.createSession({ id: 'reaped', source: 'cli' });
    await store.endSession('reaped', 'ws_disconnect');
    const child = await store.publishCompressionChild({ parentId: 'reaped', summary: 's' });
    expect(store.requireSession('reaped').endReason).toBe('compression');
    expect(store.getCompressionTip('reaped')).toBe(child);
  });

  it('requires a non-empty handoff and rolls back the child when refused', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await expect(
      store.publishCompressionChild({ parentId: 'p', summary: '  ' }),
    ).rejects.toMatchObject({
      code: 'compression_handoff_missing',
    });
    expect(store.getLineageIds('p')).toEqual(['p']);
    expect(store.requireSession('p').endedAt).toBeNull();
  });

  it('a publication that fails after the child was written leaves no trace (one transaction)', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.endSession('p', 'ws_disconnect'); // revived by the publication, then rolled back
    const before = store.requireSession('p');
    await expect(
      store.publishCompressionChild({
        parentId: 'p',
        summary: 'handoff',
        childId: 'child',
        // Refused (no role) after the child row was inserted.
        retainedMessages: [{ role: null as never, content: 'broken tail' }],
      }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(store.getSession('child')).toBeUndefined();
    expect(store.requireSession('p')).toMatchObject({
      endReason: 'ws_disconnect',
      endedAt: before.endedAt,
    });
  });

  it('resolves the chain and tip through several compressions, ignoring branch children', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    const b = await store.publishCompressionChild({ parentId: 'a', summary: 'one', childId: 'b' });
    await store.createSession({
      id: 'side',
      source: 'cli',
      parentSessionId: 'b',
      parentEdge: 'branch',
    });
    const c = await store.publishCompressionChild({ parentId: b, summary: 'two', childId: 'c' });
    expect(store.getCompressionChain('a')).toEqual(['a', 'b', 'c']);
    expect(store.getCompressionTip('a')).toBe(c);
    expect(store.getCompressionTip('b')).toBe(c);
    expect(store.getLineageIds('c')).toEqual(['a', 'b', 'c']);
  });

  it('deletes a whole lineage with its messages in one step and keeps what branched off it', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    await store.appendMessage('a', { role: 'user', content: 'first words' });
    const b = await store.publishCompressionChild({ parentId: 'a', summary: 'one', childId: 'b' });
    await store.createSession({
      id: 'side',
      source: 'cli',
      parentSessionId: b,
      parentEdge: 'branch',
    });
    const c = await store.publishCompressionChild({ parentId: b, summary: 'two', childId: 'c' });
    await store.appendMessage(c, { role: 'user', content: 'latest words' });
    await store.createSession({ id: 'other', source: 'cli' });

    expect(await store.deleteLineage('b')).toEqual(['a', 'b', 'c']);
    for (const id of ['a', 'b', 'c']) expect(store.getSession(id)).toBeUndefined();
    const raw = new Database(databasePath, { readonly: true });
    const left = raw
      .prepare("SELECT count(*) FROM messages WHERE session_id IN ('a', 'b', 'c')")
      .pluck()
      .get();
    raw.close();
    expect(left).toBe(0);
    expect(store.getSession('side')).toMatchObject({ parentSessionId: null });
    expect(store.getSession('other')).toBeDefined();
    expect(await store.deleteLineage('a')).toEqual([]);
  });

  it('where a segment has several compression children, follows the compressed one, then a live one, then the freshest', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli', startedAt: 1 });
    const child = (id: string, parentSessionId: string, startedAt: number) =>
      store.createSession({
        id,
        source: 'cli',
        parentSessionId,
        parentEdge: 'compression',
        startedAt,
      });
    const listedChain = () => store.listSessionsRich().sessions[0]?.lineageIds;
    await child('ended-fresh', 'root', 30);
    await store.endSession('ended-fresh', 'user_exit');
    await child('live-old', 'root', 10);
    await child('live-new', 'root', 20);
    // A live child beats an ended one however fresh; among live ones the freshest wins.
    expect(store.getCompressionChain('root')).toEqual(['root', 'live-new']);
    expect(listedChain()).toEqual(['root', 'live-new']);
    // A child that was itself compressed continues the chain and beats every live one.
    await child('compressed', 'root', 5);
    await child('grandchild', 'compressed', 6);
    await store.endSession('compressed', END_REASON.compression);
    expect(store.getCompressionChain('root')).toEqual(['root', 'compressed', 'grandchild']);
    expect(listedChain()).toEqual(['root', 'compressed', 'grandchild']);
    expect(store.getCompressionTip('live-old')).toBe('grandchild');
  });

  it('deleting a compression root leaves the rest of the chain listable as its own conversation', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    await store.publishCompressionChild({ parentId: 'a', summary: 's', childId: 'b' });
    await store.publishCompressionChild({ parentId: 'b', summary: 's', childId: 'c' });
    expect(await store.deleteSession('a')).toBe(true);
    expect(store.getLineageIds('c')).toEqual(['b', 'c']);
    expect(store.listSessionsRich().sessions.map((row) => [row.id, row.lineageRootId])).toEqual([
      ['c', 'b'],
    ]);
  });

  it('the first end wins', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    expect(await store.endSession('s', 'agent_close')).toBe(true);
    expect(await store.endSession('s', 'session_reset')).toBe(false);
    expect(store.requireSession('s').endReason).toBe('agent_close');
    expect(await store.promoteToSessionReset('s')).toBe(true);
    expect(store.requireSession('s').endReason).toBe('session_reset');
    expect(RECOVERABLE_END_REASONS).toContain('agent_close');
  });
});

describe('lineage-wide flags', () => {
  it('archive, hide and pin apply to every row of the compression chain and not to branches', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    await store.publishCompressionChild({ parentId: 'a', summary: 's', childId: 'b' });
    await store.createSession({
      id: 'branch',
      source: 'cli',
      parentSessionId: 'b',
      parentEdge: 'branch',
    });
    await store.setArchived('b', true);
    expect(store.requireSession('a').archived).toBe(1);
    expect(store.requireSession('b').archived).toBe(1);
    expect(store.requireSession('branch').archived).toBe(0);
    await store.setHidden('a', true);
    expect(store.requireSession('b').hidden).toBe(1);
    await store.setPinned('a', true);
    expect([store.requireSession('a').pinned, store.requireSession('b').pinned]).toEqual([1, 1]);
    expect(store.requireSession('b').hidden).toBe(0);
  });

  it('pinning keeps a hidden canonical Bot Chat hidden', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.setPinned('bot', true);
    expect(store.requireSession('bot')).toMatchObject({ pinned: 1, hidden: 1 });
  });

  it('read state moves the watermark across the lineage', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    await store.publishCompressionChild({ parentId: 'a', summary: 's', childId: 'b' });
    await store.setRead('b', true);
    expect(store.requireSession('a').lastReadAt).not.toBeNull();
    await store.setRead('a', false);
    expect(store.requireSession('b').lastReadAt).toBeNull();
  });
});

describe('compression lease', () => {
  it('one holder at a time; publication with a lost lease is refused and changes nothing', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    const first = await store.acquireCompressionLease('p');
    expect(first).toMatch(/^pid=\d+ /);
    expect(await store.acquireCompressionLease('p')).toBeNull();
    expect(await store.releaseCompressionLease('p', first ?? '')).toBe(true);
    const second = await store.acquireCompressionLease('p');
    await expect(
      store.publishCompressionChild({ parentId: 'p', summary: 's', leaseHolder: first ?? '' }),
    ).rejects.toThrow(ERROR_MESSAGES.compressionLeaseLost);
    expect(store.getLineageIds('p')).toEqual(['p']);
    const child = await store.publishCompressionChild({
      parentId: 'p',
      summary: 's',
      leaseHolder: second ?? '',
    });
    expect(store.getCompressionTip('p')).toBe(child);
  });

  it("a session created again under a deleted one's id is not refused by its compression lease", async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    expect(await store.acquireCompressionLease('p')).not.toBeNull(); // this live process
    expect(await store.deleteSession('p')).toBe(true);
    await store.createSession({ id: 'p', source: 'cli' });
    expect(await store.acquireCompressionLease('p')).not.toBeNull();

    // Every member of a lineage deleted whole.
    await store.createSession({ id: 'q', source: 'cli' });
    const tip = await store.publishCompressionChild({ parentId: 'q', summary: 's', childId: 'r' });
    expect(await store.acquireCompressionLease(tip)).not.toBeNull();
    await store.deleteLineage('q');
    await store.createSession({ id: 'r', source: 'cli' });
    expect(await store.acquireCompressionLease('r')).not.toBeNull();
  });

  it('refuses a lease on a session that does not exist, leaving nothing for one created later', async () => {
    const { store } = await openTestStore();
    await expect(store.acquireCompressionLease('later')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    await store.createSession({ id: 'later', source: 'cli' });
    expect(await store.acquireCompressionLease('later', { holder: 'pid=1 token=x' })).toBe(
      'pid=1 token=x',
    );
  });

  it('takes over a lease whose holder process is dead or whose time ran out', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.acquireCompressionLease('p', { holder: 'pid=2147483000 token=dead' });
    expect(await store.acquireCompressionLease('p')).not.toBeNull();
    await store.createSession({ id: 'q', source: 'cli' });
    await store.acquireCompressionLease('q', {
      holder: `pid=${process.pid} token=short`,
      ttlSeconds: 0.3,
    });
    expect(await store.acquireCompressionLease('q')).toBeNull(); // live holder, not yet expired
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await store.acquireCompressionLease('q')).not.toBeNull();
    await expect(store.acquireCompressionLease('q', { ttlSeconds: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });
});
