import { describe, expect, it } from 'vitest';
import { agentFixture } from '../../test/fixtures.js';
import { TOOL_ERROR_MESSAGES } from '../errors.js';
import { loadMessages, rowsToMessages } from './transcript.js';

describe('rowsToMessages', () => {
  it('answers tool calls that have no stored result and drops results without a call', async () => {
    const fixture = await agentFixture();
    const session = await fixture.store.createSession({ source: 'cli' });
    const call = (id: string) => ({
      id,
      type: 'function',
      function: { name: 'todo', arguments: '{}' },
    });
    await fixture.store.appendMessages(session.id, [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call('a'), call('b')] },
      { role: 'tool', content: 'A done', toolCallId: 'a', toolName: 'todo' },
      { role: 'tool', content: 'stray', toolCallId: 'zzz', toolName: 'todo' },
      { role: 'user', content: 'next' },
      { role: 'assistant', content: '', toolCalls: [call('c')] },
    ]);
    const missing = JSON.stringify({ error: TOOL_ERROR_MESSAGES.noResultRecorded });
    expect(rowsToMessages(loadMessages(fixture.store, session.id))).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: 'A done', tool_name: 'todo' },
      { role: 'tool', tool_call_id: 'b', content: missing },
      { role: 'user', content: 'next' },
      { role: 'assistant', content: null, tool_calls: [call('c')] },
      { role: 'tool', tool_call_id: 'c', content: missing },
    ]);
  });

  it('sends api_content instead of content when a row has one', async () => {
    const fixture = await agentFixture();
    const session = await fixture.store.createSession({ source: 'cli' });
    await fixture.store.appendMessage(session.id, {
      role: 'user',
      content: 'shown',
      apiContent: 'sent',
    });
    expect(rowsToMessages(loadMessages(fixture.store, session.id))).toEqual([
      { role: 'user', content: 'sent' },
    ]);
  });
});
