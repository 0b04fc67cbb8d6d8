import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  delegationFixture,
  gate,
  railAgent,
  routeReplies,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { defineTool } from '../tools/define-tool.js';
import { delegateTask } from './delegate-task.js';
import type { DelegationLifecycleEvent } from './delegation-lifecycle.js';

const stall = { checkIntervalMs: 50, idleMs: 300, inToolMs: 500, graceMs: 400 };

describe('the stall monitor', () => {
  it('finalises a unit that ignores its interrupt as stalled, with its metadata, exactly once', async () => {
    const toolMayReturn = gate();
    const stubborn = defineTool({
      name: 'stubborn',
      toolset: 'file',
      description: 'ignores interrupts',
      parameters: v.object({}),
      run: async () => {
        await toolMayReturn.promise;
        return 'finally';
      },
    });
    const lifecycle: DelegationLifecycleEvent[] = [];
    const fixture = await delegationFixture({
      registry: { stall, onEvent: (event) => lifecycle.push(event) },
    });
    routeReplies(fixture.model, {
      child: [{ toolCalls: [{ name: 'stubborn', arguments: {} }] }, { text: 'late answer' }],
    });
    const agent = railAgent(fixture, { tools: [...BUILTIN_TOOLS, stubborn] });
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Call the stubborn tool' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    const id = String(dispatched.delegation_id);
    await waitFor(() => fixture.published.length === 1, 5000);
    const [event] = fixture.published;
    expect(event).toMatchObject({
      delegation_id: id,
      status: 'stalled',
      stall_phase: 'in_tool',
      stall_threshold_seconds: 0.5,
      stall_grace_seconds: 0.4,
    });
    expect(event?.stalled_after_quiet_seconds).toBeGreaterThanOrEqual(0.5);
    expect(event?.error).toMatch(
      new RegExp(
        `^Async delegation ${id} stalled: .*Re-dispatch the task if it is still needed\\.$`,
      ),
    );
    const kinds = lifecycle.map((entry) => entry.type);
    expect(kinds.indexOf('stalling')).toBeLessThan(kinds.indexOf('stalled'));
    expect(fixture.store.getDelegation(id)?.state).toBe('stalled');
    // The late return of the runner changes nothing.
    toolMayReturn.open();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fixture.published).toHaveLength(1);
    expect(fixture.store.getDelegation(id)?.state).toBe('stalled');
  });

  it('never stalls work that keeps streaming', async () => {
    const fixture = await delegationFixture({ registry: { stall } });
    routeReplies(fixture.model, {
      child: [{ text: 'word '.repeat(60), chunkSize: 5, chunkDelayMs: 25 }],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'Stream a long answer' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    expect(fixture.published[0]).toMatchObject({ status: 'completed' });
    expect(fixture.published[0]?.results[0]?.summary).toBe('word '.repeat(60));
  });

  it('lets a unit that answers its interrupt within the grace period keep its own result', async () => {
    const fixture = await delegationFixture({ registry: { stall } });
    routeReplies(fixture.model, { child: [{ text: 'never sent', delayMs: 5000 }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'Wait on a silent model' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    const [event] = fixture.published;
    expect(event?.status).not.toBe('stalled');
    expect(event?.results[0]).toMatchObject({ status: 'interrupted', exit_reason: 'interrupted' });
  });
});

describe('interrupts', () => {
  it('interruptAll stops every unit and each still publishes its completion', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [
        { text: 'never', delayMs: 10_000 },
        { text: 'never', delayMs: 10_000 },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'First background wait' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await delegateTask(
      { tasks: [{ goal: 'Second background wait' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await waitFor(() => fixture.model.modelRequests.length === 2);
    expect(fixture.registry.list({ originSessionId: session.id })).toHaveLength(2);
    expect(fixture.registry.interruptAll('stop')).toBe(2);
    await fixture.registry.idle();
    expect(fixture.published.map((event) => event.results[0]?.status)).toEqual([
      'interrupted',
      'interrupted',
    ]);
  });

  it('interruptForSession stops only that conversation', async () => {
    const fixture = await delegationFixture();
    const release = gate();
    routeReplies(fixture.model, {
      child: [
        { text: 'never', delayMs: 10_000 },
        async () => {
          await release.promise;
          return { text: 'kept going' };
        },
      ],
    });
    const agent = railAgent(fixture);
    const first = await agent.createSession();
    const second = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'Belongs to the first chat' }] },
      { parent: agent, background: true, sessionId: first.id, origin: { sessionKey: 'chat-1' } },
    );
    await waitFor(() => fixture.model.modelRequests.length === 1);
    await delegateTask(
      { tasks: [{ goal: 'Belongs to the second chat' }] },
      { parent: agent, background: true, sessionId: second.id, origin: { sessionKey: 'chat-2' } },
    );
    await waitFor(() => fixture.model.modelRequests.length === 2);
    expect(fixture.registry.interruptForSession({ sessionKey: 'chat-1' })).toBe(1);
    await waitFor(() => fixture.published.length === 1);
    expect(fixture.published[0]).toMatchObject({ session_key: 'chat-1' });
    release.open();
    await fixture.registry.idle();
    expect(fixture.published[1]?.results[0]).toMatchObject({
      status: 'completed',
      summary: 'kept going',
    });
  });
});
