import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { END_REASON } from './end-reasons.js';
import { forkSession, messageInputFromRecord, readAllMessages } from './fork-session.js';
import { MESSAGES_MAX_LIMIT } from './limits.js';

describe('readAllMessages', () => {
  it('reads every active message across pages, oldest first', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const count = MESSAGES_MAX_LIMIT * 2 + 7;
    for (let start = 0; start < count; start += MESSAGES_MAX_LIMIT) {
      await store.appendMessages(
        's',
        Array.from({ length: Math.min(MESSAGES_MAX_LIMIT, count - start) }, (_, index) => ({
          role: 'user' as const,
          content: `m${start + index}`,
        })),
      );
    }
    const rows = readAllMessages(store, 's');
    expect(rows).toHaveLength(count);
    expect(rows.map((row) => row.content)).toEqual(
      Array.from({ length: count }, (_, index) => `m${index}`),
    );
  });
});

describe('forkSession', () => {
  it('copies the system prompt and every field of the transcript into a branch, then ends the parent branched', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'parent',
      source: 'api_server',
      profileName: 'work',
      userId: 'u1',
      model: 'm1',
      cwd: '/tmp/project',
    });
    await store.setSessionSystemPrompt('parent', 'you are helpful');
    await store.appendMessages('parent', [
      { role: 'user', content: 'question', displayKind: 'async_delegation' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 't1', function: { name: 'read_file', arguments: '{}' } }],
        reasoning: 'thinking',
        reasoningContent: 'raw thinking',
        reasoningDetails: [{ type: 'summary', text: 's' }],
        codexReasoningItems: [{ id: 'r1' }],
        codexMessageItems: [{ id: 'msg1' }],
        finishReason: 'tool_calls',
        tokenCount: 12,
      },
      { role: 'tool', content: 'file text', toolCallId: 't1', toolName: 'read_file' },
      {
        role: 'assistant',
        content: 'answer',
        apiContent: 'answer as sent',
        platformMessageId: 'tg-9',
      },
      { role: 'user', content: 'summary', compressedSummary: true },
    ]);

    const { child, copied } = await forkSession(store, {
      sessionId: 'parent',
      childId: 'child',
      title: 'Branch',
    });

    expect(copied).toBe(5);
    expect(child).toMatchObject({
      id: 'child',
      title: 'Branch',
      source: 'api_server',
      profileName: 'work',
      userId: 'u1',
      model: 'm1',
      cwd: '/tmp/project',
      parentSessionId: 'parent',
      parentEdge: 'branch',
    });
    expect(JSON.parse(child.modelConfig ?? '{}')).toEqual({ _branched_from: 'parent' });
    expect(store.getSessionSystemPrompt('child')).toBe('you are helpful');
    const strip = ({ id: _id, sessionId: _session, ...rest }: Record<string, unknown>) => rest;
    expect(readAllMessages(store, 'child').map((row) => strip({ ...row }))).toEqual(
      readAllMessages(store, 'parent').map((row) => strip({ ...row })),
    );
    expect(store.getSession('parent')?.endReason).toBe(END_REASON.branched);
  });

  it('copies only the rows given and can leave the parent open', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.appendMessages('p', [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
    const rows = readAllMessages(store, 'p').slice(0, 2);
    const { child, copied } = await forkSession(store, { sessionId: 'p', rows, endParent: false });
    expect(copied).toBe(2);
    expect(child.id).not.toBe('p');
    expect(readAllMessages(store, child.id).map((row) => row.content)).toEqual(['one', 'two']);
    expect(store.getSession('p')?.endedAt).toBeNull();
  });

  it('removes the half-made child when copying fails, and leaves the parent as it was', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'p', source: 'cli' });
    await store.appendMessage('p', { role: 'user', content: 'one' });
    const [row] = readAllMessages(store, 'p');
    const broken = { ...(row as NonNullable<typeof row>), role: 'narrator' };
    await expect(
      forkSession(store, { sessionId: 'p', childId: 'c', rows: [broken] }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(store.getSession('c')).toBeUndefined();
    expect(store.getSession('p')?.endedAt).toBeNull();
  });

  it('refuses an unknown parent with session_not_found', async () => {
    const { store } = await openTestStore();
    await expect(forkSession(store, { sessionId: 'nope' })).rejects.toMatchObject({
      code: 'session_not_found',
      message: 'Session not found: nope',
    });
  });
});

describe('messageInputFromRecord', () => {
  it('keeps JSON text that does not parse as the text itself', () => {
    const input = messageInputFromRecord({
      id: 1,
      sessionId: 's',
      role: 'assistant',
      content: 'x',
      toolCallId: null,
      toolCalls: 'not json',
      toolName: null,
      timestamp: 1,
      tokenCount: null,
      finishReason: null,
      reasoning: null,
      reasoningContent: null,
      reasoningDetails: null,
      codexReasoningItems: null,
      codexMessageItems: null,
      platformMessageId: null,
      compressedSummary: 0,
      active: 1,
      displayKind: null,
      apiContent: null,
    });
    expect(input.toolCalls).toBe('not json');
    expect(input).not.toHaveProperty('reasoningDetails');
    expect(input.compressedSummary).toBe(false);
  });
});
