import { describe, expect, it } from 'vitest';
import { REVIEW_GOAL } from './constants.js';
import type {
  DelegationDispatch,
  DelegationRail,
  DelegationRefused,
  DelegationRequest,
} from './delegation-rail.js';
import { describeReviewError } from './describe-review-error.js';
import { formatDispatchNote } from './format-dispatch-note.js';
import { ReviewEngineError } from './review-engine-error.js';
import { ReviewRefusal } from './review-refusal.js';
import { type StartReviewOptions, startReview } from './start-review.js';

/** A rail that records every request and answers with `answer`. */
function recordingRail(...answers: unknown[]) {
  // No argument: a plain background dispatch. (A rest parameter, so `recordingRail(undefined)`
  // really answers `undefined`.)
  const answer =
    answers.length === 0 ? { delegationId: 'deleg_1', mode: 'background' } : answers[0];
  const requests: DelegationRequest[] = [];
  const rail: DelegationRail = {
    async dispatch(request) {
      requests.push(request);
      return answer as DelegationDispatch | DelegationRefused;
    },
  };
  return { rail, requests };
}

const conversation = [
  { role: 'system', content: 'You are Hermes.' },
  { role: 'user', content: 'Add an auth check to DELETE /api/items/:id.' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'edit_file', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'ok' },
  { role: 'assistant', content: 'Added requireOwner() in src/routes/items.ts line 42.' },
];

async function refusalOf(options: StartReviewOptions): Promise<ReviewRefusal> {
  try {
    await startReview(options);
  } catch (error) {
    if (ReviewRefusal.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('startReview', () => {
  it('dispatches one background reviewer with the excerpt, the prompt and the standing instructions', async () => {
    const { rail, requests } = recordingRail();
    const review = await startReview({
      messages: conversation,
      instructions: 'focus on security',
      rail,
    });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.goal).toBe('Review: focus on security');
    for (const part of [
      REVIEW_GOAL,
      'Add an auth check',
      'Added requireOwner()',
      'focus on security',
    ])
      expect(request?.context).toContain(part);
    expect(request?.context).not.toContain('You are Hermes.');
    expect(review).toMatchObject({
      status: 'dispatched',
      mode: 'background',
      delegationId: 'deleg_1',
      goal: 'Review: focus on security',
      target: { kind: 'conversation' },
      instructions: 'focus on security',
      reviewModel: '',
    });
    expect(formatDispatchNote(review)).toBe('Review started. Results will return here.');
  });

  it('routes by auxiliary.review, not the delegation section, and still reports dispatched', async () => {
    const { rail, requests } = recordingRail();
    const reviewChain = [{ provider: 'openrouter', model: 'backup-reviewer' }];
    const config = {
      delegation: {
        provider: 'delegation-provider',
        model: 'delegation-model',
        fallback_providers: [{ provider: 'x' }],
      },
      auxiliary: {
        review: {
          provider: 'openrouter',
          model: 'anthropic/claude-opus-4.6',
          fallback_providers: reviewChain,
        },
      },
    };
    const review = await startReview({ messages: conversation, rail, config });
    expect(requests[0]?.credentialsCfg).toEqual({
      provider: 'openrouter',
      model: 'anthropic/claude-opus-4.6',
      baseUrl: '',
      apiKey: '',
      apiMode: '',
    });
    expect(requests[0]?.fallbackProviders).toEqual(reviewChain);
    expect(review.status).toBe('dispatched');
    expect(review.reviewModel).toBe('anthropic/claude-opus-4.6');
  });

  it('inherits the primary agent’s route (null) by default and takes the rail’s model name when given', async () => {
    const { rail, requests } = recordingRail({
      delegationId: 'd',
      mode: 'background',
      model: 'gpt-5',
    });
    const review = await startReview({
      messages: conversation,
      rail,
      config: { auxiliary: { review: { provider: 'auto' } } },
    });
    expect(requests[0]?.credentialsCfg).toBeNull();
    expect(requests[0]?.fallbackProviders).toEqual([]);
    expect(review.reviewModel).toBe('gpt-5');
  });

  it('marks the reviewer dispatch resumable: a review is safe to run again after a restart', async () => {
    const { rail, requests } = recordingRail();
    await startReview({ messages: conversation, rail, instructions: 'focus on errors' });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.resumable).toBe(true);
  });

  it('asks for a review of the recent work when given no instructions', async () => {
    const { rail, requests } = recordingRail();
    const review = await startReview({ messages: conversation, rail });
    expect(review).toMatchObject({
      goal: 'Review recent work',
      instructions: '',
      target: { kind: 'conversation' },
    });
    expect(requests[0]?.goal).toBe('Review recent work');
    expect(requests[0]?.context).not.toContain('Additional review instructions');
  });

  it('reports the pinned review model when the rail names no model of its own', async () => {
    const config = { auxiliary: { review: { model: 'pinned-reviewer' } } };
    for (const model of [undefined, '', 42]) {
      const { rail } = recordingRail({ delegationId: 'd', mode: 'background', model });
      const review = await startReview({ messages: conversation, rail, config });
      expect(review.reviewModel).toBe('pinned-reviewer');
    }
  });

  it('hands the origin to the rail unchanged', async () => {
    const { rail, requests } = recordingRail();
    const origin = {
      sessionKey: 'agent:main:test:dm:1',
      originUiSessionId: 'ui-7',
      originSessionId: 's-1',
    };
    await startReview({ messages: conversation, rail, origin });
    expect(requests[0]?.origin).toEqual(origin);
  });

  it('threads loaded skills into the dispatched briefing', async () => {
    const { rail, requests } = recordingRail();
    const messages = [
      ...conversation,
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ function: { name: 'skill_view', arguments: '{"name":"b"}' } }],
      },
    ];
    const review = await startReview({
      messages,
      rail,
      systemPrompt: 'Started with the "a" skill preloaded.',
    });
    expect(review.skills).toEqual(['a', 'b']);
    expect(requests[0]?.context).toContain('loaded skills: a, b.');
    expect(requests[0]?.context).toContain('skill_view');
  });

  it('refuses without an agent before looking at anything else', async () => {
    for (const rail of [null, undefined]) {
      const refusal = await refusalOf({ messages: [], instructions: 'base', rail });
      expect(refusal.message).toBe('No active agent — send a message first.');
      expect(refusal.code).toBe('no_active_agent');
    }
  });

  it('refuses an empty conversation and never calls the rail', async () => {
    const { rail, requests } = recordingRail();
    for (const messages of [
      [],
      [
        { role: 'system', content: 'x' },
        { role: 'assistant', content: '  ' },
      ],
    ]) {
      const refusal = await refusalOf({ messages, rail, instructions: 'anything' });
      expect(refusal.message).toBe('Nothing to review yet — the conversation is empty.');
      expect(refusal.code).toBe('empty_conversation');
      expect(refusal.message).toMatch(/empty/);
    }
    expect(requests).toHaveLength(0);
  });

  it('passes the rail’s own error through verbatim', async () => {
    const text = "delegate_task is not available in the parent agent's resolved toolset.";
    const { rail } = recordingRail({ error: text });
    const refusal = await refusalOf({ messages: conversation, rail });
    expect(refusal.message).toBe(text);
    expect(refusal.message).toMatch(/not available/);
    expect(refusal.code).toBe('dispatch_refused');
  });

  it('calls an answer that is neither a dispatch nor an error a failed dispatch, quoting it', async () => {
    const cases: [unknown, string][] = [
      ['ok', 'Review dispatch failed: "ok"'],
      [null, 'Review dispatch failed: null'],
      [undefined, 'Review dispatch failed: undefined'],
      [
        { delegationId: 'd', mode: 'later' },
        'Review dispatch failed: {"delegationId":"d","mode":"later"}',
      ],
      [{ error: '' }, 'Review dispatch failed: {"error":""}'],
      [{ error: '   ' }, 'Review dispatch failed: {"error":"   "}'],
      [{ error: 42 }, 'Review dispatch failed: {"error":42}'],
      [
        { delegationId: '', mode: 'background' },
        'Review dispatch failed: {"delegationId":"","mode":"background"}',
      ],
    ];
    for (const [answer, message] of cases) {
      const refusal = await refusalOf({ messages: conversation, rail: recordingRail(answer).rail });
      expect(refusal.message).toBe(message);
      expect(refusal.code).toBe('dispatch_failed');
    }
    const huge = await refusalOf({
      messages: conversation,
      rail: recordingRail('x'.repeat(10_000)).rail,
    });
    expect(huge.message.length).toBeLessThan(600);
    // The answer is quoted up to 500 characters; a longer one keeps 499 and ends in "…".
    expect(huge.message).toBe(`Review dispatch failed: "${'x'.repeat(498)}…`);
    const fits = await refusalOf({
      messages: conversation,
      rail: recordingRail('x'.repeat(498)).rail,
    });
    expect(fits.message).toBe(`Review dispatch failed: "${'x'.repeat(498)}"`);
  });

  it('lets an unexpected rail failure through as such, for the surface to report', async () => {
    const rail: DelegationRail = {
      dispatch: async () => {
        throw new Error('socket closed');
      },
    };
    const failure = await startReview({ messages: conversation, rail }).catch(
      (error: unknown) => error,
    );
    expect(ReviewRefusal.isInstance(failure)).toBe(false);
    expect(describeReviewError(failure)).toBe('/review failed to start: socket closed');
  });

  it('reports a review the rail ran synchronously with its model, focus and results', async () => {
    const { rail } = recordingRail({
      delegationId: 'deleg_2',
      mode: 'sync',
      model: 'reviewer-1',
      note: 'ran synchronously: no async channel',
      result: {
        results: [{ task_index: 0, status: 'completed', summary: 'REVIEW: looks good ✓' }],
      },
    });
    const review = await startReview({
      messages: conversation,
      rail,
      instructions: '  the tests  ',
    });
    expect(review).toMatchObject({
      status: 'completed',
      mode: 'sync',
      note: 'ran synchronously: no async channel',
    });
    const note = formatDispatchNote(review);
    expect(
      note.startsWith(
        '⚖ Review completed synchronously on reviewer-1 (focus: the tests) — results:\n{',
      ),
    ).toBe(true);
    expect(note).toContain('REVIEW: looks good ✓');
  });

  it('refuses a git target without its argument before calling git or the rail', async () => {
    const { rail, requests } = recordingRail();
    const refusal = await refusalOf({ messages: conversation, rail, instructions: 'commit' });
    expect(refusal.message).toBe(
      'Usage: /review [uncommitted | base <branch> | commit <sha> | review instructions]',
    );
    expect(requests).toHaveLength(0);
  });

  it('treats messages that are not a list as a programming error, not a refusal', async () => {
    const { rail } = recordingRail();
    const failure = await startReview({ messages: 'hi' as never, rail }).catch(
      (error: unknown) => error,
    );
    expect(ReviewEngineError.isInstance(failure) && failure.code).toBe('invalid_argument');
    expect((failure as Error).message).toBe('startReview: messages must be an array');
    expect(ReviewRefusal.isInstance(failure)).toBe(false);
  });
});
