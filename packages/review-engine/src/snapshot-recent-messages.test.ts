import { describe, expect, it } from 'vitest';
import { MESSAGE_CHAR_CAP, TRUNCATION_SUFFIX } from './constants.js';
import { extractMessageText } from './message-text.js';
import { snapshotRecentMessages } from './snapshot-recent-messages.js';

describe('snapshotRecentMessages', () => {
  it('keeps the last 10 user/assistant messages, oldest first, with their roles', () => {
    const messages = [
      { role: 'system', content: 'You are Hermes.' },
      ...Array.from({ length: 15 }, (_, index) => ({ role: 'user', content: `m${index}` })),
      { role: 'tool', tool_call_id: 'call_1', content: 'tool output' },
    ];
    const snapshot = snapshotRecentMessages(messages);
    expect(snapshot.map((entry) => entry.text)).toEqual(
      Array.from({ length: 10 }, (_, index) => `m${index + 5}`),
    );
    expect(snapshot.every((entry) => entry.role === 'user')).toBe(true);
  });

  it('skips assistant tool-call stubs, other roles and non-objects, and trims text', () => {
    const snapshot = snapshotRecentMessages([
      { role: 'user', content: '  fix the bug  ' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', function: { name: 'read_file' } }],
      },
      { role: 'tool', content: 'file body' },
      null,
      'stray',
      { role: 'developer', content: 'hidden' },
      { role: 'assistant', content: 'Fixed in parser.ts.' },
    ]);
    expect(snapshot).toEqual([
      { role: 'user', text: 'fix the bug' },
      { role: 'assistant', text: 'Fixed in parser.ts.' },
    ]);
  });

  it('joins multimodal text parts and placeholders with a newline', () => {
    const snapshot = snapshotRecentMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at this' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
    expect(snapshot).toEqual([{ role: 'user', text: 'look at this\n[image_url]' }]);
  });

  it('caps an oversized message and marks the cut', () => {
    const [entry] = snapshotRecentMessages([{ role: 'assistant', content: 'x'.repeat(50_000) }]);
    expect(entry?.text.length).toBeLessThan(13_000);
    expect(entry?.text).toBe(`${'x'.repeat(MESSAGE_CHAR_CAP)}${TRUNCATION_SUFFIX}`);
    expect(entry?.text.endsWith('[... truncated ...]')).toBe(true);
  });

  it('keeps a message of exactly 12,000 characters whole', () => {
    const [entry] = snapshotRecentMessages([
      { role: 'user', content: 'y'.repeat(MESSAGE_CHAR_CAP) },
    ]);
    expect(entry?.text).toBe('y'.repeat(MESSAGE_CHAR_CAP));
  });

  it('honours a smaller limit and returns nothing for an empty or text-less conversation', () => {
    const messages = ['a', 'b', 'c'].map((content) => ({ role: 'user', content }));
    expect(snapshotRecentMessages(messages, 2).map((entry) => entry.text)).toEqual(['b', 'c']);
    expect(snapshotRecentMessages(messages, 0)).toEqual([]);
    expect(snapshotRecentMessages([])).toEqual([]);
    expect(snapshotRecentMessages([{ role: 'assistant', content: '   ' }])).toEqual([]);
  });
});

describe('extractMessageText', () => {
  it('uses [attachment] for a part without a type and skips empty text parts', () => {
    expect(
      extractMessageText([{ type: 'text' }, { data: 1 }, { type: 'input_audio' }, 'raw', null]),
    ).toBe('[attachment]\n[input_audio]');
    expect(extractMessageText([{ type: '' }])).toBe('[attachment]');
    expect(extractMessageText(42)).toBe('');
    expect(extractMessageText(null)).toBe('');
  });
});
