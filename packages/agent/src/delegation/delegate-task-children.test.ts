import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelServer } from '@hermes/testkit';
import * as v from 'valibot';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  delegationFixture,
  isChildRequest,
  messagesOf,
  routeReplies,
  systemOf,
} from '../../test/delegation-fixtures.js';
import { agentFixture } from '../../test/fixtures.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { defineTool } from '../tools/define-tool.js';
import { childToolsets, SUBAGENT_INTRO } from './build-children.js';
import type { ChildResult } from './child-result.js';
import { delegateTask } from './delegate-task.js';

function toolNames(request: { body: unknown }): string[] {
  const tools = (request.body as { tools?: { function: { name: string } }[] }).tools ?? [];
  return tools.map((tool) => tool.function.name);
}

describe('building a child', () => {
  it('strips blocked toolsets and tools for a leaf and gives an orchestrator only delegate_task back', async () => {
    const fixture = await agentFixture({ raw: { delegation: { max_spawn_depth: 2 } } });
    const memory = defineTool({
      name: 'memory',
      toolset: 'memory',
      description: 'long-term memory',
      parameters: v.object({}),
      run: () => 'ok',
    });
    const cronjob = defineTool({
      name: 'cronjob',
      toolset: 'cronjob',
      description: 'schedule',
      parameters: v.object({}),
      run: () => 'ok',
    });
    const executeCode = defineTool({
      name: 'execute_code',
      toolset: 'code_execution',
      description: 'run code',
      parameters: v.object({}),
      run: () => 'ok',
    });
    const parent = fixture.agent({
      tools: [...BUILTIN_TOOLS, memory, cronjob, executeCode],
      toolsets: ['hermes-cli', 'memory', 'cronjob', 'code_execution'],
    });
    const leaf = childToolsets(parent, 'leaf');
    expect(leaf.toolsets).not.toContain('delegation');
    expect(leaf.toolsets).toContain('code_execution');
    expect(leaf.disabled).toEqual(
      expect.arrayContaining(['delegate_task', 'clarify', 'memory', 'send_message', 'cronjob']),
    );
    const leafAgent = parent.createChild({
      toolsets: leaf.toolsets,
      disabledToolsets: leaf.disabled,
    });
    expect(leafAgent.tools.map((tool) => tool.name)).toEqual([
      'read_file',
      'write_file',
      'patch',
      'search_files',
      'terminal',
      'skill_view',
      'todo',
      'execute_code',
    ]);
    const orchestrator = childToolsets(parent, 'orchestrator');
    const orchestratorAgent = parent.createChild({
      toolsets: orchestrator.toolsets,
      disabledToolsets: orchestrator.disabled,
    });
    const gained = orchestratorAgent.tools
      .map((tool) => tool.name)
      .filter((name) => !leafAgent.tools.some((tool) => tool.name === name));
    expect(gained).toEqual(['delegate_task']);
  });

  it('gives the child its own session, the workspace AGENTS.md, the context last and the goal as its first message', async () => {
    const fixture = await delegationFixture();
    await writeFile(path.join(fixture.workdir, 'AGENTS.md'), 'Always run the tests with pnpm.\n');
    await writeFile(path.join(fixture.home, 'SOUL.md'), 'I am the parent persona.\n');
    routeReplies(fixture.model, { child: [{ text: 'Done: checked.' }] });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Check the build', context: 'The repo is a pnpm monorepo.' }] },
      { parent, sessionId: session.id },
    );
    const [entry] = result.results as ChildResult[];
    expect(entry).toMatchObject({ status: 'completed', summary: 'Done: checked.' });
    const request = fixture.model.modelRequests.find(isChildRequest);
    expect(request).toBeDefined();
    const system = systemOf(request as never);
    expect(system.startsWith(SUBAGENT_INTRO)).toBe(true);
    expect(system).toContain(`WORKSPACE PATH: ${fixture.workdir}`);
    expect(system).toContain('Always run the tests with pnpm.');
    expect(system).not.toContain('I am the parent persona.');
    expect(system.indexOf('binding')).toBeLessThan(system.indexOf('CONTEXT:'));
    expect(system.endsWith('CONTEXT:\nThe repo is a pnpm monorepo.')).toBe(true);
    expect(messagesOf(request as never).slice(1)).toEqual([
      { role: 'user', content: 'Check the build' },
    ]);
    expect(toolNames(request as never)).not.toContain('delegate_task');
    const child = fixture.store.getSession(entry?.session_id as string);
    expect(child).toMatchObject({
      source: 'subagent',
      parentSessionId: session.id,
      parentEdge: 'delegate',
      model: 'test-model',
      hidden: 1,
    });
    expect(fixture.store.listSessionsRich().sessions.map((row) => row.id)).toEqual([session.id]);
  });

  it('routes the child by credentialsCfg to another server while the parent stays on its own', async () => {
    const fixture = await delegationFixture();
    const review = await startModelServer({ script: [{ text: 'REVIEW: from the review server' }] });
    onTestFinished(() => review.close());
    fixture.model.push({ text: 'parent stays here' });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Review the work' }] },
      {
        parent,
        sessionId: session.id,
        credentialsCfg: {
          provider: '',
          model: 'review-model',
          baseUrl: review.baseUrl,
          apiKey: 'review-key',
          apiMode: '',
        },
        fallbackProviders: [],
      },
    );
    expect((result.results as ChildResult[])[0]).toMatchObject({
      status: 'completed',
      summary: 'REVIEW: from the review server',
      model: 'review-model',
    });
    expect(review.modelRequests).toHaveLength(1);
    expect((review.modelRequests[0]?.body as { model?: string } | undefined)?.model).toBe(
      'review-model',
    );
    expect(review.modelRequests[0]?.headers.authorization).toBe('Bearer review-key');
    expect(fixture.model.modelRequests).toHaveLength(0);
    const turn = await parent.runTurn({ sessionId: session.id, message: 'and you?' });
    expect(turn.finalResponse).toBe('parent stays here');
    expect(fixture.model.modelRequests).toHaveLength(1);
  });

  it('gives a pinned review route its own fallback chain, never the parent one, and none when empty', async () => {
    const parentBackup = await startModelServer({
      script: [{ text: 'WRONG: the parent fallback' }],
    });
    const reviewBackup = await startModelServer({
      script: [{ text: 'REVIEW: from the review backup' }],
    });
    const broken = await startModelServer({
      script: Array.from({ length: 6 }, () => ({ error: { status: 500 } })),
    });
    onTestFinished(async () => {
      await Promise.all([parentBackup.close(), reviewBackup.close(), broken.close()]);
    });
    const fixture = await delegationFixture({
      raw: {
        agent: { api_max_retries: 0 },
        fallback_providers: [{ provider: 'custom', base_url: parentBackup.baseUrl, model: 'm' }],
        delegation: {
          fallback_providers: [{ provider: 'custom', base_url: parentBackup.baseUrl, model: 'm' }],
        },
      },
    });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const credentialsCfg = {
      provider: '',
      model: 'review-model',
      baseUrl: broken.baseUrl,
      apiKey: 'k',
      apiMode: '',
    };
    const withChain = await delegateTask(
      { tasks: [{ goal: 'Review with a chain' }] },
      {
        parent,
        sessionId: session.id,
        credentialsCfg,
        fallbackProviders: [
          { provider: 'custom', base_url: reviewBackup.baseUrl, model: 'backup-model' },
        ],
      },
    );
    expect((withChain.results as ChildResult[])[0]).toMatchObject({
      status: 'completed',
      summary: 'REVIEW: from the review backup',
    });
    const withoutChain = await delegateTask(
      { tasks: [{ goal: 'Review without a chain' }] },
      { parent, sessionId: session.id, credentialsCfg, fallbackProviders: [] },
    );
    expect((withoutChain.results as ChildResult[])[0]).toMatchObject({
      status: 'failed',
      exit_reason: 'error',
    });
    expect(parentBackup.modelRequests).toHaveLength(0);
  });

  it('inherits the parent route and its fallback chain when nothing is pinned', async () => {
    const backup = await startModelServer({ script: [{ text: 'from the inherited fallback' }] });
    onTestFinished(() => backup.close());
    const fixture = await delegationFixture({
      raw: {
        agent: { api_max_retries: 0 },
        fallback_providers: [{ provider: 'custom', base_url: backup.baseUrl, model: 'm' }],
      },
    });
    fixture.model.push({ error: { status: 500 } });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Inherit everything' }] },
      { parent, sessionId: session.id },
    );
    expect((result.results as ChildResult[])[0]).toMatchObject({
      status: 'completed',
      summary: 'from the inherited fallback',
      model: 'test-model',
    });
    expect(fixture.model.modelRequests).toHaveLength(1);
  });

  it('compacts a child at delegation.compression_threshold_tokens, below the window-based threshold', async () => {
    const bulky = defineTool({
      name: 'bulky',
      toolset: 'file',
      description: 'returns a lot',
      parameters: v.object({}),
      run: () => 'z'.repeat(70_000),
    });
    const fixture = await delegationFixture({
      raw: {
        model: { context_length: 1_000_000 },
        delegation: { compression_threshold_tokens: 16_000 },
      },
    });
    routeReplies(fixture.model, {
      child: [
        { toolCalls: [{ name: 'bulky', arguments: {} }] },
        { text: 'Done after compaction.' },
      ],
      // The compression summary is an auxiliary call (not a subagent prompt).
      parent: [{ text: 'Summary: the child read a large output.' }],
    });
    const parent = fixture.agent({ tools: [...BUILTIN_TOOLS, bulky] });
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Read the big thing' }] },
      { parent, sessionId: session.id },
    );
    const [entry] = result.results as ChildResult[];
    expect(entry).toMatchObject({ status: 'completed', summary: 'Done after compaction.' });
    const childSession = fixture.store.getSession(entry?.session_id as string);
    expect(childSession?.endReason).toBe('compression');
    // The parent itself (no cap of its own) never compacts at this size.
    expect(parent.options.compressionThresholdTokens).toBeUndefined();
  });
});
