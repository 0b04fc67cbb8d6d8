import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { getHermesHome, getSecret, withHomeScope } from '@hermes/config';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  delegationFixture,
  gate,
  isChildRequest,
  messagesOf,
  railAgent,
  routeReplies,
  systemOf,
} from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import type { AgentEvent } from '../events.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { defineTool } from '../tools/define-tool.js';
import { buildChildren } from './build-children.js';
import type { ChildResult } from './child-result.js';
import { delegateTask } from './delegate-task.js';
import { delegationRouting, resolveChildRuntime } from './resolve-child-runtime.js';
import { type BatchEvent, runBatch } from './run-batch.js';
import { SubagentTracker } from './subagent-tracker.js';

describe('delegation behaviours', () => {
  it('runs nested orchestration end to end: an orchestrator child delegates inline to a leaf', async () => {
    const fixture = await delegationFixture({ raw: { delegation: { max_spawn_depth: 2 } } });
    fixture.model.push(
      // The orchestrator (depth 1) delegates; at depth 1 the call waits for its worker.
      async (request) => {
        expect(systemOf(request)).toContain('NOTE: You are at depth 1.');
        return {
          toolCalls: [
            {
              id: 'n1',
              name: 'delegate_task',
              arguments: { tasks: [{ goal: 'Leaf: count the lines' }] },
            },
          ],
        };
      },
      async (request) => {
        // The leaf (depth 2) cannot delegate further.
        const tools = (
          (request.body as { tools?: { function: { name: string } }[] }).tools ?? []
        ).map((tool) => tool.function.name);
        expect(tools).not.toContain('delegate_task');
        return { text: '12 lines' };
      },
      async (request) => {
        const last = messagesOf(request).at(-1);
        expect(last?.role).toBe('tool');
        expect(String(last?.content)).toContain('12 lines');
        return { text: 'The leaf says 12 lines.' };
      },
    );
    const parent = railAgent(fixture);
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Orchestrate a line count' }] },
      { parent, sessionId: session.id },
    );
    const [entry] = result.results as ChildResult[];
    expect(entry).toMatchObject({ status: 'completed', summary: 'The leaf says 12 lines.' });
    const firstBody = fixture.model.modelRequests[0]?.body as
      | { tools?: { function: { name: string } }[] }
      | undefined;
    const tools = (firstBody?.tools ?? []).map((tool) => tool.function.name);
    expect(tools).toContain('delegate_task');
    // The leaf's session hangs off the orchestrator's, which hangs off the conversation.
    const orchestrator = fixture.store.getSession(entry?.session_id as string);
    expect(orchestrator?.parentSessionId).toBe(session.id);
    const leafRequest = fixture.model.modelRequests[1];
    expect(leafRequest && isChildRequest(leafRequest)).toBe(true);
  });

  it('denies commands that need approval in a subagent unless subagent_auto_approve allows them once', async () => {
    for (const [autoApprove, expected] of [
      [false, /denied/i],
      [true, /^(?!.*denied)/is],
    ] as const) {
      const fixture = await delegationFixture({
        raw: { delegation: { subagent_auto_approve: autoApprove } },
      });
      await mkdir(path.join(fixture.workdir, 'scratch'));
      routeReplies(fixture.model, {
        child: [
          { toolCalls: [{ id: 'rm', name: 'terminal', arguments: { command: 'rm -rf scratch' } }] },
          { text: 'done' },
        ],
      });
      const parent = fixture.agent();
      const session = await parent.createSession();
      await delegateTask(
        { tasks: [{ goal: 'Clean the scratch folder' }] },
        { parent, sessionId: session.id },
      );
      const second = fixture.model.modelRequests.filter(isChildRequest)[1];
      const toolResult = String(messagesOf(second as never).at(-1)?.content);
      expect(toolResult).toMatch(expected);
      expect(existsSync(path.join(fixture.workdir, 'scratch'))).toBe(!autoApprove);
    }
  });

  it('reports a heartbeat while a child works and a completion line when it ends', async () => {
    const fixture = await delegationFixture();
    const release = gate();
    routeReplies(fixture.model, {
      child: [
        async () => {
          await release.promise;
          return { text: 'finished' };
        },
      ],
    });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const runtime = resolveChildRuntime(parent, delegationRouting(parent.config.delegation));
    if ('error' in runtime) throw new Error(runtime.error);
    const children = await buildChildren({
      parent,
      tasks: [{ goal: 'Beat while waiting for the model', context: '' }],
      runtime,
      parentSessionId: session.id,
      cwd: fixture.workdir,
    });
    const events: BatchEvent[] = [];
    const running = runBatch({
      delegationId: 'deleg_heartbeat',
      children,
      maxConcurrent: 1,
      tracker: new SubagentTracker(),
      owners: [session.id],
      home: fixture.home,
      timeoutSeconds: 0,
      maxSummaryChars: 0,
      setNumber: 7,
      heartbeatMs: 40,
      onEvent: (event) => events.push(event),
    });
    await waitFor(() => events.filter((event) => event.type === 'subagent.progress').length >= 2);
    release.open();
    await running;
    const progress = events.find((event) => event.type === 'subagent.progress');
    expect(progress && 'text' in progress ? progress.text : '').toBe(
      `delegate_task: subagent running model call (iteration 1/${parent.config.delegation.maxIterations})`,
    );
    const completed = events.find((event) => event.type === 'subagent.completed');
    expect(completed && 'line' in completed ? completed.line : '').toMatch(
      /^✓ \[set 7 · 1\/1\] Beat while waiting for the model \(\d+s\) — done$/,
    );
  });

  it('relays subagent events into the parent turn when it runs inline', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      parent: [
        {
          toolCalls: [
            {
              id: 'd',
              name: 'delegate_task',
              arguments: { tasks: [{ goal: 'Inline child work' }] },
            },
          ],
        },
        { text: 'all done' },
      ],
      child: [{ text: 'child says hi' }],
    });
    // Without a registry the top-level delegation runs inline inside the parent's turn.
    const parent = fixture.agent();
    const session = await parent.createSession();
    const events: AgentEvent[] = [];
    await parent.runTurn({
      sessionId: session.id,
      message: 'go',
      onEvent: (event) => events.push(event),
    });
    const kinds = events.map((event) => event.type);
    expect(kinds).toContain('subagent.started');
    expect(kinds.indexOf('subagent.started')).toBeLessThan(kinds.indexOf('subagent.completed'));
    expect(events.find((event) => event.type === 'subagent.completed')).toMatchObject({
      status: 'completed',
      taskIndex: 0,
      sessionId: session.id,
    });
  });

  it('runs a background unit in the home and secrets of the caller that dispatched it', async () => {
    const seen: { home: string; secret: string | undefined }[] = [];
    const probe = defineTool({
      name: 'probe_scope',
      toolset: 'file',
      description: 'reports the home scope it runs in',
      parameters: v.object({}),
      run: () => {
        seen.push({ home: getHermesHome(), secret: getSecret('PROBE_TOKEN') });
        return 'ok';
      },
    });
    const fixture = await delegationFixture();
    const release = gate();
    routeReplies(fixture.model, {
      child: [
        async () => {
          await release.promise;
          return { toolCalls: [{ name: 'probe_scope', arguments: {} }] };
        },
        { text: 'probed' },
      ],
    });
    const agent = railAgent(fixture, { tools: [...BUILTIN_TOOLS, probe] });
    const session = await agent.createSession();
    const profileHome = path.join(fixture.home, 'profiles', 'work');
    await withHomeScope({ home: profileHome, secrets: { PROBE_TOKEN: 'work-token' } }, () =>
      delegateTask(
        { tasks: [{ goal: 'Probe the scope later' }] },
        { parent: agent, background: true, sessionId: session.id },
      ),
    );
    // The caller's scope has ended; the child works now.
    expect(getSecret('PROBE_TOKEN')).toBeUndefined();
    release.open();
    await fixture.registry.idle();
    expect(seen).toEqual([{ home: profileHome, secret: 'work-token' }]);
  });

  it('close() interrupts running units, which still publish, and refuses new ones', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'never', delayMs: 10_000 }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'Wait forever' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await waitFor(() => fixture.model.modelRequests.length === 1);
    await fixture.registry.close(5000);
    expect(fixture.published[0]?.results[0]?.status).toBe('interrupted');
    const refused = await delegateTask(
      { tasks: [{ goal: 'Too late to start' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    expect(refused).toEqual({ error: 'the delegation rail is shutting down' });
  });

  it('refuses a dispatch that arrives while close() is still stopping running units', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [
        { text: 'never', delayMs: 10_000 },
        { text: 'started during close', delayMs: 10_000 },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    await delegateTask(
      { tasks: [{ goal: 'Wait forever' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await waitFor(() => fixture.model.modelRequests.length === 1);
    const closing = fixture.registry.close(5000);
    const refused = await delegateTask(
      { tasks: [{ goal: 'Sneak in during shutdown' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await closing;
    expect(refused).toEqual({ error: 'the delegation rail is shutting down' });
    expect(fixture.model.modelRequests).toHaveLength(1);
    expect(fixture.published.map((event) => event.results[0]?.status)).toEqual(['interrupted']);
  });
});
