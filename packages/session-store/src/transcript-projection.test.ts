import { describe, expect, it } from 'vitest';
import {
  COMPACTION_INTERNAL_FIELDS,
  messageResponse,
  type ProjectableMessage,
  turnTranscriptMessages,
} from './transcript-projection.js';

const internals: Partial<ProjectableMessage> = {
  toolCalls: '[{"id":"x"}]',
  finishReason: 'stop',
  reasoning: 'thinking',
  reasoningContent: 'more thinking',
  reasoningDetails: '[]',
  codexReasoningItems: '[]',
  codexMessageItems: '[]',
};

function internalKeys(response: object): string[] {
  return Object.keys(response).filter((key) =>
    (COMPACTION_INTERNAL_FIELDS as readonly string[]).includes(key),
  );
}

describe('messageResponse', () => {
  it('reduces hidden rows to placeholders with empty content', () => {
    const response = messageResponse({
      id: 7,
      sessionId: 's',
      role: 'user',
      content: 'secret',
      displayKind: 'hidden',
      timestamp: 1,
      platformMessageId: 'p',
    });
    expect(response).toEqual({
      id: 7,
      session_id: 's',
      role: 'user',
      content: '',
      timestamp: 1,
      display_kind: 'hidden',
      platform_message_id: 'p',
    });
  });

  it('turns a pure handoff carrier into a hidden placeholder without the internal fields', () => {
    const response = messageResponse({
      id: 3,
      role: 'user',
      content: '[CONTEXT COMPACTION — REFERENCE ONLY] earlier…',
      compressedSummary: 1,
      ...internals,
    });
    expect(response.display_kind).toBe('hidden');
    expect(response.content).toBe('');
    expect(response.id).toBe(3);
    expect(internalKeys(response)).toEqual([]);
  });

  it('keeps a merged carrier real content but drops the internals and a non-steer display kind', () => {
    const merged = messageResponse({
      id: 4,
      role: 'user',
      content: 'real question',
      compressedSummary: 1,
      displayKind: 'notice',
      ...internals,
    });
    expect(merged).toMatchObject({ content: 'real question', display_kind: null });
    expect(internalKeys(merged)).toEqual([]);
    const steer = messageResponse({
      id: 5,
      role: 'user',
      content: 'steer me',
      compressedSummary: true,
      displayKind: 'steer',
    });
    expect(steer.display_kind).toBe('steer');
  });

  it('passes ordinary rows through with parsed tool calls', () => {
    const response = messageResponse({ id: 1, role: 'assistant', content: 'hi', ...internals });
    expect(response).toMatchObject({
      content: 'hi',
      tool_calls: [{ id: 'x' }],
      finish_reason: 'stop',
      reasoning: 'thinking',
      display_kind: null,
    });
  });
});

describe('turnTranscriptMessages', () => {
  it('keeps this turn assistant and tool rows, dropping the prompt, history and hidden rows', () => {
    const messages: ProjectableMessage[] = [
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
      { role: 'user', content: 'new question' },
      { role: 'assistant', content: 'calling a tool', toolCalls: [{ id: 't' }] },
      { role: 'tool', content: 'tool output' },
      { role: 'assistant', content: 'internal', displayKind: 'hidden' },
      { role: 'user', content: '[CONTEXT SUMMARY]: compacted', compressedSummary: 1 },
      // A pure carrier is hidden by projection (it has no display kind of its own) and dropped.
      {
        role: 'assistant',
        content: '[CONTEXT COMPACTION — REFERENCE ONLY] recap',
        compressedSummary: 1,
      },
      { role: 'assistant', content: 'final answer' },
    ];
    const transcript = turnTranscriptMessages({
      messages,
      priorHistoryLength: 2,
      promptAppended: true,
    });
    expect(transcript.map((row) => row.content)).toEqual([
      'calling a tool',
      'tool output',
      'final answer',
    ]);
  });
});
