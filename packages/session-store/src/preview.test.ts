import { describe, expect, it } from 'vitest';
import { breakFtsIndex } from '../test/corrupt-fts.js';
import { openTestStore } from '../test/helpers.js';
import { ERROR_MESSAGES, MAX_TITLE_LENGTH, sanitizeTitle } from './index.js';
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

  it("gives one session the listing's preview, its lineage root's until a compression child has its own", async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli' });
    expect(store.getSessionPreview('root')).toBeNull();
    await store.appendMessages('root', [
      { role: 'user', content: 'steer', displayKind: 'hidden' },
      { role: 'user', content: `the   first\nquestion ${'z'.repeat(80)}` },
    ]);
    const listed = () => store.listSessionsRich().sessions[0]?.preview;
    expect(store.getSessionPreview('root')).toBe(
      shapePreview(`the first question ${'z'.repeat(80)}`),
    );
    expect(store.getSessionPreview('root')).toBe(listed());

    const tip = await store.publishCompressionChild({ parentId: 'root', summary: 'summary' });
    expect(store.getSessionPreview(tip)).toBe(store.getSessionPreview('root'));
    expect(store.getSessionPreview(tip)).toBe(listed());
    await store.appendMessage(tip, { role: 'user', content: 'a follow-up question' });
    expect(store.getSessionPreview(tip)).toBe('a follow-up question');
    expect(store.getSessionPreview(tip)).toBe(listed());

    expect(store.getSessionPreview('nobody')).toBeNull();
  });
});

/** No lone surrogate: the text was not cut inside a pair. */
function isWellFormed(text: string | undefined): boolean {
  return (
    text !== undefined &&
    !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)
  );
}

describe('text is measured in characters people see', () => {
  it('a title of 60 emoji is 60 characters; 101 are refused as 101', async () => {
    const sixty = '😀'.repeat(60);
    expect(sanitizeTitle(sixty)).toBe(sixty);
    expect(sanitizeTitle('é'.repeat(MAX_TITLE_LENGTH))).toHaveLength(MAX_TITLE_LENGTH);
    expect(() => sanitizeTitle('😀'.repeat(MAX_TITLE_LENGTH + 1))).toThrow(
      ERROR_MESSAGES.titleTooLong(MAX_TITLE_LENGTH + 1, MAX_TITLE_LENGTH),
    );
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli', title: '🚀'.repeat(MAX_TITLE_LENGTH) });
    expect(store.requireSession('s').title).toBe('🚀'.repeat(MAX_TITLE_LENGTH));
  });

  it('a preview never splits an emoji: counted in code points, cut between graphemes', () => {
    const emoji = '😀'.repeat(100);
    const preview = shapePreview(emoji);
    expect(preview).toBe(`${'😀'.repeat(60)}...`);
    expect(preview).toSatisfy(isWellFormed);
    // An odd UTF-16 offset that used to fall inside a pair.
    const mixed = `a${'😀'.repeat(70)}`;
    expect(shapePreview(mixed)).toBe(`a${'😀'.repeat(59)}...`);
    // A family emoji (several code points joined) is kept whole or left out, never halved.
    const family = '👨‍👩‍👧';
    const shaped = shapePreview(`${'x'.repeat(57)}${family}tail`);
    expect(shaped).toBe(`${'x'.repeat(57)}...`);
    expect(shapePreview(`${'x'.repeat(50)}${family}`)).toBe(`${'x'.repeat(50)}${family}`);
  });

  it('the LIKE fallback snippet never splits an emoji either', async () => {
    const { store, databasePath } = await openTestStore({ recoverFtsOnOpen: false });
    await store.createSession({ id: 's', source: 'cli' });
    await store.appendMessage('s', {
      role: 'user',
      content: `${'😀'.repeat(30)} needle ${'😀'.repeat(30)}`,
    });
    breakFtsIndex(databasePath, 'missing table');
    const hit = store.searchMessages('needle').hits[0];
    expect(store.isFtsStale()).toBe(true);
    expect(hit?.snippet).toContain('>>>needle<<<');
    expect(hit?.snippet).toSatisfy(isWellFormed);
  });
});
