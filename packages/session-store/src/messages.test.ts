import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import type { SessionStore } from './index.js';

describe('messages', () => {
  it('appends in order, updates counters and returns only active rows', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const first = await store.appendMessage('s', { role: 'user', content: 'question' });
    const [second, third] = await store.appendMessages('s', [
      { role: 'assistant', content: '', toolCalls: [{ id: 't1' }, { id: 't2' }] },
      { role: 'tool', content: 'result', toolCallId: 't1', toolName: 'search' },
    ]);
    expect(first).toBeLessThan(second ?? 0);
    const session = store.requireSession('s');
    expect(session).toMatchObject({ messageCount: 3, toolCallCount: 2 });
    expect(session.lastActivityAt).not.toBeNull();
    const rows = store.getMessages('s');
    expect(rows.map((row) => row.id)).toEqual([first, second, third]);
    expect(JSON.parse(rows[1]?.toolCalls ?? 'null')).toEqual([{ id: 't1' }, { id: 't2' }]);
    expect(store.getMessages('s', { afterId: first }).map((row) => row.id)).toEqual([
      second,
      third,
    ]);
    // A superseded row (rewind / compaction) stays stored but leaves the active transcript.
    await store.withWriteTransaction((database) =>
      database.prepare('UPDATE messages SET active = 0 WHERE id = ?').run(second),
    );
    expect(store.getMessages('s').map((row) => row.id)).toEqual([first, third]);
    expect(store.getMessages('s', { includeInactive: true }).map((row) => row.id)).toEqual([
      first,
      second,
      third,
    ]);
  });
});

describe('message fields the agent stores', () => {
  it('round-trips reasoning, tool plumbing, finish reason, token count and api content', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const toolCalls = [
      { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } },
    ];
    const reasoningDetails = [{ type: 'reasoning.text', text: 'thinking' }];
    await store.appendMessages('s', [
      {
        role: 'assistant',
        content: 'shown',
        apiContent: 'sent to the model',
        reasoning: 'because',
        reasoningDetails,
        toolCalls,
        finishReason: 'tool_calls',
        tokenCount: 42,
      },
      { role: 'tool', content: 'result', toolCallId: 'call_1', toolName: 'f' },
    ]);
    const [assistant, tool] = store.getMessages('s');
    expect(assistant).toMatchObject({
      role: 'assistant',
      content: 'shown',
      apiContent: 'sent to the model',
      reasoning: 'because',
      finishReason: 'tool_calls',
      tokenCount: 42,
    });
    expect(JSON.parse(assistant?.toolCalls ?? 'null')).toEqual(toolCalls);
    expect(JSON.parse(assistant?.reasoningDetails ?? 'null')).toEqual(reasoningDetails);
    expect(tool).toMatchObject({ toolCallId: 'call_1', toolName: 'f', apiContent: null });
  });
});

describe('paging a transcript from either end', () => {
  it('newest first with beforeId visits every active row once, newest to oldest', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const ids = await store.appendMessages(
      's',
      Array.from({ length: 1234 }, (_, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `m${index}`,
      })),
    );
    const superseded = ids.slice(600, 610);
    await store.withWriteTransaction((database) =>
      database
        .prepare('UPDATE messages SET active = 0 WHERE id IN (SELECT value FROM json_each(?))')
        .run(JSON.stringify(superseded)),
    );
    const active = ids.filter((id) => !superseded.includes(id));
    const latest = store.getMessages('s', { order: 'newest', limit: 3 });
    expect(latest.map((row) => row.content)).toEqual(['m1233', 'm1232', 'm1231']);
    const seen: number[] = [];
    let beforeId: number | undefined;
    for (let pages = 0; pages < 5; pages += 1) {
      const page = store.getMessages('s', {
        order: 'newest',
        limit: 500,
        ...(beforeId === undefined ? {} : { beforeId }),
      });
      seen.push(...page.map((row) => row.id));
      if (page.length < 500) break;
      beforeId = page[page.length - 1]?.id;
    }
    expect(seen).toEqual([...active].reverse());
    // Both bounds, either order, inactive rows on request.
    const [from, to] = [ids[595] as number, ids[615] as number];
    expect(store.getMessages('s', { afterId: from, beforeId: to }).map((row) => row.id)).toEqual(
      active.filter((id) => id > from && id < to),
    );
    expect(
      store
        .getMessages('s', { afterId: from, beforeId: to, includeInactive: true, order: 'newest' })
        .map((row) => row.id),
    ).toEqual(ids.filter((id) => id > from && id < to).reverse());
    expect(() => store.getMessages('s', { order: 'latest' as never })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => store.getMessages('s', { beforeId: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});

describe('getRecentMessages (the /review snapshot)', () => {
  it('returns the newest user and assistant messages with text, oldest first', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.appendMessages('s', [
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: '', toolCalls: [{ id: 't' }] },
      { role: 'tool', content: 'tool output', toolCallId: 't' },
      { role: 'assistant', content: ' \n\t ' },
      { role: 'user', content: 'steer quietly', displayKind: 'hidden' },
      { role: 'system', content: 'a system note' },
      { role: 'assistant', content: 'a2' },
    ]);
    const texts = (options?: Parameters<SessionStore['getRecentMessages']>[1]) =>
      store.getRecentMessages('s', options).map((row) => row.content);
    expect(texts()).toEqual(['q1', 'a1', 'q2', 'a2']);
    expect(texts({ limit: 2 })).toEqual(['q2', 'a2']);
    expect(texts({ roles: ['tool', 'system'] })).toEqual(['tool output', 'a system note']);
    expect(texts({ includeHidden: true, limit: 2 })).toEqual(['steer quietly', 'a2']);
    expect(texts({ requireText: false, roles: ['assistant'], limit: 3 })).toEqual([
      '',
      ' \n\t ',
      'a2',
    ]);
    expect(() => store.getRecentMessages('s', { roles: ['robot' as never] })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });

  it('reads the conversation at its compression tip, whichever id of the lineage is named', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli' });
    await store.appendMessages('root', [
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
    ]);
    const tip = await store.publishCompressionChild({
      parentId: 'root',
      summary: 'what was said before',
      retainedMessages: [{ role: 'assistant', content: 'old answer' }],
    });
    await store.appendMessage(tip, { role: 'user', content: 'new question' });
    // Whitespace-only rows make the reader look further back than the first batch.
    await store.appendMessages(
      tip,
      Array.from({ length: 30 }, () => ({ role: 'assistant' as const, content: '   \n' })),
    );
    const contents = store.getRecentMessages('root').map((row) => row.content);
    expect(contents).toEqual(['old answer', 'new question']);
    expect(
      store
        .getRecentMessages('root', { includeCompactionCarriers: true })
        .map((row) => row.content),
    ).toEqual(['what was said before', 'old answer', 'new question']);
    expect(store.getRecentMessages(tip, { limit: 1 }).map((row) => row.sessionId)).toEqual([tip]);
  });
});
