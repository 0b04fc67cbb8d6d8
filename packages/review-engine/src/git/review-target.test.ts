import { describe, expect, it } from 'vitest';
import { REVIEW_USAGE } from '../review-messages.js';
import { ReviewRefusal } from '../review-refusal.js';
import { parseReviewRequest } from './review-target.js';

function refusal(input: string): ReviewRefusal {
  try {
    parseReviewRequest(input);
  } catch (error) {
    if (ReviewRefusal.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('parseReviewRequest', () => {
  it('reads free-form instructions about the conversation, newlines kept', () => {
    expect(parseReviewRequest('  focus on security\nand error paths ')).toEqual({
      target: { kind: 'conversation' },
      instructions: 'focus on security\nand error paths',
    });
    expect(parseReviewRequest('')).toEqual({ target: { kind: 'conversation' }, instructions: '' });
    expect(parseReviewRequest('baseline numbers look off')).toEqual({
      target: { kind: 'conversation' },
      instructions: 'baseline numbers look off',
    });
  });

  it('reads the three git targets, case-insensitively, with optional instructions', () => {
    expect(parseReviewRequest('uncommitted')).toEqual({
      target: { kind: 'uncommitted' },
      instructions: '',
    });
    expect(parseReviewRequest('Uncommitted  check the tests')).toEqual({
      target: { kind: 'uncommitted' },
      instructions: 'check the tests',
    });
    expect(parseReviewRequest('base origin/main is the PR ok?')).toEqual({
      target: { kind: 'base', branch: 'origin/main' },
      instructions: 'is the PR ok?',
    });
    expect(parseReviewRequest('commit ABC1234\nlook at locking')).toEqual({
      target: { kind: 'commit', sha: 'abc1234' },
      instructions: 'look at locking',
    });
  });

  it('answers the usage line when a target lacks its argument', () => {
    for (const input of ['base', 'commit', 'BASE   ', 'commit\n'])
      expect(refusal(input)).toMatchObject({ code: 'review_usage', message: REVIEW_USAGE });
  });

  it('refuses a branch git would read as an option, and a SHA that is not hexadecimal', () => {
    expect(refusal('base --output=/tmp/pwned').message).toBe(
      'Unable to prepare git review: "--output=/tmp/pwned" is not a valid branch name (it cannot start with "-" or contain control characters).',
    );
    expect(refusal('base -p').code).toBe('review_usage');
    expect(refusal('base ma\u0007in').code).toBe('review_usage');
    expect(refusal('commit HEAD~1').message).toBe(
      'Unable to prepare git review: "HEAD~1" is not a commit SHA — give 4 to 64 hex digits (see git log --oneline).',
    );
    expect(refusal('commit abc').code).toBe('review_usage');
    expect(refusal('commit --all').code).toBe('review_usage');
  });

  it('quotes a refused argument whole up to 80 characters, and cuts a longer one to 79 plus …', () => {
    const eighty = `-${'b'.repeat(79)}`;
    expect(refusal(`base ${eighty}`).message).toBe(
      `Unable to prepare git review: "${eighty}" is not a valid branch name (it cannot start with "-" or contain control characters).`,
    );
    const long = `-${'b'.repeat(120)}`;
    expect(refusal(`base ${long}`).message).toBe(
      `Unable to prepare git review: "${long.slice(0, 79)}…" is not a valid branch name (it cannot start with "-" or contain control characters).`,
    );
  });
});
