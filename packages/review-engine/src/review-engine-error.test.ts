import { describe, expect, it } from 'vitest';
import { ReviewEngineError } from './review-engine-error.js';
import { ReviewRefusal } from './review-refusal.js';

describe('ReviewEngineError and ReviewRefusal', () => {
  it('recognise the package’s own errors, also from another copy of the package, and nothing else', () => {
    const refusal = new ReviewRefusal('git_clean', 'clean');
    const misuse = new ReviewEngineError({ code: 'invalid_argument', message: 'wrong call' });
    expect(ReviewEngineError.isInstance(refusal)).toBe(true);
    expect(ReviewEngineError.isInstance(misuse)).toBe(true);
    expect(ReviewRefusal.isInstance(refusal)).toBe(true);
    expect(ReviewRefusal.isInstance(misuse)).toBe(false);
    // What an error from a second install of this package carries.
    const fromAnotherCopy = {
      [Symbol.for('@hermes/review-engine.error')]: true,
      [Symbol.for('@hermes/review-engine.refusal')]: true,
    };
    expect(ReviewEngineError.isInstance(fromAnotherCopy)).toBe(true);
    expect(ReviewRefusal.isInstance(fromAnotherCopy)).toBe(true);
    for (const other of [null, undefined, 'No active agent', 42, {}, new Error('x')]) {
      expect(ReviewEngineError.isInstance(other)).toBe(false);
      expect(ReviewRefusal.isInstance(other)).toBe(false);
    }
  });

  it('carry name, code and message, and a cause only when there is one', () => {
    const cause = new Error('spawn git ENOENT');
    const refusal = new ReviewRefusal('git_failed', 'Unable to prepare git review: …', cause);
    expect(refusal).toMatchObject({
      name: 'ReviewRefusal',
      code: 'git_failed',
      message: 'Unable to prepare git review: …',
    });
    expect(refusal.cause).toBe(cause);
    expect('cause' in new ReviewRefusal('git_clean', 'clean')).toBe(false);
    expect(new ReviewEngineError({ code: 'invalid_argument', message: 'm' }).name).toBe(
      'ReviewEngineError',
    );
  });
});
