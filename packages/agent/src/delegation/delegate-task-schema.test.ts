import { resolveConfig } from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { agentFixture, requestBodies } from '../../test/fixtures.js';
import {
  buildDelegateTaskDescription,
  buildDelegateTaskParameters,
} from './delegate-task-schema.js';
import { DELEGATE_TASK_DESCRIPTION_MAX_CHARS } from './delegation-limits.js';

type Schema = {
  properties: Record<
    string,
    {
      items?: { properties: Record<string, unknown> };
      maxItems?: number;
      minItems?: number;
      description?: string;
      enum?: string[];
    }
  >;
};

describe('the delegate_task schema', () => {
  const delegation = resolveConfig({}).delegation;

  it('hides toolsets, max_iterations, role, background, the ACP fields and credentials, and has no maxItems', () => {
    const schema = buildDelegateTaskParameters(delegation) as unknown as Schema;
    expect(Object.keys(schema.properties).sort()).toEqual([
      'action',
      'message',
      'subagent_id',
      'tasks',
    ]);
    const tasks = schema.properties.tasks;
    expect(tasks?.minItems).toBe(1);
    expect(tasks).not.toHaveProperty('maxItems');
    expect(Object.keys(tasks?.items?.properties ?? {}).sort()).toEqual([
      'context',
      'goal',
      'images',
      'output_schema',
    ]);
    expect(schema.properties.action?.enum).toEqual(['spawn', 'list', 'steer', 'stop']);
    const text = JSON.stringify(schema);
    for (const hidden of [
      'toolsets',
      'max_iterations',
      '"role"',
      'background',
      'acp_',
      'credentials',
    ])
      expect(text).not.toContain(hidden);
  });

  it('advertises group only with independent completions, and says how results return', () => {
    const independent = resolveConfig({ delegation: { independent_completions: true } }).delegation;
    const schema = buildDelegateTaskParameters(independent) as unknown as Schema;
    expect(schema.properties.tasks?.items?.properties).toHaveProperty('group');
    expect(buildDelegateTaskDescription(independent, { depth: 0 })).toContain(
      'each ungrouped task / group returns on its own',
    );
    expect(buildDelegateTaskDescription(delegation, { depth: 0 })).toContain(
      'one message per call',
    );
  });

  it('keeps the description under 2200 characters with the keyword contracts, and limits only in parameters', () => {
    const description = buildDelegateTaskDescription(delegation, { depth: 0 });
    expect(description.length).toBeLessThanOrEqual(DELEGATE_TASK_DESCRIPTION_MAX_CHARS);
    for (const contract of [
      'isolated',
      'only its final summary comes back',
      'inline',
      'background',
      'new message',
      'Results arrive only between turns',
      'end your turn',
      'never wait',
      '`action` controls live children',
      'USE FOR:',
      'DO NOT USE FOR:',
      'execute_code',
      'cronjob',
      'terminal(background=True, notify=True)',
      '/stop and /new halt subagents',
      'RULES:',
      'children know nothing',
      'respond in Chinese',
      'SELF-REPORTS',
      'cannot close tracked work',
      'Children cannot call clarify, memory, send_message, cronjob or delegate_task.',
      'delegation.provider / delegation.model',
    ])
      expect(description).toContain(contract);
    expect(description).not.toMatch(/\d/);
    const tasks = (buildDelegateTaskParameters(delegation) as unknown as Schema).properties.tasks;
    expect(tasks?.description).toContain(
      'up to 10 in parallel for this user (set via delegation.max_concurrent_children)',
    );
    expect(tasks?.description).toContain('Required when spawning.');
  });

  it('lets children delegate in the restrictions line only when orchestration is available', () => {
    const nested = resolveConfig({ delegation: { max_spawn_depth: 2 } }).delegation;
    expect(buildDelegateTaskDescription(nested, { depth: 0 })).toContain(
      'Children cannot call clarify, memory, send_message or cronjob.',
    );
    expect(buildDelegateTaskDescription(nested, { depth: 1 })).toContain('or delegate_task.');
  });

  it('is rebuilt per agent with the live concurrency number', async () => {
    const fixture = await agentFixture({
      raw: { delegation: { max_concurrent_children: 4 } },
      server: { script: [{ text: 'ok' }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'hi' });
    const tools = requestBodies(fixture.model)[0]?.tools as {
      function: { name: string; description: string; parameters: Schema };
    }[];
    const delegate = tools.find((tool) => tool.function.name === 'delegate_task');
    expect(delegate?.function.description).toContain('USE FOR:');
    expect(delegate?.function.parameters.properties.tasks?.description).toContain(
      'up to 4 in parallel',
    );
  });
});
