import { type HermesConfig, resolveConfig } from '@hermes/config';
import { resolveReviewFallbackProviders, resolveReviewRouting } from '@hermes/review-engine';
import type { ModelServer } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  type DelegationFixture,
  delegationFixture,
  isChildRequest,
  railAgent,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import {
  FINDINGS,
  killOwner,
  otherProcess,
  REVIEW_GOAL,
  reviewScript,
} from '../../test/resume-fixtures.js';
import { createDelegationRail } from './delegation-rail.js';

const MAIN_KEY = 'sk-main-agent';

/**
 * The `Authorization` headers of the subagent requests `server` received, in order (with `all`,
 * of every request, refused ones too: a 401 is answered before the body is read).
 */
function keysSent(server: ModelServer, all = false): string[] {
  return (all ? server.requests : server.modelRequests.filter(isChildRequest)).map((request) =>
    String(request.headers.authorization ?? ''),
  );
}

/** The fixture's home as the next start reads it: its model block (and key) plus `raw`. */
function liveConfig(fixture: DelegationFixture, raw: Record<string, unknown>): HermesConfig {
  return resolveConfig({
    ...raw,
    model: { base_url: fixture.model.baseUrl, default: 'test-model', api_key: MAIN_KEY },
  });
}

/**
 * Dispatches a resumable review routed as `/review` routes it from a config whose
 * `auxiliary.review` is `review`, waits for its first run to start, then makes its owner look
 * dead (a SIGKILL seen from the ledger).
 */
async function crashedPinnedReview(
  fixture: DelegationFixture,
  review: Record<string, unknown>,
  firstRunStarted: () => boolean,
  config?: HermesConfig,
): Promise<string> {
  const agent = railAgent(fixture, config ? { config } : {});
  const session = await agent.createSession();
  const raw = { auxiliary: { review } };
  const rail = createDelegationRail({ agent, sessionId: session.id });
  const dispatched = await rail.dispatch({
    goal: REVIEW_GOAL,
    context: 'The uploader retries three times.',
    credentialsCfg: resolveReviewRouting(raw),
    fallbackProviders: resolveReviewFallbackProviders(raw),
    origin: {},
    resumable: true,
  });
  if (!('delegationId' in dispatched)) throw new Error(dispatched.error);
  await waitFor(firstRunStarted);
  await killOwner(fixture, dispatched.delegationId);
  fixture.registry.interruptAll();
  await fixture.registry.idle();
  return dispatched.delegationId;
}

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
  it('a resumed review pinned to an endpoint with its own key keeps that key when only the live auxiliary.review model changed (was: ended unknown)', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    const script = reviewScript(fixture);
    const route = {
      base_url: fixture.model.baseUrl,
      model: 'review-model',
      api_key: 'sk-review-own',
    };
    const reviewId = await crashedPinnedReview(fixture, route, () => script.reviewRuns() === 1);

    const next = await otherProcess(fixture, {
      config: liveConfig(fixture, { auxiliary: { review: { ...route, model: 'review-model-2' } } }),
    });
    expect((await next.registry.recover()).resumed).toEqual([reviewId]);
    await next.registry.idle();
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'completed' });
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });

  it('a resumed review pinned to a named provider with its own key keeps that key when only the live model changed (was: sent without it)', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    const script = reviewScript(fixture);
    const hosted = { reviewhost: { base_url: fixture.model.baseUrl } };
    const route = { provider: 'reviewhost', model: 'review-model', api_key: 'sk-review-own' };
    const reviewId = await crashedPinnedReview(
      fixture,
      route,
      () => script.reviewRuns() === 1,
      liveConfig(fixture, { providers: hosted }),
    );

    const next = await otherProcess(fixture, {
      config: liveConfig(fixture, {
        providers: hosted,
        auxiliary: { review: { ...route, model: 'review-model-2' } },
      }),
    });
    expect((await next.registry.recover()).resumed).toEqual([reviewId]);
    await next.registry.idle();
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });
});
