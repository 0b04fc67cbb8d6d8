import { resolveConfig } from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { delegationFixture, railAgent, routeReplies } from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import { createAgent } from '../loop/create-agent.js';
import { createCompletionDelivery } from './completion-delivery.js';
import type { AsyncDelegationEvent } from './completion-event.js';
import { ownsCompletion } from './completion-ownership.js';
import { delegateTask } from './delegate-task.js';
import { COMPLETION_DISPLAY_KIND } from './delegation-limits.js';

function stub(overrides: Partial<AsyncDelegationEvent>): AsyncDelegationEvent {
  return {
    type: 'async_delegation',
    delegation_id: 'deleg_x',
    session_key: null,
    origin_ui_session_id: null,
    origin_session_id: null,
    parent_session_id: null,
    goal: 'g',
    goals: ['g'],
    context: '',
    toolsets: [],
    role: 'leaf',
    model: 'm',
    status: 'completed',
    dispatched_at: 0,
    completed_at: 0,
    is_batch: true,
    results: [],
    error: null,
    total_duration_seconds: 0,
    ...overrides,
  };
}

describe('completion ownership', () => {
  it('belongs to a session by UI session, session key, or compression lineage — never by default', async () => {
    const fixture = await delegationFixture();
    const agent = fixture.agent();
    const root = await agent.createSession({ sessionKey: 'agent:main:test:dm:1' });
    const child = await fixture.store.publishCompressionChild({
      parentId: root.id,
      summary: 'summary',
    });
    const other = await agent.createSession({ sessionKey: 'agent:main:test:dm:2' });
    const target = { sessionId: child, uiSessionId: 'ui-1' };
    expect(ownsCompletion(stub({ origin_ui_session_id: 'ui-1' }), target, fixture.store)).toBe(
      true,
    );
    expect(ownsCompletion(stub({ session_key: root.id }), target, fixture.store)).toBe(true);
    expect(ownsCompletion(stub({ origin_session_id: root.id }), target, fixture.store)).toBe(true);
    expect(
      ownsCompletion(
        stub({ session_key: 'agent:main:test:dm:1' }),
        { sessionId: root.id },
        fixture.store,
      ),
    ).toBe(true);
    expect(
      ownsCompletion(stub({ session_key: 'agent:main:test:dm:1' }), {
        sessionKey: 'agent:main:test:dm:1',
      }),
    ).toBe(true);
    expect(ownsCompletion(stub({ session_key: other.id }), target, fixture.store)).toBe(false);
    expect(ownsCompletion(stub({ origin_ui_session_id: 'ui-2' }), target, fixture.store)).toBe(
      false,
    );
    expect(ownsCompletion(stub({}), target, fixture.store)).toBe(false);
  });
});

describe('completion delivery', () => {
  it('acknowledges the ledger only once the injected message is stored', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [{ text: 'child result' }],
      parent: [{ text: 'got it' }],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Produce a result' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    const id = String(dispatched.delegation_id);
    const states: string[] = [];
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: () => session.id,
      runTurn: (options) =>
        agent.runTurn({
          ...options,
          onMessageStored: async (messageId) => {
            states.push(`before:${fixture.store.getDelegation(id)?.deliveryState}`);
            await options.onMessageStored?.(messageId);
            states.push(`after:${fixture.store.getDelegation(id)?.deliveryState}`);
          },
        }),
      pollMs: 0,
    });
    await delivery.start();
    await waitFor(() => fixture.store.getDelegation(id)?.deliveryState === 'delivered');
    await delivery.stop();
    expect(states).toEqual(['before:claimed', 'after:delivered']);
  });

  it('waits while the surface says the owner is mid-turn, and delivers once it is idle', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'child result' }], parent: [{ text: 'ok' }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Produce a result' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    let busy = true;
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: () => session.id,
      runTurn: (options) => agent.runTurn(options),
      isIdle: () => !busy,
      pollMs: 0,
      retryMs: 20,
    });
    await delivery.start();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(fixture.store.getMessages(session.id)).toEqual([]);
    busy = false;
    delivery.notifyIdle(session.id);
    const id = String(dispatched.delegation_id);
    await waitFor(() => fixture.store.getDelegation(id)?.deliveryState === 'delivered');
    await delivery.stop();
    expect(fixture.store.getMessages(session.id)[0]?.displayKind).toBe(COMPLETION_DISPLAY_KIND);
  });

  it('keeps the completion owed when the surface’s runTurn never stores the message', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'child result' }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Produce a result' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    const id = String(dispatched.delegation_id);
    let calls = 0;
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: () => session.id,
      // A broken surface: claims success without running the turn.
      runTurn: async () => {
        calls += 1;
        return {
          runId: 'r',
          sessionId: session.id,
          status: 'completed',
          exitReason: 'completed',
          finalResponse: '',
          usage: {
            inputTokens: 0,
            outputTokens: 0,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
            apiCalls: 0,
            toolCalls: 0,
          },
        };
      },
      pollMs: 0,
      retryMs: 10_000,
    });
    await delivery.start();
    await waitFor(() => calls === 1);
    await delivery.stop();
    expect(fixture.store.getDelegation(id)?.deliveryState).toBe('pending');
    expect(fixture.registry.queue.has(id)).toBe(true);
  });

  it('stores the completion without a model turn when the conversation cannot run one', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'child result' }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Produce a result' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    // The surface's agent for this conversation has no model configured (a refusal before storing).
    const unconfigured = createAgent({
      config: resolveConfig({}),
      store: fixture.store,
      home: fixture.home,
      secret: () => undefined,
    });
    const errors: unknown[] = [];
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: () => session.id,
      runTurn: (options) => unconfigured.runTurn(options),
      onError: (error) => errors.push(error),
      pollMs: 0,
    });
    await delivery.start();
    const id = String(dispatched.delegation_id);
    await waitFor(() => fixture.store.getDelegation(id)?.deliveryState === 'delivered');
    await delivery.stop();
    const rows = fixture.store.getMessages(session.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ role: 'user', displayKind: COMPLETION_DISPLAY_KIND });
    expect(rows[0]?.content).toContain('child result');
    expect(String(errors[0])).toContain('model.base_url is not set');
  });

  it('leaves a completion no session here owns in the queue and owed', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'for someone else' }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Produce a result' }] },
      {
        parent: agent,
        background: true,
        sessionId: session.id,
        origin: { sessionKey: 'elsewhere' },
      },
    );
    await fixture.registry.idle();
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: (event) => (event.session_key === 'here' ? session.id : undefined),
      runTurn: (options) => agent.runTurn(options),
      pollMs: 0,
    });
    await delivery.start();
    expect(await delivery.drain()).toBe(0);
    await delivery.stop();
    const id = String(dispatched.delegation_id);
    expect(fixture.registry.queue.has(id)).toBe(true);
    expect(fixture.store.getDelegation(id)?.deliveryState).toBe('pending');
    expect(fixture.store.getMessages(session.id)).toEqual([]);
  });
});
