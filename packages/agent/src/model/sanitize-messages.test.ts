import { describe, expect, it } from 'vitest';
import type { ChatMessage } from './chat-message.js';
import { sanitizeMessages, sanitizeMessagesForWire } from './sanitize-messages.js';

describe('sanitizeMessages', () => {
  const messages = [
    {
      role: 'assistant',
      content: null,
      reasoning: 'r',
      codex_reasoning_items: [{}],
      codex_message_items: [],
      timestamp: 1,
      observed: true,
      _display_kind: 'steer',
      extra_content: { google: {} },
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          call_id: 'c1',
          response_item_id: 'fc_1',
          function: { name: 'todo', arguments: '{}' },
          extra_content: { google: { thought_signature: 'sig' } },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'ok', tool_name: 'todo' },
  ] as unknown as ChatMessage[];

  it('strips internal keys and tool-call bookkeeping before sending', () => {
    expect(sanitizeMessages(messages, 'gpt-4.1')).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'todo', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]);
  });

  it("keeps Gemini's extra_content for Gemini and Gemma models only", () => {
    const [assistant] = sanitizeMessages(messages, 'google/gemini-2.5-pro');
    expect(assistant?.extra_content).toEqual({ google: {} });
    const calls = (assistant?.tool_calls ?? []) as Record<string, unknown>[];
    expect(calls[0]?.extra_content).toBeDefined();
  });

  it('never mutates its input', () => {
    sanitizeMessages(messages, 'm');
    expect((messages[0] as unknown as Record<string, unknown>).reasoning).toBe('r');
  });

  it('gives the transport the same copies, sanitised once per message and per Gemini rule', () => {
    const first = sanitizeMessagesForWire(messages, 'gpt-4.1');
    expect(first).toEqual(sanitizeMessages(messages, 'gpt-4.1'));
    const second = sanitizeMessagesForWire(messages, 'gpt-4.1');
    expect(second[0]).toBe(first[0]);
    const gemini = sanitizeMessagesForWire(messages, 'google/gemini-2.5-pro');
    expect(gemini[0]).not.toBe(first[0]);
    expect(gemini[0]?.extra_content).toEqual({ google: {} });
  });
});
