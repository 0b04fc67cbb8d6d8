import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
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
import { steerNote } from '../loop/turn-outcome.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { defineTool } from '../tools/define-tool.js';
import { buildChildren } from './build-children.js';
import type { ChildResult } from './child-result.js';
import { delegateTask } from './delegate-task.js';
import { DELEGATION_ERROR_MESSAGES, missedSteerNote } from './delegation-messages.js';
import { delegationRouting, resolveChildRuntime } from './resolve-child-runtime.js';
import { runBatch } from './run-batch.js';
import { SubagentTracker } from './subagent-tracker.js';

describe('running children', () => {
  it('reports the result contract: tool trace pairs calls with results, (empty) is a failure', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [
        { toolCalls: [{ id: 't1', name: 'read_file', arguments: { path: 'missing.txt' } }] },
        { toolCalls: [{ id: 't2', name: 'todo', arguments: { todos: [] } }] },
        { text: 'Looked at it.', usage: { promptTokens: 40, completionTokens: 7 } },
        { text: '' },
      ],
    });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const ok = await delegateTask(
      { tasks: [{ goal: 'Read the missing file' }] },
      { parent, sessionId: session.id },
    );
    const [entry] = ok.results as ChildResult[];
    expect(entry).toMatchObject({
      task_index: 0,
      status: 'completed',
      summary: 'Looked at it.',
      api_calls: 3,
      model: 'test-model',
      exit_reason: 'completed',
      truncated: false,
      cost_usd: null,
      cost_status: 'unknown',
    });
    expect(entry?.tokens.output).toBeGreaterThanOrEqual(7);
    expect(entry?.duration_seconds).toBeGreaterThanOrEqual(0);
    expect(entry?.tool_trace).toEqual([
      {
        tool: 'read_file',
        args_bytes: Buffer.byteLength(JSON.stringify({ path: 'missing.txt' })),
        input_summary: { argument_keys: ['path'], targets: ['missing.txt'] },
        result_bytes: expect.any(Number),
        status: 'error',
      },
      {
        tool: 'todo',
        args_bytes: expect.any(Number),
        input_summary: { argument_keys: ['todos'], targets: [] },
        result_bytes: expect.any(Number),
        status: 'ok',
      },
    ]);
    const empty = await delegateTask(
      { tasks: [{ goal: 'Say nothing' }] },
      { parent, sessionId: session.id },
    );
    expect((empty.results as ChildResult[])[0]).toMatchObject({
      status: 'failed',
      summary: null,
      failure_reason: 'empty_summary',
      error: DELEGATION_ERROR_MESSAGES.childFailedEmpty,
    });
  });

  it('gives a result that misses its output_schema exactly one correction turn', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [
        { text: 'The answer is 4.' },
        { text: '{"answer": 4}' },
        { text: 'still prose' },
        { text: 'more prose' },
      ],
    });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const schema = {
      type: 'object',
      properties: { answer: { type: 'integer' } },
      required: ['answer'],
    };
    const fixed = await delegateTask(
      { tasks: [{ goal: 'Compute 2+2', output_schema: schema }] },
      { parent, sessionId: session.id },
    );
    expect((fixed.results as ChildResult[])[0]).toMatchObject({
      status: 'completed',
      summary: '{"answer": 4}',
      schema_valid: true,
      schema_retries: 1,
    });
    const correction = messagesOf(fixture.model.modelRequests[1] as never).at(-1);
    expect(String(correction?.content)).toContain('does not match the required output schema');
    const broken = await delegateTask(
      { tasks: [{ goal: 'Compute 2+2 again', output_schema: JSON.stringify(schema) }] },
      { parent, sessionId: session.id },
    );
    expect((broken.results as ChildResult[])[0]).toMatchObject({
      status: 'failed',
      schema_valid: false,
      schema_retries: 1,
      failure_reason: 'schema_invalid',
    });
    expect(fixture.model.modelRequests).toHaveLength(4);
  });

  it('caps an oversized summary (¾ head, ¼ tail, footer) and spills the full text', async () => {
    const fixture = await delegationFixture({ raw: { delegation: { max_summary_chars: 1000 } } });
    const long = `HEAD${'x'.repeat(5000)}TAIL`;
    routeReplies(fixture.model, { child: [{ text: long, chunkSize: 4096 }] });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Write a lot' }] },
      { parent, sessionId: session.id },
    );
    const [entry] = result.results as ChildResult[];
    expect(entry?.summary_truncated).toBe(true);
    expect(entry?.summary?.length).toBeLessThanOrEqual(1000);
    expect(entry?.summary?.startsWith('HEADxxx')).toBe(true);
    expect(entry?.summary).toMatch(
      /TAIL\n\n\[SUMMARY TRUNCATED — 1000 of 5008 characters shown; full text: .*subagent-summary-0-\d+\.txt\]$/,
    );
    expect(entry?.summary_full_path).toContain('cache/delegation/subagent-summary-0-');
    expect(await readFile(entry?.summary_full_path as string, 'utf8')).toBe(long);
  });

  it('stops a child that makes no progress within its inactivity timeout', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, { child: [{ text: 'too late', delayMs: 3000 }] });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const runtime = resolveChildRuntime(parent, delegationRouting(parent.config.delegation));
    if ('error' in runtime) throw new Error(runtime.error);
    const children = await buildChildren({
      parent,
      tasks: [{ goal: 'Wait for a slow model', context: '' }],
      runtime,
      parentSessionId: session.id,
      cwd: fixture.workdir,
    });
    const started = performance.now();
    const batch = await runBatch({
      delegationId: 'deleg_timeout',
      children,
      maxConcurrent: 1,
      tracker: new SubagentTracker(),
      owners: [session.id],
      home: fixture.home,
      timeoutSeconds: 0.3,
      maxSummaryChars: 0,
    });
    expect(performance.now() - started).toBeLessThan(2500);
    const [entry] = batch.results;
    expect(entry).toMatchObject({
      status: 'timeout',
      summary: null,
      timeout_seconds: 0.3,
      timeout_phase: 'before_first_llm_call',
      error: DELEGATION_ERROR_MESSAGES.childTimeout(0.3),
    });
    expect(await readFile(entry?.diagnostic_path as string, 'utf8')).toContain(
      'timed out before its first model answer',
    );
  });

  it('runs a background batch of three with one failure and reports each in task order', async () => {
    const fixture = await delegationFixture();
    routeReplies(fixture.model, {
      child: [
        async (request) => {
          const goal = String(messagesOf(request)[1]?.content);
          if (goal.startsWith('Second'))
            return { error: { status: 400, message: 'the second task is refused' } };
          return { text: `done: ${goal}`, delayMs: goal.startsWith('First') ? 150 : 0 };
        },
        async (request) => {
          const goal = String(messagesOf(request)[1]?.content);
          if (goal.startsWith('Second'))
            return { error: { status: 400, message: 'the second task is refused' } };
          return { text: `done: ${goal}`, delayMs: goal.startsWith('First') ? 150 : 0 };
        },
        async (request) => {
          const goal = String(messagesOf(request)[1]?.content);
          if (goal.startsWith('Second'))
            return { error: { status: 400, message: 'the second task is refused' } };
          return { text: `done: ${goal}`, delayMs: goal.startsWith('First') ? 150 : 0 };
        },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      {
        tasks: [
          { goal: 'First of three tasks' },
          { goal: 'Second of three tasks' },
          { goal: 'Third of three tasks' },
        ],
      },
      { parent: agent, background: true, sessionId: session.id },
    );
    expect(dispatched).toMatchObject({ status: 'dispatched', count: 3 });
    expect(dispatched.subagent_ids).toHaveLength(3);
    await fixture.registry.idle();
    const [event] = fixture.published;
    expect(event?.goal).toBe(
      '3 parallel subagents: First of three tasks; Second of three tasks; Third of three tasks',
    );
    expect(event?.status).toBe('completed');
    expect(event?.results.map((entry) => [entry.task_index, entry.status])).toEqual([
      [0, 'completed'],
      [1, 'failed'],
      [2, 'completed'],
    ]);
    expect(event?.results[1]?.error).toBe('the second task is refused');
    expect(event?.results[0]?.summary).toBe('done: First of three tasks');
  });

  it('names the unit ids its completions will carry whenever independent completions split the call, even into one unit', async () => {
    const fixture = await delegationFixture({
      raw: { delegation: { independent_completions: true } },
    });
    routeReplies(fixture.model, { child: [{ text: 'one unit done' }] });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'The only task' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    await fixture.registry.idle();
    const [event] = fixture.published;
    expect(event?.delegation_id).toBe(`${dispatched.delegation_id}-1`);
    expect(dispatched.units).toEqual([
      { delegation_id: event?.delegation_id, group: null, task_indexes: [0] },
    ]);
  });

  it('lists, steers and stops a running child of this conversation only', async () => {
    const steps = [gate(), gate()];
    const started = [gate(), gate()];
    let call = 0;
    const slow = defineTool({
      name: 'slow_step',
      toolset: 'file',
      description: 'a step that takes a while',
      parameters: v.object({}),
      run: async () => {
        const index = call++;
        started[index]?.open();
        await steps[index]?.promise;
        return 'step done';
      },
    });
    const fixture = await delegationFixture();
    const queues = routeReplies(fixture.model, {
      child: [
        { toolCalls: [{ id: 's1', name: 'slow_step', arguments: {} }] },
        { toolCalls: [{ id: 's2', name: 'slow_step', arguments: {} }] },
        { text: 'should not be reached' },
      ],
    });
    const agent = railAgent(fixture, { tools: [...BUILTIN_TOOLS, slow] });
    const session = await agent.createSession();
    const other = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Take two slow steps' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    const subagentId = (dispatched.subagent_ids as string[])[0] as string;
    await started[0]?.promise;
    const listed = await delegateTask({ action: 'list' }, { parent: agent, sessionId: session.id });
    expect(listed.subagents).toEqual([
      expect.objectContaining({
        subagent_id: subagentId,
        goal: 'Take two slow steps',
        status: 'running',
        accepting_steer: true,
        current_tool: 'slow_step',
      }),
    ]);
    expect(
      (await delegateTask({ action: 'list' }, { parent: agent, sessionId: other.id })).subagents,
    ).toEqual([]);
    expect(
      await delegateTask(
        { action: 'steer', subagent_id: subagentId, message: 'also check the tests' },
        { parent: agent, sessionId: other.id },
      ),
    ).toEqual({ error: DELEGATION_ERROR_MESSAGES.subagentUnknown(subagentId) });
    expect(
      await delegateTask(
        { action: 'steer', subagent_id: subagentId, message: 'also check the tests' },
        { parent: agent, sessionId: session.id },
      ),
    ).toEqual({ action: 'steer', status: 'queued', subagent_id: subagentId });
    steps[0]?.open();
    await started[1]?.promise;
    // The steer rode on the next tool result the child stored, so its model read it.
    const secondCall = messagesOf(fixture.model.modelRequests.filter(isChildRequest)[1] as never);
    expect(secondCall.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 's1',
      content: `step done\n\n${steerNote('also check the tests')}`,
    });
    expect(
      await delegateTask(
        { action: 'stop', subagent_id: subagentId },
        { parent: agent, sessionId: session.id },
      ),
    ).toEqual({ action: 'stop', status: 'stopping', subagent_id: subagentId });
    steps[1]?.open();
    await fixture.registry.idle();
    const [event] = fixture.published;
    expect(event?.results[0]).toMatchObject({ status: 'interrupted', exit_reason: 'interrupted' });
    // It stopped at the iteration boundary: the third model call never happened.
    expect(fixture.model.modelRequests.filter(isChildRequest)).toHaveLength(2);
    expect(queues.child).toHaveLength(1);
  });

  it('reports a steer that never landed as missed_steer', async () => {
    const fixture = await delegationFixture();
    const answer = gate();
    routeReplies(fixture.model, {
      child: [
        async () => {
          await answer.promise;
          return { text: 'Finished without tools.' };
        },
      ],
    });
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const dispatched = await delegateTask(
      { tasks: [{ goal: 'Answer directly' }] },
      { parent: agent, background: true, sessionId: session.id },
    );
    const subagentId = (dispatched.subagent_ids as string[])[0] as string;
    await waitFor(() => fixture.model.modelRequests.length === 1);
    await delegateTask(
      { action: 'steer', subagent_id: subagentId, message: 'use British spelling' },
      { parent: agent, sessionId: session.id },
    );
    answer.open();
    await fixture.registry.idle();
    expect(fixture.published[0]?.results[0]).toMatchObject({
      status: 'completed',
      missed_steer: ['use British spelling'],
      summary: `Finished without tools.\n\n${missedSteerNote('use British spelling')}`,
    });
  });
});
