import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';

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
