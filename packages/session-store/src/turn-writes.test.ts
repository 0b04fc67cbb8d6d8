import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { nameBtrees, walFramesOf } from '../test/wal-frames.js';
import { SessionStoreError } from './index.js';

describe('beginTurn / endTurn', () => {
  it('say which active row came before the turn’s messages (0 for a new conversation)', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const first = await store.beginTurn('s', { messages: [{ role: 'user', content: 'one' }] });
    expect(first?.previousMessageId).toBe(0);
    expect(first?.transcript.lastMessageId).toBe(first?.messageIds[0]);
    const ended = await store.endTurn('s', {
      messages: [{ role: 'assistant', content: 'a' }],
      releaseLease: first?.holder ?? '',
    });
    const second = await store.beginTurn('s', { messages: [{ role: 'user', content: 'two' }] });
    expect(second?.previousMessageId).toBe(ended.messageIds[0]);
    expect(second?.transcript.lastMessageId).toBe(second?.messageIds[0]);
    await store.endTurn('s', { releaseLease: second?.holder ?? '' });
    // Without messages the mark is the row before, and so is previousMessageId.
    const third = await store.beginTurn('s', {});
    expect(third?.previousMessageId).toBe(second?.messageIds[0]);
    expect(third?.transcript.lastMessageId).toBe(second?.messageIds[0]);
  });

  it('take the lease, store the prompt and the message in one transaction, and end with reply, usage and release', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const began = await store.beginTurn('s', {
      systemPrompt: 'be brief',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(began?.holder).toMatch(new RegExp(`^pid=${process.pid} token=`));
    expect(store.getTurnLease('s')).toMatchObject({ holder: began?.holder, active: true });
    expect(store.getSessionSystemPrompt('s')).toBe('be brief');
    const [userId] = began?.messageIds ?? [];
    expect(store.getMessages('s').map((row) => [row.id, row.content])).toEqual([[userId, 'hello']]);
    expect(began?.transcript.lastMessageId).toBe(userId);

    const ended = await store.endTurn('s', {
      messages: [{ role: 'assistant', content: 'hi', finishReason: 'stop' }],
      usage: { inputTokens: 7, outputTokens: 2, apiCalls: 1, model: 'm' },
      releaseLease: began?.holder ?? '',
    });
    expect(ended.leaseReleased).toBe(true);
    expect(store.getTurnLease('s')).toBeNull();
    expect(store.getMessages('s').map((row) => row.content)).toEqual(['hello', 'hi']);
    expect(store.requireSession('s')).toMatchObject({
      inputTokens: 7,
      outputTokens: 2,
      apiCallCount: 1,
      model: 'm',
      messageCount: 2,
    });
  });

  it('create a new conversation in the same transaction as its first turn', async () => {
    const { store } = await openTestStore();
    const began = await store.beginTurn('fresh', {
      create: { source: 'api_server', profileName: 'work', model: 'm' },
      systemPrompt: 'be brief',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(store.requireSession('fresh')).toMatchObject({
      source: 'api_server',
      profileName: 'work',
      model: 'm',
      lineageRootId: 'fresh',
      messageCount: 1,
    });
    expect(began?.previousMessageId).toBe(0);
    expect(store.getTurnLease('fresh')).toMatchObject({ holder: began?.holder, active: true });
    expect(store.getSessionSystemPrompt('fresh')).toBe('be brief');
    expect(store.getMessages('fresh').map((row) => row.content)).toEqual(['hello']);

    // All or nothing: a message the store refuses leaves no session behind.
    await expect(
      store.beginTurn('broken', {
        create: { source: 'api_server' },
        messages: [{ role: 'nobody' as 'user', content: 'x' }],
      }),
    ).rejects.toThrow();
    expect(store.getSession('broken')).toBeUndefined();
  });

  it('create a compression child with its first turn under its conversation’s lease and prompt', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli' });
    await store.setSessionSystemPrompt('root', 'the prompt');
    const began = await store.beginTurn('child', {
      create: { source: 'cli', parentSessionId: 'root', parentEdge: 'compression' },
      systemPrompt: 'the prompt',
      messages: [{ role: 'user', content: 'go on' }],
    });
    // The lease is the conversation's (its lineage root's), whichever id asks.
    expect(store.getTurnLease('root')).toMatchObject({
      conversationId: 'root',
      holder: began?.holder,
      active: true,
    });
    expect(await store.acquireTurnLease('root')).toBeNull();
    expect(store.getSessionSystemPrompt('child')).toBe('the prompt');
    const prompts = await store.withWriteTransaction((database) =>
      database.prepare('SELECT count(*) FROM system_prompts').pluck().get(),
    );
    expect(prompts).toBe(1);
  });

  it('keep a new conversation’s prompt while a session uses it, and forget it after the last', async () => {
    const { store } = await openTestStore();
    for (const id of ['a', 'b']) {
      const began = await store.beginTurn(id, {
        create: { source: 'api_server' },
        systemPrompt: 'shared',
        messages: [{ role: 'user', content: 'hi' }],
      });
      await store.endTurn(id, { releaseLease: began?.holder ?? '' });
    }
    await store.deleteSession('a');
    expect(store.getSessionSystemPrompt('b')).toBe('shared');
    await store.deleteSession('b');
    const prompts = await store.withWriteTransaction((database) =>
      database.prepare('SELECT count(*) FROM system_prompts').pluck().get(),
    );
    expect(prompts).toBe(0);
  });

  it('never continue a conversation whose id is taken when asked to create it', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'taken', source: 'cli' });
    await store.appendMessage('taken', { role: 'user', content: 'theirs' });
    const attempt = store.beginTurn('taken', {
      create: { source: 'api_server' },
      systemPrompt: 'mine',
      messages: [{ role: 'user', content: 'mine' }],
    });
    await expect(attempt).rejects.toSatisfy(
      (error) => SessionStoreError.isInstance(error) && error.code === 'session_exists',
    );
    expect(store.getMessages('taken').map((row) => row.content)).toEqual(['theirs']);
    expect(store.getTurnLease('taken')).toBeNull();
    expect(store.requireSession('taken').source).toBe('cli');
  });

  it('writes nothing while another live holder has the lease', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.setSessionSystemPrompt('s', 'old prompt');
    const other = await store.acquireTurnLease('s', { holder: `pid=${process.pid} token=other` });
    const began = await store.beginTurn('s', {
      systemPrompt: 'new prompt',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(began).toBeNull();
    expect(store.getMessages('s')).toEqual([]);
    expect(store.getSessionSystemPrompt('s')).toBe('old prompt');
    expect(store.getTurnLease('s')?.holder).toBe(other);
  });

  it('leaves the lease free when the message cannot be stored (all or nothing)', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await expect(
      store.beginTurn('s', {
        systemPrompt: 'p',
        messages: [{ role: 'user', content: 42 as unknown as string }],
      }),
    ).rejects.toBeInstanceOf(SessionStoreError);
    expect(store.getTurnLease('s')).toBeNull();
    expect(store.getSessionSystemPrompt('s')).toBeNull();
    expect(await store.acquireTurnLease('s')).not.toBeNull();
  });

  it('end a compression child’s turn: its counts, the usage, the root’s activity and the conversation’s lease', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli', startedAt: 1 });
    await store.createSession({
      id: 'child',
      source: 'cli',
      parentSessionId: 'root',
      parentEdge: 'compression',
      startedAt: 2,
    });
    const first = await store.beginTurn('child', { messages: [{ role: 'user', content: 'q' }] });
    const ended = await store.endTurn('child', {
      messages: [
        {
          role: 'assistant',
          content: 'a',
          toolCalls: [{ id: 'one' }, { id: 'two' }],
          timestamp: 50,
        },
      ],
      usage: { inputTokens: 5, outputTokens: 1, toolCalls: 1, toolNames: ['x'], model: 'm2' },
      releaseLease: first?.holder ?? '',
    });
    expect(ended.leaseReleased).toBe(true);
    expect(store.getTurnLease('child')).toBeNull();
    expect(store.requireSession('child')).toMatchObject({
      messageCount: 2,
      toolCallCount: 3,
      inputTokens: 5,
      outputTokens: 1,
      model: 'm2',
      toolNames: '["x"]',
    });
    const activity = store.requireSession('child').lastActivityAt ?? 0;
    expect(store.requireSession('root').lineageActiveAt).toBe(activity);

    // Usage alone releases the conversation's lease too.
    const second = await store.beginTurn('child', {});
    const usageOnly = await store.endTurn('child', {
      usage: { inputTokens: 2, toolNames: ['w'] },
      releaseLease: second?.holder ?? '',
    });
    expect(usageOnly.leaseReleased).toBe(true);
    expect(store.getTurnLease('root')).toBeNull();
    expect(store.requireSession('child')).toMatchObject({ inputTokens: 7, toolNames: '["w","x"]' });
  });

  it('stores no reply when the usage is invalid, and keeps the lease (all or nothing)', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const began = await store.beginTurn('s', { messages: [{ role: 'user', content: 'q' }] });
    await expect(
      store.endTurn('s', {
        messages: [{ role: 'assistant', content: 'a' }],
        usage: { inputTokens: -1 },
        releaseLease: began?.holder ?? '',
      }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(store.getMessages('s').map((row) => row.content)).toEqual(['q']);
    expect(store.getTurnLease('s')?.holder).toBe(began?.holder);
  });

  it('does not release a lease another holder took over', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const taker = await store.acquireTurnLease('s', { holder: `pid=${process.pid} token=taker` });
    const ended = await store.endTurn('s', {
      messages: [{ role: 'assistant', content: 'late' }],
      releaseLease: `pid=${process.pid} token=expired`,
    });
    expect(ended.leaseReleased).toBe(false);
    expect(store.getTurnLease('s')?.holder).toBe(taker);
    expect(store.getMessages('s').map((row) => row.content)).toEqual(['late']);
  });
});

describe('getTranscriptMark', () => {
  it('keeps its foreign version through this store’s own writes and names the newest active message', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.createSession({ id: 'other', source: 'cli' });
    expect(store.getTranscriptMark('s').lastMessageId).toBe(0);
    const first = store.getTranscriptMark('s');
    const id = await store.appendMessage('s', { role: 'user', content: 'one' });
    await store.appendMessage('other', { role: 'user', content: 'elsewhere' });
    await store.recordUsage('s', { apiCalls: 1 });
    const began = await store.beginTurn('s', { messages: [{ role: 'user', content: 'two' }] });
    await store.endTurn('s', { releaseLease: began?.holder ?? '' });
    const later = store.getTranscriptMark('s');
    expect(later.foreignVersion).toBe(first.foreignVersion);
    expect(began?.transcript).toEqual(later);
    expect(later.lastMessageId).toBe(began?.messageIds[0]);
    expect(later.lastMessageId).toBeGreaterThan(id);
  });

  it('changes its foreign version when another store handle writes', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const before = store.getTranscriptMark('s');
    const other = await reopenStore(databasePath);
    await other.appendMessage('s', { role: 'user', content: 'from the other handle' });
    const after = store.getTranscriptMark('s');
    expect(after.foreignVersion).not.toBe(before.foreignVersion);
    expect(after.lastMessageId).toBe(other.getTranscriptMark('s').lastMessageId);
  });

  it('changes its foreign version when another process writes', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const before = store.getTranscriptMark('s');
    const child = await runFixture('append-message.ts', [databasePath, 's', 'from afar']);
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(0);
    const after = store.getTranscriptMark('s');
    expect(after.foreignVersion).not.toBe(before.foreignVersion);
    expect(store.getMessages('s').at(-1)).toMatchObject({
      id: after.lastMessageId,
      content: 'from afar',
    });
  });

  it('changes its foreign version when a caller’s own SQL runs, and skips inactive rows', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const [first, second] = await store.appendMessages('s', [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    const before = store.getTranscriptMark('s');
    expect(before.lastMessageId).toBe(second);
    await store.withWriteTransaction((database) =>
      database.prepare('UPDATE messages SET active = 0 WHERE id = ?').run(second),
    );
    const after = store.getTranscriptMark('s');
    expect(after.foreignVersion).not.toBe(before.foreignVersion);
    expect(after.lastMessageId).toBe(first);
  });

  it('changes its foreign version when a session is deleted (its id may be created again)', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.appendMessage('s', { role: 'user', content: 'old' });
    const before = store.getTranscriptMark('s');
    await store.deleteSession('s');
    await store.createSession({ id: 's', source: 'cli' });
    const id = await store.appendMessage('s', { role: 'user', content: 'new' });
    const after = store.getTranscriptMark('s');
    expect(after.foreignVersion).not.toBe(before.foreignVersion);
    expect(after.lastMessageId).toBe(id);
  });
});

describe('pages a new conversation’s turn writes to the WAL', () => {
  // Each page is one WAL frame (a checksum and two writes) on the request's critical path. The
  // budgets are exact for a fresh file: each b-tree the turn touches is its one root page then.
  const opening = {
    create: { source: 'api_server', profileName: 'default', cwd: '/srv', model: 'm' },
    systemPrompt: 'You are a helpful assistant.',
    messages: [{ role: 'user' as const, content: 'hello there' }],
  };

  it('opens in at most 18 pages and closes in at most 9 on a fresh file', async () => {
    const { store, databasePath } = await openTestStore();
    let holder = '';
    const begin = await walFramesOf(databasePath, async () => {
      holder = (await store.beginTurn('conversation', opening))?.holder ?? '';
    });
    const end = await walFramesOf(databasePath, () =>
      store.endTurn('conversation', {
        messages: [{ role: 'assistant', content: 'hi', finishReason: 'stop' }],
        usage: { inputTokens: 12, outputTokens: 3, apiCalls: 1, model: 'm' },
        releaseLease: holder,
      }),
    );
    const names = nameBtrees(databasePath, [...begin, ...end]);
    // The lease is one b-tree: no automatic index beside it, no expiry index.
    expect(names.filter((name) => name.includes('turn_leases'))).toEqual([
      'session_turn_leases',
      'session_turn_leases',
    ]);
    expect(begin.length).toBeLessThanOrEqual(18);
    expect(end.length).toBeLessThanOrEqual(9);
  });

  it('writes the prompt-hash index once per new conversation on a file with many', async () => {
    const { store, databasePath } = await openTestStore();
    const turn = async (id: string) => {
      const began = await store.beginTurn(id, opening);
      await store.endTurn(id, {
        messages: [{ role: 'assistant', content: 'hi' }],
        releaseLease: began?.holder ?? '',
      });
    };
    // Enough conversations (one prompt) that the hash's index spans several leaves: a row
    // inserted with a NULL hash and then updated would write the first leaf and the last.
    for (let index = 0; index < 150; index += 1) await turn(`earlier-${index}`);
    const conversations = 20;
    let written = 0;
    for (let index = 0; index < conversations; index += 1) {
      const pages = await walFramesOf(databasePath, () =>
        store.beginTurn(`measured-${index}`, opening),
      );
      written += nameBtrees(databasePath, pages).filter(
        (name) => name === 'idx_sessions_system_prompt',
      ).length;
    }
    // One page each, and now and then a second when the leaf splits.
    expect(written).toBeLessThan(2 * conversations);
  });
});
