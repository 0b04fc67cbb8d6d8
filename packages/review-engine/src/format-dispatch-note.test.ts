import { describe, expect, it } from 'vitest';
import { SYNC_PREVIEW_MAX_CHARS } from './constants.js';
import { describeReviewError } from './describe-review-error.js';
import { formatDispatchNote } from './format-dispatch-note.js';
import { ReviewRefusal } from './review-refusal.js';

describe('formatDispatchNote', () => {
  it('is one short line for a background review and never echoes the prompt', () => {
    const prompt = 'focus on the secret token handling';
    const note = formatDispatchNote(
      { status: 'dispatched', reviewModel: 'm', instructions: prompt },
      prompt,
    );
    expect(note).toBe('Review started. Results will return here.');
    expect(note).not.toContain('focus');
    expect(note).not.toContain('\n');
    expect(note.length).toBeLessThan(80);
  });

  it('names model and focus for a synchronous review, then previews its results as JSON', () => {
    const results = [{ summary: 'Ünïcode stays as is — 東京' }];
    const note = formatDispatchNote(
      { status: 'completed', reviewModel: 'reviewer-1', result: { results } },
      ' tests ',
    );
    expect(note).toBe(
      `⚖ Review completed synchronously on reviewer-1 (focus: tests) — results:\n${JSON.stringify({ results }, null, 2)}`,
    );
    expect(note).toContain('東京');
  });

  it('leaves out model and focus when there are none and previews the whole review without a result', () => {
    const review = { status: 'completed', reviewModel: '', instructions: '' };
    expect(formatDispatchNote(review)).toBe(
      `⚖ Review completed synchronously — results:\n${JSON.stringify(review, null, 2)}`,
    );
    const bare = { status: 'completed', result: 'done' };
    expect(formatDispatchNote(bare)).toBe('⚖ Review completed synchronously — results:\n"done"');
  });

  it('previews at most 4,000 characters of the result', () => {
    const note = formatDispatchNote({ status: 'completed', result: 'x'.repeat(20_000) });
    const [, preview] = note.split('\n');
    expect(preview).toHaveLength(SYNC_PREVIEW_MAX_CHARS);
  });
});

describe('describeReviewError', () => {
  it('shows a refusal verbatim and anything else as a failed start', () => {
    expect(
      describeReviewError(
        new ReviewRefusal(
          'empty_conversation',
          'Nothing to review yet — the conversation is empty.',
        ),
      ),
    ).toBe('Nothing to review yet — the conversation is empty.');
    expect(describeReviewError(new TypeError('boom'))).toBe('/review failed to start: boom');
    expect(describeReviewError('odd')).toBe('/review failed to start: odd');
    expect(describeReviewError(null)).toBe('/review failed to start: null');
    expect(describeReviewError(undefined)).toBe('/review failed to start: undefined');
  });
});
