import path from 'node:path';
import type { HermesConfig } from '@hermes/config';
import {
  type Clock,
  currentProcessIdentity,
  openSessionStore,
  type ProcessIdentity,
  type SessionStore,
} from '@hermes/session-store';
import type { ModelServer, RecordedRequest, ScriptedReply } from '@hermes/testkit';
import { expect, onTestFinished } from 'vitest';
import {
  type AsyncDelegationRegistry,
  createDelegationRegistry,
} from '../src/delegation/async-registry.js';
import type {
  AsyncDelegationEvent,
  DelegationTaskRecord,
} from '../src/delegation/completion-event.js';
import type { DelegationRecoveryReport } from '../src/delegation/delegation-lifecycle.js';
import { createDelegationRail, type RailRequest } from '../src/delegation/delegation-rail.js';
import { resumeDelegation } from '../src/delegation/resume-delegation.js';
import type { Agent } from '../src/loop/agent-types.js';
import { createAgent } from '../src/loop/create-agent.js';
import {
  type DelegationFixture,
  deadProcess,
  isChildRequest,
  messagesOf,
  railAgent,
  routeReplies,
} from './delegation-fixtures.js';
import { waitFor } from './fixtures.js';

/*
 * What the resumable-unit tests share: a review that hangs on its first run and answers findings
 * when run again, a way to make the fixture's own process crash under it (or only look dead to the
 * ledger), and another process (or this home's next start) on the same state.db.
 */

export const REVIEW_GOAL = 'Review: focus on errors';
export const FINDINGS = 'FINDINGS: the retry loop has no jitter and swallows the last error.';

/** The goal a subagent request works on (its first user message). */
export function goalOf(request: RecordedRequest): string {
  const first = messagesOf(request).find((message) => message.role === 'user');
  return typeof first?.content === 'string' ? first.content : '';
}

/**
 * Children: the first run of the review hangs (its process is stopped under it), any later run
 * of it answers the findings; every other goal hangs.
 */
export function reviewScript(fixture: DelegationFixture): { reviewRuns: () => number } {
  let reviewRuns = 0;
  const child = (request: RecordedRequest): ScriptedReply => {
    if (goalOf(request) !== REVIEW_GOAL) return { text: 'never', delayMs: 10_000 };
    reviewRuns += 1;
    return reviewRuns === 1 ? { text: 'never', delayMs: 10_000 } : { text: FINDINGS };
  };
  routeReplies(fixture.model, { child: Array.from({ length: 20 }, () => child) });
  return { reviewRuns: () => reviewRuns };
}

/** How a review is routed: what `/review` hands the rail. */
export type ReviewRouting = Pick<RailRequest, 'credentialsCfg' | 'fallbackProviders'>;

/** No routing of its own: the review runs on the agent's route. */
const AGENT_ROUTE: ReviewRouting = { credentialsCfg: null, fallbackProviders: [] };

export async function dispatchReview(
  agent: Agent,
  sessionId: string,
  routing: ReviewRouting = AGENT_ROUTE,
): Promise<string> {
  const rail = createDelegationRail({ agent, sessionId, sessionKey: 'agent:main:api:dm:7' });
  const dispatched = await rail.dispatch({
    goal: REVIEW_GOAL,
    context: 'The uploader retries three times.',
    ...routing,
    origin: {},
    resumable: true,
  });
  if (!('delegationId' in dispatched)) throw new Error(dispatched.error);
  expect(dispatched.mode).toBe('background');
  return dispatched.delegationId;
}

/** The review's requests `server` received (every run's, in order). */
export function reviewRequests(server: ModelServer): RecordedRequest[] {
  return server.modelRequests.filter(
    (request) => isChildRequest(request) && goalOf(request) === REVIEW_GOAL,
  );
}

export interface RunningReview {
  /** The fixture's agent the review was dispatched from (registry attached). */
  readonly agent: Agent;
  readonly sessionId: string;
  readonly reviewId: string;
}

/**
 * A resumable review dispatched on the rail from a new session of the fixture's agent (on
 * `config`, default the fixture's), once its first run's request has reached the fixture's model
 * server.
 */
export async function runningReview(
  fixture: DelegationFixture,
  options: { routing?: ReviewRouting; config?: HermesConfig } = {},
): Promise<RunningReview> {
  const agent = railAgent(fixture, options.config ? { config: options.config } : {});
  const session = await agent.createSession();
  const reviewId = await dispatchReview(agent, session.id, options.routing);
  await waitFor(() => reviewRequests(fixture.model).length > 0);
  return { agent, sessionId: session.id, reviewId };
}

/**
 * The fixture's process dies under these units, as a SIGKILL leaves them: the ledger sees their
 * owner gone (`killOwner`), and their runs stop without writing anything (the rows are no longer
 * theirs). Gives the dead owners, in the order of `delegationIds`.
 */
export async function crash(
  fixture: DelegationFixture,
  ...delegationIds: string[]
): Promise<ProcessIdentity[]> {
  const owners: ProcessIdentity[] = [];
  for (const delegationId of delegationIds) owners.push(await killOwner(fixture, delegationId));
  fixture.registry.interruptAll();
  await fixture.registry.idle();
  return owners;
}

/** A `runningReview` whose process then crashed (`crash`): its id. */
export async function crashedReview(
  fixture: DelegationFixture,
  options: { routing?: ReviewRouting; config?: HermesConfig } = {},
): Promise<string> {
  const { reviewId } = await runningReview(fixture, options);
  await crash(fixture, reviewId);
  return reviewId;
}

export interface OtherProcess {
  readonly store: SessionStore;
  readonly registry: AsyncDelegationRegistry;
  readonly published: AsyncDelegationEvent[];
  /** The registry's `warning` lifecycle events. */
  readonly warnings: string[];
}

export interface OtherProcessOptions {
  readonly clock?: Clock;
  readonly resume?: boolean;
  /** Hooks around the registry's store calls (to pin down an interleaving of two processes). */
  readonly hooks?: StoreHooks;
  /** The config this process reads (default the fixture's): what the next start finds. */
  readonly config?: HermesConfig;
}

/**
 * What another process (or this home's next start) has: its own handle on the same state.db,
 * its own registry able to resume, and an agent over them. `clock` backdates what it writes.
 */
export async function otherProcess(
  fixture: DelegationFixture,
  options: OtherProcessOptions = {},
): Promise<OtherProcess> {
  const store = await openSessionStore({
    path: path.join(fixture.home, 'state.db'),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const published: AsyncDelegationEvent[] = [];
  const warnings: string[] = [];
  let agent: Agent | undefined;
  const registry = createDelegationRegistry({
    store: options.hooks ? hooked(store, options.hooks) : store,
    home: fixture.home,
    ...(options.resume === false
      ? {}
      : { resume: (request) => resumeDelegation(request, { parent: agent as Agent }) }),
    onEvent: (event) => {
      if (event.type === 'published') published.push(event.event);
      if (event.type === 'warning') warnings.push(event.message);
    },
  });
  agent = createAgent({
    config: options.config ?? fixture.config,
    store,
    home: fixture.home,
    cwd: fixture.workdir,
    secret: () => undefined,
    delegations: registry,
  });
  // Hooks run last-registered first: the registry closes before its store.
  onTestFinished(() => store.close());
  onTestFinished(() => registry.close(2000));
  return { store, registry, published, warnings };
}

/**
 * This home's next start (an `otherProcess`): it recovers the ledger and runs what it took over to
 * the end. `report` is what its recovery returned.
 */
export async function restart(
  fixture: DelegationFixture,
  options: OtherProcessOptions = {},
): Promise<OtherProcess & { readonly report: DelegationRecoveryReport }> {
  const next = await otherProcess(fixture, options);
  const report = await next.registry.recover();
  await next.registry.idle();
  return { ...next, report };
}

export interface StoreHooks {
  /** Awaited before the call. */
  readonly before?: Partial<Record<keyof SessionStore, () => Promise<void>>>;
  /** Called after the call returned. */
  readonly after?: Partial<Record<keyof SessionStore, () => void>>;
}

/** The store with `hooks` around some of its methods. */
export function hooked(store: SessionStore, hooks: StoreHooks): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const key = property as keyof SessionStore;
      const before = hooks.before?.[key];
      const after = hooks.after?.[key];
      if (before)
        return async (...args: unknown[]) => {
          await before();
          return value.apply(target, args);
        };
      if (after)
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          after();
          return result;
        };
      return value.bind(target);
    },
  });
}

export function taskOf(store: SessionStore, delegationId: string): DelegationTaskRecord {
  return JSON.parse(store.getDelegation(delegationId)?.taskJson ?? '{}') as DelegationTaskRecord;
}

/** Makes the fixture's own process look dead to the ledger for this row (a SIGKILL, seen from the store). */
export async function killOwner(
  fixture: DelegationFixture,
  delegationId: string,
): Promise<ProcessIdentity> {
  const dead = await deadProcess();
  const taken = await fixture.store.transferDelegationOwner({
    delegationId,
    from: currentProcessIdentity(),
    to: dead,
  });
  expect(taken).toBe(true);
  return dead;
}
