import { describe, expect, it } from 'vitest';
import {
  delegationFixture,
  gate,
  isChildRequest,
  messagesOf,
  railAgent,
  routeReplies,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import { createCompletionDelivery } from './completion-delivery.js';
import { ownsCompletion } from './completion-ownership.js';
import { COMPLETION_DISPLAY_KIND } from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES, DELEGATION_NOTES } from './delegation-messages.js';
import { completionHeader } from './format-async-delegation.js';

describe('the async rail', () => {
  it('runs a top-level delegation in the background and its completion lands on the queue with the routing identity', async () => {
    const fixture = await delegationFixture();
    const childMayFinish = gate();
    routeReplies(fixture.model, {
      parent: [
        {
          toolCalls: [
            {
              id: 'd1',
              name: 'delegate_task',
              arguments: {
                tasks: [{ goal: 'Count the files in src', context: 'Use search_files.' }],
              },
            },
          ],
        },
        { text: 'I delegated the count; it will come back.' },
      ],
      child: [
        async () => {
          await childMayFinish.promise;
          return { text: 'There are 3 files.' };
        },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'How many files?',
      origin: { sessionKey: 'agent:main:test:dm:1', uiSessionId: 'ui-7' },
    });
    // The parent's turn ended while the child was still waiting for its model.
    expect(result.finalResponse).toBe('I delegated the count; it will come back.');
    expect(fixture.published).toHaveLength(0);
    const toolRow = fixture.store.getMessages(session.id).find((row) => row.role === 'tool');
    const dispatched = JSON.parse(toolRow?.content ?? '{}');
    expect(dispatched).toMatchObject({
      status: 'dispatched',
      mode: 'background',
      count: 1,
      goals: ['Count the files in src'],
      note: DELEGATION_NOTES.dispatched(1),
    });
    // Durable before visible: the ledger row exists while the child runs.
    expect(fixture.store.getDelegation(dispatched.delegation_id)).toMatchObject({
      state: 'running',
      sessionKey: 'agent:main:test:dm:1',
      originUiSessionId: 'ui-7',
      parentSessionId: session.id,
    });

    childMayFinish.open();
    await fixture.registry.idle();
    expect(fixture.registry.queue.size).toBe(1);
    const [event] = fixture.registry.queue.peek();
    expect(event).toMatchObject({
      type: 'async_delegation',
      delegation_id: dispatched.delegation_id,
      session_key: 'agent:main:test:dm:1',
      origin_ui_session_id: 'ui-7',
      origin_session_id: session.id,
      parent_session_id: session.id,
      status: 'completed',
      is_batch: true,
      goal: 'Count the files in src',
      context: 'Use search_files.',
      role: 'leaf',
      model: 'test-model',
    });
    expect(event?.results[0]).toMatchObject({
      task_index: 0,
      status: 'completed',
      summary: 'There are 3 files.',
      exit_reason: 'completed',
      truncated: false,
      api_calls: 1,
    });
    expect(fixture.store.getDelegation(dispatched.delegation_id)).toMatchObject({
      state: 'completed',
      deliveryState: 'pending',
    });
    // The child's goal was its first user message; its context the end of its system prompt.
    const childRequest = fixture.model.modelRequests.find(isChildRequest);
    const childMessages = childRequest ? messagesOf(childRequest) : [];
    expect(childMessages[1]).toEqual({ role: 'user', content: 'Count the files in src' });
    expect(String(childMessages[0]?.content)).toMatch(/CONTEXT:\nUse search_files\.$/);
  });

  it('injects a completion into the owning session only, between turns, and settles the ledger after the turn is stored', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [{ text: 'REVIEW: looks good' }],
      parent: [{ text: 'Thanks — the review says it looks good.' }],
    });
    const agent = railAgent(fixture);
    const owner = await agent.createSession({ sessionKey: 'chat-a' });
    const bystander = await agent.createSession({ sessionKey: 'chat-b' });
    const { delegateTask } = await import('./delegate-task.js');
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Review the change', context: 'diff here' }] },
      { parent: agent, background: true, sessionId: owner.id, origin: { sessionKey: 'chat-a' } },
    );
    expect(dispatched.status).toBe('dispatched');
    await fixture.registry.idle();

    // The owner is mid-turn (its lease is held): nothing is injected.
    const holder = await fixture.store.acquireTurnLease(owner.id);
    const delivered: string[] = [];
    const delivery = createCompletionDelivery({
      registry: fixture.registry,
      owner: (event) =>
        [owner, bystander].find((session) =>
          ownsCompletion(event, { sessionId: session.id }, fixture.store),
        )?.id,
      runTurn: (options) => agent.runTurn(options),
      onDelivered: (entry) => delivered.push(entry.sessionId),
      pollMs: 0,
      retryMs: 50,
    });
    await delivery.start();
    await delivery.drain();
    expect(delivered).toEqual([]);
    expect(fixture.registry.queue.size).toBe(1);
    expect(fixture.store.getDelegation(String(dispatched.delegation_id))?.deliveryState).toBe(
      'pending',
    );

    await fixture.store.releaseTurnLease(owner.id, holder as string);
    delivery.notifyIdle(owner.id);
    await waitFor(() => delivered.length === 1);
    await delivery.stop();
    expect(delivered).toEqual([owner.id]);
    const rows = fixture.store.getMessages(owner.id);
    expect(rows.map((row) => [row.role, row.displayKind])).toEqual([
      ['user', COMPLETION_DISPLAY_KIND],
      ['assistant', null],
    ]);
    expect(rows[0]?.content).toContain(completionHeader(String(dispatched.delegation_id)));
    expect(rows[0]?.content).toContain('REVIEW: looks good');
    expect(fixture.store.getMessages(bystander.id)).toEqual([]);
    expect(fixture.store.getDelegation(String(dispatched.delegation_id))?.deliveryState).toBe(
      'delivered',
    );
  });

  it('runs inline with the no_async note when nothing can deliver a later result', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'inline answer' }] });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const { delegateTask } = await import('./delegate-task.js');
    const result = await delegateTask(
      { tasks: [{ goal: 'Answer inline please' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    expect(result).toMatchObject({ mode: 'sync', note: DELEGATION_NOTES.noAsync });
    expect((result.results as { summary: string }[])[0]?.summary).toBe('inline answer');
  });

  it('rejects at capacity and runs the whole batch inline with the at_capacity note', async () => {
    const fixture = await delegationFixture({
      raw: { delegation: { max_concurrent_children: 1 } },
    });
    const release = gate();
    routeReplies(fixture.model, {
      child: [
        async () => {
          await release.promise;
          return { text: 'first done' };
        },
        { text: 'second done inline' },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const { delegateTask } = await import('./delegate-task.js');
    const first = await delegateTask(
      { tasks: [{ goal: 'First long job' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    expect(first.status).toBe('dispatched');
    await waitFor(() => fixture.model.modelRequests.length === 1);
    const second = await delegateTask(
      { tasks: [{ goal: 'Second job' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    expect(second).toMatchObject({ mode: 'sync', note: DELEGATION_NOTES.atCapacity(1) });
    expect((second.results as { summary: string }[])[0]?.summary).toBe('second done inline');
    // The registry itself says why, in the reference's words.
    const rejected = await fixture.registry.dispatch({
      delegationId: 'deleg_probe',
      slotKey: 'deleg_probe',
      task: {
        goal: 'x',
        goals: ['x'],
        context: '',
        toolsets: [],
        role: 'leaf',
        model: 'test-model',
        origin_session_id: null,
        task_indexes: [0],
        subagent_ids: [],
      },
      origin: {},
      maxConcurrent: 1,
      run: async () => ({ results: [], total_duration_seconds: 0 }),
    });
    expect(rejected).toEqual({
      status: 'rejected',
      error: DELEGATION_ERROR_MESSAGES.capacity(1),
      capacity: true,
    });
    release.open();
    await fixture.registry.idle();
  });
});
