import { describe, expect, it } from 'vitest';
import { delegationFixture, isChildRequest, railAgent } from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import {
  FINDINGS,
  killOwner,
  otherProcess,
  REVIEW_GOAL,
  reviewScript,
} from '../../test/resume-fixtures.js';
import { createDelegationRail } from './delegation-rail.js';

/*
 * The route and keys a resumable unit runs with when it is run again: keys are never in the
 * ledger, so they come from the live config — and the agent's own key never goes to an endpoint
 * it was not configured for.
 */

describe('resumed units: routes and keys', () => {
  it('a resumed review pinned to an endpoint with its own key, whose key the live config no longer holds, ends unknown naming that instead of sending the agent’s key there', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: 'sk-main-agent' } } });
    const script = reviewScript(fixture);
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const rail = createDelegationRail({ agent, sessionId: session.id });
    const dispatched = await rail.dispatch({
      goal: REVIEW_GOAL,
      context: 'The uploader retries three times.',
      // The reviewer's own endpoint and key (here the same scripted server, to see the key sent).
      credentialsCfg: {
        provider: '',
        model: 'review-model',
        baseUrl: fixture.model.baseUrl,
        apiKey: 'sk-review-own',
        apiMode: '',
      },
      fallbackProviders: [],
      origin: {},
      resumable: true,
    });
    if (!('delegationId' in dispatched)) throw new Error(dispatched.error);
    const reviewId = dispatched.delegationId;
    await waitFor(() => script.reviewRuns() === 1);
    const keysSent = () =>
      fixture.model.modelRequests
        .filter(isChildRequest)
        .map((request) => String(request.headers.authorization ?? ''));
    expect(keysSent()).toEqual(['Bearer sk-review-own']);
    expect(fixture.store.getDelegation(reviewId)?.taskJson).not.toContain('sk-review-own');
    await killOwner(fixture, reviewId);
    fixture.registry.interruptAll();
    await fixture.registry.idle();

    // The next start's config has no `auxiliary.review` block any more.
    const next = await otherProcess(fixture);
    const report = await next.registry.recover();
    expect(report.resumed).toEqual([]);
    await next.registry.idle();
    expect(keysSent()).not.toContain('Bearer sk-main-agent');
    expect(next.published).toHaveLength(1);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'unknown' });
    expect(next.published[0]?.error).toContain('auxiliary.review');
    expect(next.published[0]?.error).toContain('API key');
  });
  it('a resumed review pinned to an endpoint with its own key takes that key from the live auxiliary.review again', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: 'sk-main-agent' } } });
    const script = reviewScript(fixture);
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const route = {
      provider: '',
      model: 'review-model',
      baseUrl: fixture.model.baseUrl,
      apiKey: 'sk-review-own',
      apiMode: '',
    };
    const rail = createDelegationRail({ agent, sessionId: session.id });
    const dispatched = await rail.dispatch({
      goal: REVIEW_GOAL,
      context: 'The uploader retries three times.',
      credentialsCfg: route,
      fallbackProviders: [],
      origin: {},
      resumable: true,
    });
    if (!('delegationId' in dispatched)) throw new Error(dispatched.error);
    await waitFor(() => script.reviewRuns() === 1);
    await killOwner(fixture, dispatched.delegationId);
    fixture.registry.interruptAll();
    await fixture.registry.idle();

    const live = fixture.config.auxiliary.review;
    const next = await otherProcess({
      ...fixture,
      config: {
        ...fixture.config,
        auxiliary: {
          ...fixture.config.auxiliary,
          review: { ...live, model: route.model, baseUrl: route.baseUrl, apiKey: route.apiKey },
        },
      },
    });
    expect((await next.registry.recover()).resumed).toEqual([dispatched.delegationId]);
    await next.registry.idle();
    const keysSent = fixture.model.modelRequests
      .filter(isChildRequest)
      .map((request) => String(request.headers.authorization ?? ''));
    expect(keysSent).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });
});
