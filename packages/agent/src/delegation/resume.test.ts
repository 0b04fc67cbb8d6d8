import path from 'node:path';
import {
  DELEGATION_OWNER_EXITED_MESSAGE,
  DELEGATION_RESTORE_MAX_AGE_SECONDS,
  openSessionStore,
  type ProcessIdentity,
  RELEASED_DELEGATION_OWNER,
} from '@hermes/session-store';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  deadProcess,
  delegationFixture,
  gate,
  isChildRequest,
  railAgent,
  routeReplies,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import {
  crash,
  crashedReview,
  dispatchReview,
  FINDINGS,
  killOwner,
  type OtherProcess,
  otherProcess,
  REVIEW_GOAL,
  restart,
  reviewScript,
  runningReview,
  taskOf,
} from '../../test/resume-fixtures.js';
import type { Agent } from '../loop/agent-types.js';
import { createAgent } from '../loop/create-agent.js';
import { createDelegationRegistry } from './async-registry.js';
import type { AsyncDelegationEvent } from './completion-event.js';
import { delegateTask } from './delegate-task.js';
import { DELEGATION_MAX_RESUMES } from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES, DELEGATION_NOTES } from './delegation-messages.js';
import { formatAsyncDelegation } from './format-async-delegation.js';
import { resumeDelegation } from './resume-delegation.js';

describe('resumable delegation units', () => {
  it('a graceful close leaves a resumable unit running for the next start, which runs it again and publishes the real findings once, marked resumed', async () => {
    const fixture = await delegationFixture();
    const script = reviewScript(fixture);
    const { agent, sessionId, reviewId } = await runningReview(fixture);
    const plain = await delegateTask(
      { tasks: [{ goal: 'Count the files in src plainly' }] },
      { parent: agent, background: true, sessionId },
    );
    await waitFor(() => fixture.model.modelRequests.filter(isChildRequest).length === 2);
    const first = taskOf(fixture.store, reviewId);
    expect(first).toMatchObject({ resumable: true, resume_count: 0 });

    await fixture.registry.close();
    // The plain unit is finalised interrupted, as always; the review is not finalised at all.
    expect(fixture.published.map((event) => event.delegation_id)).toEqual([plain.delegation_id]);
    expect(fixture.published[0]?.results[0]?.status).toBe('interrupted');
    expect(fixture.store.getDelegation(reviewId)).toMatchObject({ state: 'running', ownerPid: 0 });

    const next = await restart(fixture);
    expect(next.report.resumed).toEqual([reviewId]);
    expect(next.report.orphaned).toEqual([]);
    expect(script.reviewRuns()).toBe(2);
    expect(next.published).toHaveLength(1);
    const [event] = next.published;
    expect(event).toMatchObject({
      delegation_id: reviewId,
      status: 'completed',
      session_key: 'agent:main:api:dm:7',
      origin_session_id: sessionId,
      parent_session_id: sessionId,
      resumed: 1,
    });
    expect(event?.results[0]).toMatchObject({
      status: 'completed',
      summary: FINDINGS,
      subagent_id: first.subagent_ids[0],
      task_index: 0,
    });
    const text = formatAsyncDelegation(event as AsyncDelegationEvent);
    expect(text).toContain(FINDINGS);
    expect(text).toContain(DELEGATION_NOTES.resumed(1));
    expect(next.store.getDelegation(reviewId)?.state).toBe('completed');
    expect(taskOf(next.store, reviewId).resume_count).toBe(1);
    // A graceful stop spends none of the crash budget.
    expect(taskOf(next.store, reviewId).crash_resumes ?? 0).toBe(0);
    // Recovering again finds nothing to resume and nothing new to publish.
    expect((await next.registry.recover()).resumed).toEqual([]);
    expect(next.published).toHaveLength(1);
  });

  it('two registries on one state.db recovering a dead owner’s resumable unit at once: exactly one runs it again', async () => {
    const fixture = await delegationFixture();
    const script = reviewScript(fixture);
    const { reviewId } = await runningReview(fixture);
    // Dead to the ledger while its run goes on: that run must not publish after the takeover.
    await killOwner(fixture, reviewId);

    // Both read the row as a dead owner's before either tries to take it.
    let rightListed = () => {};
    const listed = new Promise<void>((resolve) => {
      rightListed = resolve;
    });
    const left = await otherProcess(fixture, {
      hooks: { before: { transferDelegationOwner: () => listed } },
    });
    const right = await otherProcess(fixture, {
      hooks: { after: { listLiveDelegations: () => rightListed() } },
    });
    const reports = await Promise.all([left.registry.recover(), right.registry.recover()]);
    expect(reports.flatMap((report) => report.resumed)).toEqual([reviewId]);
    expect(reports.flatMap((report) => report.orphaned)).toEqual([]);
    await Promise.all([left.registry.idle(), right.registry.idle()]);
    expect(script.reviewRuns()).toBe(2);
    const published = [...left.published, ...right.published];
    expect(published).toHaveLength(1);
    expect(published[0]?.results[0]?.summary).toBe(FINDINGS);

    // The stopped run, should it still end, cannot overwrite or publish anything.
    fixture.registry.interruptAll();
    await fixture.registry.idle();
    expect(fixture.published).toEqual([]);
    expect(fixture.store.getDelegation(reviewId)?.state).toBe('completed');
  });

  it('ends unknown as before: a plain delegate_task unit, a resumable one past its resume budget, and one older than 48 h', async () => {
    const fixture = await delegationFixture();
    const script = reviewScript(fixture);
    const { agent, sessionId, reviewId } = await runningReview(fixture);
    const plain = await delegateTask(
      { tasks: [{ goal: 'Count the files in src plainly' }] },
      { parent: agent, background: true, sessionId },
    );
    const plainId = String(plain.delegation_id);
    await waitFor(() => fixture.model.modelRequests.filter(isChildRequest).length === 2);
    const resumable = taskOf(fixture.store, reviewId);
    expect(taskOf(fixture.store, plainId).resumable).toBeUndefined();
    const [, reviewOwner] = (await crash(fixture, plainId, reviewId)) as [
      ProcessIdentity,
      ProcessIdentity,
    ];

    const dead = await deadProcess();
    const twoDaysAgo = Date.now() / 1000 - DELEGATION_RESTORE_MAX_AGE_SECONDS - 3600;
    const past = await otherProcess(fixture, {
      clock: { now: () => twoDaysAgo, monotonicMs: () => performance.now() },
      resume: false,
    });
    await past.store.recordDelegationStart({
      delegationId: 'deleg_old00001',
      sessionKey: sessionId,
      parentSessionId: sessionId,
      task: resumable,
      owner: dead,
    });
    // The review row itself was already run again once after a crash.
    expect(
      await fixture.store.transferDelegationOwner({
        delegationId: reviewId,
        from: reviewOwner,
        to: reviewOwner,
        task: {
          ...resumable,
          resume_count: DELEGATION_MAX_RESUMES,
          crash_resumes: DELEGATION_MAX_RESUMES,
        },
      }),
    ).toBe(true);

    const next = await restart(fixture);
    expect(next.report.resumed).toEqual([]);
    expect(next.report.orphaned.sort()).toEqual([plainId, reviewId, 'deleg_old00001'].sort());
    for (const id of [plainId, reviewId, 'deleg_old00001']) {
      expect(next.store.getDelegation(id)?.state).toBe('unknown');
      expect(next.store.getDelegation(id)?.error).toBe(DELEGATION_OWNER_EXITED_MESSAGE);
    }
    expect(script.reviewRuns()).toBe(1);
  });

  it('a /stop still finalises a resumable unit as interrupted and publishes it', async () => {
    const fixture = await delegationFixture();
    reviewScript(fixture);
    const { reviewId } = await runningReview(fixture);
    expect(fixture.registry.interruptAll('stop')).toBe(1);
    await fixture.registry.idle();
    expect(fixture.published.map((event) => event.delegation_id)).toEqual([reviewId]);
    expect(fixture.published[0]?.results[0]?.status).toBe('interrupted');
    expect(fixture.store.getDelegation(reviewId)?.state).not.toBe('running');
    // Nothing is left for a later start to run again.
    expect((await restart(fixture)).report.resumed).toEqual([]);
  });

  it('a graceful stop spends no resume: a unit stopped by two closes in a row is run a third time and published once', async () => {
    const fixture = await delegationFixture();
    let reviewRuns = 0;
    routeReplies(fixture.model, {
      child: Array.from({ length: 5 }, () => () => {
        reviewRuns += 1;
        return reviewRuns < 3
          ? { text: 'never', delayMs: 10_000 }
          : { text: 'FINDINGS: third time lucky' };
      }),
    });
    const { reviewId } = await runningReview(fixture);
    await fixture.registry.close();
    const second = await otherProcess(fixture);
    expect((await second.registry.recover()).resumed).toEqual([reviewId]);
    await waitFor(() => reviewRuns === 2);
    await second.registry.close();
    // Suspended again, not finalised interrupted: nothing published, the row still running.
    expect(second.published).toEqual([]);
    expect(second.store.getDelegation(reviewId)?.state).toBe('running');
    const third = await restart(fixture);
    expect(third.report.resumed).toEqual([reviewId]);
    expect(third.published).toHaveLength(1);
    expect(third.published[0]).toMatchObject({ delegation_id: reviewId, resumed: 2 });
    expect(third.published[0]?.results[0]?.summary).toContain('FINDINGS: third time lucky');
    expect(formatAsyncDelegation(third.published[0] as AsyncDelegationEvent)).toContain(
      DELEGATION_NOTES.resumed(2),
    );
    expect(taskOf(third.store, reviewId)).toMatchObject({ resume_count: 2 });
    expect(taskOf(third.store, reviewId).crash_resumes ?? 0).toBe(0);
    expect(reviewRuns).toBe(3);
  });

  it('a resumable unit that cannot be built again ends unknown with the reason, published once', async () => {
    const fixture = await delegationFixture();
    reviewScript(fixture);
    const reviewId = await crashedReview(fixture);
    const store = await openSessionStore({ path: path.join(fixture.home, 'state.db') });
    const published: AsyncDelegationEvent[] = [];
    const registry = createDelegationRegistry({
      store,
      home: fixture.home,
      resume: async () => {
        throw new Error('the model route is gone');
      },
      onEvent: (event) => {
        if (event.type === 'published') published.push(event.event);
      },
    });
    onTestFinished(() => store.close());
    onTestFinished(() => registry.close(2000));
    const report = await registry.recover();
    expect(report.resumed).toEqual([]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ delegation_id: reviewId, status: 'unknown', resumed: 1 });
    expect(published[0]?.error).toBe(
      DELEGATION_ERROR_MESSAGES.resumeFailed('the model route is gone'),
    );
    expect(store.getDelegation(reviewId)?.state).toBe('unknown');
    const text = formatAsyncDelegation(published[0] as AsyncDelegationEvent);
    expect(text).toContain(`TASK 1/1: ${REVIEW_GOAL}  (outcome=unknown, status=unknown`);
    expect(text).toContain('the model route is gone');
  });
  it('a close while recovery is still building a taken-over unit waits for it and gives the row back untouched, so the next start still runs it (was: the unit started after close and its one resume was spent)', async () => {
    const fixture = await delegationFixture();
    const script = reviewScript(fixture);
    const reviewId = await crashedReview(fixture);

    const dbPath = path.join(fixture.home, 'state.db');
    const store = await openSessionStore({ path: dbPath });
    const building = gate();
    const resumeCalled = gate();
    let parent: Agent | undefined;
    const registry = createDelegationRegistry({
      store,
      home: fixture.home,
      resume: async (request) => {
        resumeCalled.open();
        await building.promise;
        return resumeDelegation(request, { parent: parent as Agent });
      },
    });
    parent = createAgent({
      config: fixture.config,
      store,
      home: fixture.home,
      cwd: fixture.workdir,
      secret: () => undefined,
      delegations: registry,
    });
    const recovering = registry.recover();
    await resumeCalled.promise;
    // Shutdown as a profile runtime does it: the registry, then at once its store.
    const closing = registry.close();
    building.open();
    await closing;
    await store.close();
    await recovering.catch(() => undefined);

    const next = await otherProcess(fixture);
    expect(next.store.getDelegation(reviewId)).toMatchObject({ state: 'running', ownerPid: 0 });
    expect(taskOf(next.store, reviewId).resume_count).toBe(0);
    expect((await next.registry.recover()).resumed).toEqual([reviewId]);
    await next.registry.idle();
    expect(next.published).toHaveLength(1);
    expect(next.published[0]).toMatchObject({ delegation_id: reviewId, resumed: 1 });
    expect(next.published[0]?.results[0]?.summary).toBe(FINDINGS);
    expect(script.reviewRuns()).toBe(2);
  });
});

describe('resumed units and max_concurrent_children', () => {
  /**
   * Two reviews suspended by a graceful close, and the next start's process, whose
   * `delegation.max_concurrent_children` is 1. Their first runs hang; of the runs after the restart
   * the first waits for `release`, every later one answers the findings at once.
   */
  async function twoSuspendedReviews() {
    const fixture = await delegationFixture();
    const release = gate();
    let runs = 0;
    /** How many completions the next process had published when each later run began. */
    const publishedAtStart: number[] = [];
    let next: OtherProcess | undefined;
    routeReplies(fixture.model, {
      child: Array.from({ length: 10 }, () => async () => {
        runs += 1;
        if (runs <= 2) return { text: 'never', delayMs: 10_000 };
        publishedAtStart.push(next?.published.length ?? -1);
        if (runs === 3) await release.promise;
        return { text: FINDINGS };
      }),
    });
    onTestFinished(() => release.open());
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const ids = [await dispatchReview(agent, session.id), await dispatchReview(agent, session.id)];
    await waitFor(() => runs === 2);
    await fixture.registry.close();
    const config = {
      ...fixture.config,
      delegation: { ...fixture.config.delegation, maxConcurrentChildren: 1 },
    };
    next = await otherProcess(fixture, { config });
    return { fixture, next, ids, release, runs: () => runs, publishedAtStart };
  }

  it('units resumed beyond the limit wait for a free slot and run one after another, each publishing its findings (was: all ran at once)', async () => {
    const { next, ids, release, publishedAtStart } = await twoSuspendedReviews();
    const report = await next.registry.recover();
    expect([...report.resumed].sort()).toEqual([...ids].sort());
    expect(next.registry.running).toBe(1);
    expect(next.registry.list().map((listing) => listing.status)).toEqual(['running', 'queued']);
    release.open();
    await next.registry.idle();
    // The second began only once the first had published.
    expect(publishedAtStart).toEqual([0, 1]);
    expect(next.published.map((event) => event.delegation_id)).toEqual(ids);
    expect(next.published.map((event) => event.results[0]?.summary)).toEqual([FINDINGS, FINDINGS]);
  });

  it('a /stop finalises a unit still waiting for a slot as interrupted without running it', async () => {
    const { next, ids, runs } = await twoSuspendedReviews();
    await next.registry.recover();
    await waitFor(() => runs() === 3);
    expect(next.registry.list().map((listing) => listing.status)).toEqual(['running', 'queued']);
    expect(next.registry.interruptAll('stop')).toBe(2);
    await next.registry.idle();
    expect(runs()).toBe(3);
    expect(next.published.map((event) => event.delegation_id).sort()).toEqual([...ids].sort());
    for (const event of next.published) expect(event.results[0]?.status).toBe('interrupted');
    expect(next.store.getDelegation(ids[1] as string)?.state).not.toBe('running');
    // The one that waited never ran after the restart: its completion claims no resumed run.
    const waited = next.published.find((event) => event.delegation_id === ids[1]);
    expect(waited?.resumed).toBeUndefined();
    expect(formatAsyncDelegation(waited as AsyncDelegationEvent)).not.toContain(
      'Resumed after a restart',
    );
    expect(next.published.find((event) => event.delegation_id === ids[0])?.resumed).toBe(1);
  });

  it('a unit taken over after a crash spends its crash resume only when it starts: while it waits for a slot its row still has it (a crash then leaves it resumable)', async () => {
    const { next, ids, release, runs } = await twoSuspendedReviews();
    // Both rows as a crash leaves them: held by a process that is gone.
    for (const id of ids) {
      const dead = await deadProcess();
      expect(
        await next.store.transferDelegationOwner({
          delegationId: id,
          from: RELEASED_DELEGATION_OWNER,
          to: dead,
        }),
      ).toBe(true);
    }
    await next.registry.recover();
    await waitFor(() => runs() === 3);
    const [running, waiting] = ids as [string, string];
    expect(taskOf(next.store, running)).toMatchObject({ crash_resumes: 1, resume_count: 1 });
    // Waiting: taken over (owned by this process) but not counted, so had this process died now,
    // the next start would still run it.
    expect(taskOf(next.store, waiting).crash_resumes ?? 0).toBe(0);
    expect(taskOf(next.store, waiting).resume_count ?? 0).toBe(0);
    expect(next.store.getDelegation(waiting)).toMatchObject({
      state: 'running',
      ownerPid: process.pid,
    });
    release.open();
    await next.registry.idle();
    expect(taskOf(next.store, waiting)).toMatchObject({ crash_resumes: 1, resume_count: 1 });
    expect(next.published.map((event) => event.results[0]?.summary)).toEqual([FINDINGS, FINDINGS]);
  });

  it('a close while a resumed unit waits for a slot gives its row back unrun, resume not spent, and the next start runs both', async () => {
    const { fixture, next, ids, release, runs } = await twoSuspendedReviews();
    await next.registry.recover();
    await waitFor(() => runs() === 3);
    await next.registry.close();
    release.open();
    expect(next.published).toEqual([]);
    const [running, waiting] = ids as [string, string];
    expect(next.store.getDelegation(running)).toMatchObject({ state: 'running', ownerPid: 0 });
    expect(next.store.getDelegation(waiting)).toMatchObject({ state: 'running', ownerPid: 0 });
    expect(taskOf(next.store, running).resume_count).toBe(1);
    expect(taskOf(next.store, waiting).resume_count).toBe(0);

    const third = await restart(fixture);
    expect([...third.report.resumed].sort()).toEqual([...ids].sort());
    expect(third.published.map((event) => event.results[0]?.summary)).toEqual([FINDINGS, FINDINGS]);
    expect(runs()).toBe(5);
  });

  it('the units of one split call share one slot after a restart, as at dispatch: what ran side by side before a graceful close runs side by side after it (was: each unit took a slot of its own and the review waited)', async () => {
    const fixture = await delegationFixture({
      raw: { delegation: { max_concurrent_children: 2, independent_completions: true } },
    });
    const release = gate();
    onTestFinished(() => release.open());
    let runs = 0;
    // First runs hang (the close stops them); the runs after the restart answer once released.
    routeReplies(fixture.model, {
      child: Array.from({ length: 10 }, () => async () => {
        runs += 1;
        if (runs <= 3) return { text: 'never', delayMs: 10_000 };
        await release.promise;
        return { text: FINDINGS };
      }),
    });
    const { agent, sessionId } = await runningReview(fixture);
    const split = await delegateTask(
      { tasks: [{ goal: 'Count the files in src' }, { goal: 'Summarise the README' }] },
      { parent: agent, background: true, sessionId, resumable: true },
    );
    const unitIds = (split.units as { delegation_id: string }[]).map((unit) => unit.delegation_id);
    expect(unitIds).toHaveLength(2);
    // Two slots, both taken: the review's and the split call's.
    await waitFor(() => runs === 3);
    expect(fixture.registry.running).toBe(3);
    await fixture.registry.close();

    const next = await otherProcess(fixture);
    const report = await next.registry.recover();
    // The review (a unit of its own call) and the split call's two units.
    expect(report.resumed).toHaveLength(3);
    expect(report.resumed).toEqual(expect.arrayContaining(unitIds));
    expect(next.registry.list().map((listing) => listing.status)).toEqual([
      'running',
      'running',
      'running',
    ]);
    expect(next.registry.running).toBe(3);
    release.open();
    await next.registry.idle();
    expect(next.published.map((event) => event.delegation_id).sort()).toEqual(
      [...report.resumed].sort(),
    );
    for (const event of next.published) expect(event.results[0]?.summary).toBe(FINDINGS);
  });
});
