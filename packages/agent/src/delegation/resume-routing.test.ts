import { type HermesConfig, resolveConfig } from '@hermes/config';
import { resolveReviewFallbackProviders, resolveReviewRouting } from '@hermes/review-engine';
import { type ModelServer, type ScriptedReply, startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type DelegationFixture,
  delegationFixture,
  isChildRequest,
  railAgent,
  routeReplies,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import {
  crash,
  crashedReview,
  FINDINGS,
  REVIEW_GOAL,
  restart,
  reviewScript,
  runningReview,
} from '../../test/resume-fixtures.js';
import { delegateTask } from './delegate-task.js';

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
 * The review's children on the fixture's server: the first run hangs (its process is stopped under
 * it), every later run gets `later`.
 */
function primaryScript(fixture: DelegationFixture, later: ScriptedReply): () => number {
  let runs = 0;
  routeReplies(fixture.model, {
    child: Array.from({ length: 10 }, () => () => {
      runs += 1;
      return runs === 1 ? { text: 'never', delayMs: 10_000 } : later;
    }),
  });
  return () => runs;
}

/**
 * A resumable review routed as `/review` routes it from a config whose `auxiliary.review` is
 * `review`, dispatched from the fixture's agent (on `config`, default the fixture's), whose process
 * crashed under its first run.
 */
function crashedPinnedReview(
  fixture: DelegationFixture,
  review: Record<string, unknown>,
  config?: HermesConfig,
): Promise<string> {
  const raw = { auxiliary: { review } };
  const routing = {
    credentialsCfg: resolveReviewRouting(raw),
    fallbackProviders: resolveReviewFallbackProviders(raw),
  };
  return crashedReview(fixture, { routing, ...(config ? { config } : {}) });
}

/**
 * The reviewer's own endpoint and key, handed to the rail as they are (the fixture's own scripted
 * server, to see the key it is sent).
 */
function ownEndpoint(fixture: DelegationFixture) {
  return {
    provider: '',
    model: 'review-model',
    baseUrl: fixture.model.baseUrl,
    apiKey: 'sk-review-own',
    apiMode: '',
  };
}

/** A second model server that answers only its own key (401 to any other). */
async function backupServer(key: string): Promise<ModelServer> {
  const server = await startModelServer({ apiKey: key });
  onTestFinished(() => server.close());
  server.push(...Array.from({ length: 5 }, () => ({ text: FINDINGS })));
  return server;
}

/** A provider answer that sends the call down the fallback chain at once (no retry wait). */
const MOVE_ON: ScriptedReply = { error: { status: 429, message: 'slow down', retryAfterS: 3600 } };

/*
 * The route and keys a resumable unit runs with when it is run again: keys are never in the
 * ledger, so they come from the live config — and the agent's own key never goes to an endpoint
 * it was not configured for.
 */

describe('resumed units: routes and keys', () => {
  it('a resumed review pinned to an endpoint with its own key, whose key the live config no longer holds, ends unknown naming that instead of sending the agent’s key there', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    reviewScript(fixture);
    const routing = { credentialsCfg: ownEndpoint(fixture), fallbackProviders: [] };
    const { reviewId } = await runningReview(fixture, { routing });
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own']);
    expect(fixture.store.getDelegation(reviewId)?.taskJson).not.toContain('sk-review-own');
    await crash(fixture, reviewId);

    // The next start's config has no `auxiliary.review` block any more.
    const next = await restart(fixture);
    expect(next.report.resumed).toEqual([]);
    expect(keysSent(fixture.model)).not.toContain(`Bearer ${MAIN_KEY}`);
    expect(next.published).toHaveLength(1);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'unknown' });
    expect(next.published[0]?.error).toContain('auxiliary.review');
    expect(next.published[0]?.error).toContain('API key');
  });
  it('a resumed review pinned to an endpoint with its own key takes that key from the live auxiliary.review again', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    reviewScript(fixture);
    const route = ownEndpoint(fixture);
    const reviewId = await crashedReview(fixture, {
      routing: { credentialsCfg: route, fallbackProviders: [] },
    });

    const live = fixture.config.auxiliary.review;
    const next = await restart(fixture, {
      config: {
        ...fixture.config,
        auxiliary: {
          ...fixture.config.auxiliary,
          review: { ...live, model: route.model, baseUrl: route.baseUrl, apiKey: route.apiKey },
        },
      },
    });
    expect(next.report.resumed).toEqual([reviewId]);
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });
  it('a resumed review’s keyed fallback endpoint gets its own key from the live auxiliary.review chain (was: the agent’s key, refused with 401)', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    const primaryRuns = primaryScript(fixture, MOVE_ON);
    const backup = await backupServer('sk-backup-own');
    const review = {
      base_url: fixture.model.baseUrl,
      model: 'review-model',
      api_key: 'sk-review-own',
      fallback_providers: [
        { base_url: backup.baseUrl, model: 'backup-model', api_key: 'sk-backup-own' },
      ],
    };
    const reviewId = await crashedPinnedReview(fixture, review);
    expect(fixture.store.getDelegation(reviewId)?.taskJson).not.toContain('sk-backup-own');

    const next = await restart(fixture, {
      config: liveConfig(fixture, { auxiliary: { review } }),
    });
    expect(next.report.resumed).toEqual([reviewId]);
    expect(primaryRuns()).toBe(2);
    expect(keysSent(backup, true)).toEqual(['Bearer sk-backup-own']);
    expect(next.published).toHaveLength(1);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'completed' });
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });

  it('a resumed review drops a keyed fallback whose key the live config no longer holds, with a warning, and never sends it the agent’s key', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    const primaryRuns = primaryScript(fixture, MOVE_ON);
    const backup = await backupServer('sk-backup-own');
    const route = {
      base_url: fixture.model.baseUrl,
      model: 'review-model',
      api_key: 'sk-review-own',
    };
    const reviewId = await crashedPinnedReview(fixture, {
      ...route,
      fallback_providers: [
        { base_url: backup.baseUrl, model: 'backup-model', api_key: 'sk-backup-own' },
      ],
    });

    // The next start's auxiliary.review keeps its route but no longer has that backup.
    const next = await restart(fixture, {
      config: liveConfig(fixture, { auxiliary: { review: route } }),
    });
    expect(next.report.resumed).toEqual([reviewId]);
    expect(backup.requests).toEqual([]);
    expect(next.warnings.join('\n')).toContain(backup.baseUrl);
    expect(next.published).toHaveLength(1);
    // The review ran again on its own route, which had nothing to fall back to.
    expect(primaryRuns()).toBe(2);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'error' });
    expect(next.published[0]?.results[0]?.error).toContain('slow down');
  });

  it('a resumed review keeps a named-provider fallback whose own key left the live chain, on that provider’s configured key', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    primaryScript(fixture, MOVE_ON);
    const backup = await backupServer('sk-backuphost');
    const providers = { backuphost: { base_url: backup.baseUrl, api_key: 'sk-backuphost' } };
    const route = {
      base_url: fixture.model.baseUrl,
      model: 'review-model',
      api_key: 'sk-review-own',
    };
    const reviewId = await crashedPinnedReview(
      fixture,
      {
        ...route,
        fallback_providers: [{ provider: 'backuphost', model: 'backup-model', api_key: 'sk-old' }],
      },
      liveConfig(fixture, { providers }),
    );

    const next = await restart(fixture, {
      config: liveConfig(fixture, { providers, auxiliary: { review: route } }),
    });
    expect(next.report.resumed).toEqual([reviewId]);
    expect(keysSent(backup, true)).toEqual(['Bearer sk-backuphost']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });

  it.each([
    [
      'only the live auxiliary.review model changed',
      (route: Record<string, string>) => ({ ...route, model: 'review-model-2' }),
    ],
    [
      'the live auxiliary.review writes the same base URL with a trailing slash',
      (route: Record<string, string>) => ({ ...route, base_url: `${route.base_url}/` }),
    ],
  ] as const)(
    'a resumed review pinned to an endpoint with its own key keeps that key when %s (was: ended unknown)',
    async (_change, live) => {
      const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
      reviewScript(fixture);
      const route = {
        base_url: fixture.model.baseUrl,
        model: 'review-model',
        api_key: 'sk-review-own',
      };
      const reviewId = await crashedPinnedReview(fixture, route);

      const next = await restart(fixture, {
        config: liveConfig(fixture, { auxiliary: { review: live(route) } }),
      });
      expect(next.report.resumed).toEqual([reviewId]);
      expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
      expect(next.published[0]).toMatchObject({ delegation_id: reviewId, status: 'completed' });
      expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
    },
  );

  it('a resumed review pinned to a named provider with its own key keeps that key when only the live model changed (was: sent without it)', async () => {
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY } } });
    reviewScript(fixture);
    const hosted = { reviewhost: { base_url: fixture.model.baseUrl } };
    const route = { provider: 'reviewhost', model: 'review-model', api_key: 'sk-review-own' };
    const reviewId = await crashedPinnedReview(
      fixture,
      route,
      liveConfig(fixture, { providers: hosted }),
    );

    const next = await restart(fixture, {
      config: liveConfig(fixture, {
        providers: hosted,
        auxiliary: { review: { ...route, model: 'review-model-2' } },
      }),
    });
    expect(next.report.resumed).toEqual([reviewId]);
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-review-own', 'Bearer sk-review-own']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });

  it('a resumed unit routed by a pinned delegation section (own base_url and key) runs on the live section with its key; nothing of it is stored', async () => {
    const deputy = await startModelServer({ apiKey: 'sk-deleg-own' });
    onTestFinished(() => deputy.close());
    deputy.push({ text: 'never', delayMs: 10_000 }, { text: FINDINGS });
    const delegation = { base_url: deputy.baseUrl, model: 'deleg-model', api_key: 'sk-deleg-own' };
    const fixture = await delegationFixture({ raw: { model: { api_key: MAIN_KEY }, delegation } });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: REVIEW_GOAL }] },
      { parent: agent, background: true, sessionId: session.id, resumable: true },
    );
    const unitId = String(dispatched.delegation_id);
    await waitFor(() => deputy.modelRequests.length === 1);
    expect(fixture.store.getDelegation(unitId)?.taskJson).not.toContain('sk-deleg-own');
    await crash(fixture, unitId);

    const next = await restart(fixture);
    expect(next.report.resumed).toEqual([unitId]);
    expect(keysSent(deputy, true)).toEqual(['Bearer sk-deleg-own', 'Bearer sk-deleg-own']);
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
  });
});
