import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { shapePreview } from './preview.js';

describe('previews', () => {
  it('collapses whitespace and shapes long text to 60 characters plus an ellipsis', () => {
    expect(shapePreview('  hello \n\n world  ')).toBe('hello world');
    const long = 'x'.repeat(100);
    expect(shapePreview(long)).toBe(`${'x'.repeat(60)}...`);
    expect(shapePreview('y'.repeat(60))).toBe('y'.repeat(60));
  });

  it('takes the first visible user message, skipping hidden rows and compaction carriers', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    await store.appendMessages('s', [
      { role: 'user', content: 'secret steering', displayKind: 'hidden' },
      { role: 'user', content: '[CONTEXT SUMMARY]: old stuff', compressedSummary: true },
      { role: 'assistant', content: 'not a user row' },
      { role: 'user', content: 'the real first question' },
    ]);
    expect(store.listSessionsRich().sessions[0]?.preview).toBe('the real first question');
  });
});
