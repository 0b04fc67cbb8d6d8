import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatDispatchNote, REVIEW_GOAL, startReview } from '@hermes/review-engine';
import { startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  completionHeader,
  createCompletionDelivery,
  createDelegationRail,
  ownsCompletion,
} from '../src/index.js';
import {
  delegationFixture,
  isChildRequest,
  messagesOf,
  railAgent,
  routeReplies,
  systemOf,
} from './delegation-fixtures.js';
import { waitFor } from './fixtures.js';

/**
 * `/review` end to end on the default rail: review-engine's `startReview` over
 * `createDelegationRail`, the reviewer a real child agent on the async rail against the testkit
 * model server, its completion on the queue with the originating session key, then delivered
 * into that conversation.
 */
describe('/review on the agent’s delegation rail', () => {
  it('runs the reviewer in the background and brings its review back to the originating chat', async () => {
    const fixture = await delegationFixture();
    await writeFile(path.join(fixture.workdir, 'AGENTS.md'), 'Security issues block a merge.\n');
    routeReplies(fixture.model, {
      parent: [
        { text: 'I added a login form that stores the password in localStorage.' },
        { text: 'Thanks — I will move the password out of localStorage.' },
      ],
      child: [{ text: 'REVIEW: the password must not be stored in localStorage.' }],
    });
    const agent = railAgent(fixture);
    const sessionKey = 'agent:main:test:dm:1';
    const session = await agent.createSession({ sessionKey });
    await agent.runTurn({
      sessionId: session.id,
      message: 'Add a login form.',
      origin: { sessionKey },
    });
    const messages = fixture.store
      .getMessages(session.id)
      .map((row) => ({ role: row.role, content: row.content }));

    const review = await startReview({
      messages,
      instructions: 'focus on security',
      rail: createDelegationRail({ agent, sessionId: session.id }),
      config: {},
      origin: { sessionKey, originSessionId: session.id },
    });
    expect(review).toMatchObject({ status: 'dispatched', mode: 'background' });
    expect(formatDispatchNote(review)).toBe('Review started. Results will return here.');

    await fixture.registry.idle();
    const [event] = fixture.registry.queue.peek();
    expect(event).toMatchObject({
      type: 'async_delegation',
      delegation_id: review.delegationId,
      session_key: sessionKey,
      origin_session_id: session.id,
      status: 'completed',
    });
    expect(event?.goal.startsWith('Review: focus on security')).toBe(true);
    expect(event?.results[0]?.summary).toBe(
      'REVIEW: the password must not be stored in localStorage.',
    );
    const reviewer = fixture.model.modelRequests.find(isChildRequest);
    const system = reviewer ? systemOf(reviewer) : '';
    expect(system).toContain(REVIEW_GOAL);
    expect(system).toContain('[USER]\nAdd a login form.');
    expect(system).toContain('[PRIMARY AGENT]\nI added a login form');
    expect(system).toContain('focus on security');
    expect(system).toContain('Security issues block a merge.');
    expect(messagesOf(reviewer as never)[1]).toEqual({
      role: 'user',
      content: 'Review: focus on security',
    });

    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: (completion) =>
        ownsCompletion(completion, { sessionId: session.id, sessionKey }, fixture.store)
          ? session.id
          : undefined,
      runTurn: (options) => agent.runTurn(options),
      pollMs: 0,
    });
    await delivery.start();
    await waitFor(
      () => fixture.store.getDelegation(review.delegationId)?.deliveryState === 'delivered',
    );
    await delivery.stop();
    const rows = fixture.store.getMessages(session.id);
    const injected = rows.at(-2);
    expect(injected?.content?.startsWith(completionHeader(review.delegationId))).toBe(true);
    expect(injected?.content).toContain('TASK 1/1: Review: focus on security');
    expect(injected?.content).toContain('REVIEW: the password must not be stored in localStorage.');
    expect(rows.at(-1)?.content).toBe('Thanks — I will move the password out of localStorage.');
  });

  it('names the review by the id its completion carries when independent completions split every call', async () => {
    const fixture = await delegationFixture({
      raw: { delegation: { independent_completions: true } },
    });
    routeReplies(fixture.model, {
      parent: [{ text: 'I renamed the config loader.' }],
      child: [{ text: 'REVIEW: the old name is still exported.' }],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'Rename the loader.' });
    const review = await startReview({
      messages: fixture.store
        .getMessages(session.id)
        .map((row) => ({ role: row.role, content: row.content })),
      rail: createDelegationRail({ agent, sessionId: session.id }),
      config: {},
      origin: { originSessionId: session.id },
    });
    expect(review).toMatchObject({ status: 'dispatched', mode: 'background' });
    await fixture.registry.idle();
    const [event] = fixture.registry.queue.peek();
    expect(event?.delegation_id).toBe(review.delegationId);
    expect(fixture.store.getDelegation(review.delegationId)).toMatchObject({ state: 'completed' });
  });

  it('runs a pinned auxiliary.review route on its own server with its own fallback chain only', async () => {
    const reviewServer = await startModelServer({ script: [{ error: { status: 503 } }] });
    const reviewBackup = await startModelServer({
      script: [{ text: 'REVIEW: from the review backup' }],
    });
    const delegationBackup = await startModelServer({ script: [{ text: 'WRONG chain' }] });
    onTestFinished(async () => {
      await Promise.all([reviewServer.close(), reviewBackup.close(), delegationBackup.close()]);
    });
    const raw = {
      agent: { api_max_retries: 0 },
      fallback_providers: [{ provider: 'custom', base_url: delegationBackup.baseUrl, model: 'x' }],
      delegation: {
        fallback_providers: [
          { provider: 'custom', base_url: delegationBackup.baseUrl, model: 'x' },
        ],
      },
      auxiliary: {
        review: {
          provider: 'auto',
          model: 'review-model',
          base_url: reviewServer.baseUrl,
          api_key: 'review-key',
          fallback_providers: [
            { provider: 'custom', base_url: reviewBackup.baseUrl, model: 'review-backup-model' },
          ],
        },
      },
    };
    const fixture = await delegationFixture({ raw });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const review = await startReview({
      messages: [
        { role: 'user', content: 'Ship it?' },
        { role: 'assistant', content: 'It is ready.' },
      ],
      instructions: 'focus on security',
      rail: createDelegationRail({ agent, sessionId: session.id }),
      config: raw,
    });
    expect(review.reviewModel).toBe('review-model');
    await fixture.registry.idle();
    expect(fixture.published[0]?.results[0]).toMatchObject({
      status: 'completed',
      summary: 'REVIEW: from the review backup',
    });
    expect((reviewServer.modelRequests[0]?.body as { model?: string } | undefined)?.model).toBe(
      'review-model',
    );
    expect(reviewBackup.modelRequests).toHaveLength(1);
    expect(delegationBackup.modelRequests).toHaveLength(0);
    expect(fixture.model.modelRequests).toHaveLength(0);
  });
});
