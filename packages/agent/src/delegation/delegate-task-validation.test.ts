import { describe, expect, it } from 'vitest';
import { delegationFixture, railAgent } from '../../test/delegation-fixtures.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { delegateTask } from './delegate-task.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';

function subagentSessions(fixture: { store: import('@hermes/session-store').SessionStore }) {
  return fixture.store.listSessionsRich({
    sources: ['subagent'],
    includeHidden: true,
    includeArchived: true,
    includeChildren: true,
  }).sessions;
}

/** Every refusal is `{ error }` with the reference's text, and nothing is started. */
describe('delegate_task validation', () => {
  async function setup(raw?: Record<string, unknown>) {
    const fixture = await delegationFixture(raw ? { raw } : {});
    const agent = railAgent(fixture);
    const session = await agent.createSession();
    const refuse = async (
      args: Record<string, unknown>,
      options: Partial<Parameters<typeof delegateTask>[1]> = {},
    ) => {
      const result = await delegateTask(args, {
        parent: agent,
        background: true,
        sessionId: session.id,
        ...options,
      });
      return result;
    };
    const nothingStarted = () => {
      expect(fixture.model.modelRequests).toHaveLength(0);
      expect(fixture.registry.running).toBe(0);
      expect(subagentSessions(fixture)).toEqual([]);
    };
    return { fixture, agent, session, refuse, nothingStarted };
  }

  it('refuses in the reference order with its exact texts', async () => {
    const { fixture, agent, refuse, nothingStarted } = await setup({
      delegation: { max_concurrent_children: 3 },
    });
    expect(await refuse({ tasks: [{ goal: 'x' }] }, { parent: undefined })).toEqual({
      error: MESSAGES.noParent,
    });
    expect(await refuse({ action: 'explode' })).toEqual({
      error: "Unknown action 'explode'. Use spawn (default), list, steer, or stop.",
    });
    const noDelegation = fixture.agent({
      tools: BUILTIN_TOOLS.filter((tool) => tool.name !== 'delegate_task'),
      delegations: fixture.registry,
    });
    expect(
      await refuse({ tasks: [{ goal: 'anything at all' }] }, { parent: noDelegation }),
    ).toEqual({
      error: "delegate_task is not available in the parent agent's resolved toolset.",
    });
    fixture.registry.setPaused(true);
    expect(await refuse({ tasks: [{ goal: 'anything at all' }] })).toEqual({
      error:
        'Delegation spawning is paused. Clear the pause via the TUI (`p` in /agents) or the `delegation.pause` RPC before retrying.',
    });
    fixture.registry.setPaused(false);
    const deep = agent.createChild({ delegations: fixture.registry });
    expect(
      (await refuse({ tasks: [{ goal: 'anything at all' }] }, { parent: deep })).error,
    ).toMatch(
      /^Delegation depth limit reached \(depth=1, max_spawn_depth=1\)\. Raise delegation\.max_spawn_depth in config\.yaml/,
    );
    expect((await refuse({ tasks: '[not json' })).error).toMatch(/^Invalid 'tasks'/);
    expect(await refuse({ tasks: { goal: 'x' } })).toEqual({
      error: MESSAGES.tasksNotArray('object'),
    });
    expect(
      (
        await refuse({
          tasks: [
            { goal: 'aaaaaaaaaaaa' },
            { goal: 'bbbbbbbbbbbb' },
            { goal: 'cccccccccccc' },
            { goal: 'dddddddddddd' },
          ],
        })
      ).error,
    ).toMatch(/^Too many tasks: 4 provided, but max_concurrent_children is 3\. /);
    expect(await refuse({})).toEqual({
      error:
        "No tasks provided. Pass tasks=[{goal: '...', context: '...'}, ...] — one entry per subagent (a single task is a one-entry array).",
    });
    expect(await refuse({ tasks: [] })).toEqual({ error: MESSAGES.noTasks });
    expect(await refuse({ tasks: ['just a string'] })).toEqual({
      error: 'Task 0 must be an object, got string.',
    });
    expect(await refuse({ tasks: [{ context: 'no goal' }] })).toEqual({
      error: "Task 0 is missing a 'goal'.",
    });
    expect(
      (await refuse({ tasks: [{ goal: 'todo' }, { goal: 'Write the release notes' }] })).error,
    ).toBe(MESSAGES.placeholderGoal(0, 'todo'));
    expect(
      (
        await refuse({
          tasks: [{ goal: 'Implement <feature_name> now' }, { goal: 'Write the docs page' }],
        })
      ).error,
    ).toBe(MESSAGES.templateGoal(0, '<feature_name>'));
    expect(
      (
        await refuse({
          tasks: [{ goal: 'Read {file path} fully' }, { goal: 'Write the docs page' }],
        })
      ).error,
    ).toBe(MESSAGES.templateGoal(0, '{file path}'));
    expect(
      (await refuse({ tasks: [{ goal: 'Fix it' }, { goal: 'Write the docs page' }] })).error,
    ).toBe(MESSAGES.shortGoal(0, 'Fix it'));
    expect(
      (await refuse({ tasks: [{ goal: 'Summarise the README', output_schema: 'nope' }] })).error,
    ).toMatch(/^Task 0 output_schema invalid: /);
    expect(
      (await refuse({ tasks: [{ goal: 'Summarise the README', output_schema: [1] }] })).error,
    ).toBe('Task 0 output_schema invalid: expected an object, got list');
    expect(
      (
        await refuse({
          tasks: [
            {
              goal: 'Look at the screenshots',
              images: Array.from({ length: 9 }, (_, i) => `${i}.png`),
            },
          ],
        })
      ).error,
    ).toBe(MESSAGES.tooManyImages(0, 9));
    expect(
      (await refuse({ tasks: [{ goal: 'Look at the screenshot', images: [''] }] })).error,
    ).toBe(MESSAGES.imagesInvalid(0));
    nothingStarted();
  });

  it('passes a credential resolver error through before anything is built', async () => {
    const { refuse, nothingStarted } = await setup({
      delegation: { provider: 'nowhere-provider' },
    });
    expect((await refuse({ tasks: [{ goal: 'Summarise the README' }] })).error).toMatch(
      /^Cannot resolve delegation provider 'nowhere-provider': unknown provider 'nowhere-provider'/,
    );
    const keyless = await setup({ delegation: { provider: 'openrouter' } });
    expect((await keyless.refuse({ tasks: [{ goal: 'Summarise the README' }] })).error).toMatch(
      /^Delegation provider 'openrouter' resolved but has no API key: no API key for provider openrouter — set OPENROUTER_API_KEY/,
    );
    nothingStarted();
    keyless.nothingStarted();
  });

  it('caps a one-shot run at delegation.oneshot_max_children', async () => {
    const { fixture, session } = await setup({ delegation: { oneshot_max_children: 1 } });
    fixture.model.push({ text: 'done once' });
    const oneShot = fixture.agent({ oneShot: true, delegations: fixture.registry });
    const first = await delegateTask(
      { tasks: [{ goal: 'The only allowed child' }] },
      { parent: oneShot, background: true, sessionId: session.id },
    );
    // A one-shot run cannot receive a later result: it ran inline.
    expect(first.mode).toBe('sync');
    // (The check the other tests use does see a subagent's session.)
    expect(subagentSessions(fixture)).toHaveLength(1);
    expect(
      await delegateTask(
        { tasks: [{ goal: 'One child too many' }] },
        { parent: oneShot, background: true, sessionId: session.id },
      ),
    ).toEqual({ error: MESSAGES.oneshotExhausted(1, 1) });
  });

  it('turns a legacy top-level goal into one task and ignores a caller max_iterations', async () => {
    const { fixture, agent, session } = await setup({ delegation: { max_iterations: 1 } });
    fixture.model.push(
      { toolCalls: [{ name: 'todo', arguments: { todos: [] } }] },
      { text: 'grace answer' },
    );
    const result = await delegateTask(
      { goal: 'Legacy single goal', context: 'ctx', max_iterations: 50 },
      { parent: agent, sessionId: session.id },
    );
    const [entry] = result.results as { goal: string; exit_reason: string; truncated: boolean }[];
    expect(entry).toMatchObject({
      goal: 'Legacy single goal',
      exit_reason: 'max_iterations',
      truncated: true,
    });
  });
});
