import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { isProcessRunning, startModelServer } from '@hermes/testkit';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { agentFixture, requestBodies, waitFor } from '../../test/fixtures.js';
import { AGENT_ERROR_MESSAGES, AgentError, TOOL_ERROR_MESSAGES } from '../errors.js';
import type { AgentEvent } from '../events.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import { defineTool } from '../tools/define-tool.js';
import { EMPTY_RESPONSE_SENTINEL, GRACE_CALL_NOTE } from './turn-outcome.js';

type Body = {
  messages: { role: string; content: string | null; tool_calls?: unknown[] }[];
  tools?: unknown[];
};

function types(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.type);
}

describe('runTurn: the fallback chain', () => {
  it('reports at the turn start each fallback entry it skipped and each remote one it sends no key', async () => {
    const fixture = await agentFixture({
      raw: {
        fallback_providers: ['openrouter', { base_url: 'https://proxy.example/v1' }],
      },
      server: { script: [{ text: 'ok' }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'hi',
      onEvent: fixture.onEvent,
    });
    expect(result.status).toBe('completed');
    const warnings = fixture.events.filter((event) => event.type === 'warning');
    expect(warnings.map((event) => [event.code, event.message])).toEqual([
      ['fallback_skipped', expect.stringMatching(/^fallback_providers\[0\] skipped: /)],
      [
        'fallback_without_key',
        "fallback_providers[1] (https://proxy.example/v1) has no api_key of its own and is sent no key: a provider's key or model.api_key goes only to its own endpoint",
      ],
    ]);
  });
});

describe('runTurn: the tool loop', () => {
  it('runs a multi-step loop, two read-only calls of one reply concurrently, and stores every message', async () => {
    const spans: Record<string, [number, number]> = {};
    const probe = defineTool({
      name: 'probe',
      toolset: 'file',
      readOnly: true,
      description: 'Slow read-only probe',
      parameters: v.object({ label: v.string() }),
      run: async ({ label }) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 300));
        spans[label] = [start, performance.now()];
        return `probed ${label}`;
      },
    });
    const fixture = await agentFixture({
      server: {
        script: [
          {
            toolCalls: [
              { id: 'c1', name: 'probe', arguments: { label: 'a' } },
              { id: 'c2', name: 'probe', arguments: { label: 'b' } },
            ],
            usage: { promptTokens: 100, completionTokens: 10 },
          },
          {
            toolCalls: [{ id: 'c3', name: 'read_file', arguments: { path: 'notes.txt' } }],
            usage: { promptTokens: 200, completionTokens: 20 },
          },
          { text: 'All done.', usage: { promptTokens: 300, completionTokens: 30 } },
        ],
      },
    });
    await writeFile(path.join(fixture.workdir, 'notes.txt'), 'remember the milk\n');
    const agent = fixture.agent({ tools: [...BUILTIN_TOOLS, probe] });
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'look around',
      onEvent: fixture.onEvent,
    });

    expect(result).toMatchObject({
      status: 'completed',
      exitReason: 'completed',
      finalResponse: 'All done.',
    });
    const a = spans.a as [number, number];
    const b = spans.b as [number, number];
    expect(b[0]).toBeLessThan(a[1]);
    expect(a[0]).toBeLessThan(b[1]);

    const rows = fixture.store.getMessages(session.id);
    expect(rows.map((row) => row.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(
      rows
        .filter((row) => row.role === 'tool')
        .map((row) => row.toolCallId)
        .sort(),
    ).toEqual(['c1', 'c2', 'c3']);
    const third = requestBodies(fixture.model)[2] as Body;
    expect(JSON.stringify(third.messages)).toContain('remember the milk');
    expect(third.messages[0]?.role).toBe('system');

    expect(result.usage).toMatchObject({
      inputTokens: 600,
      outputTokens: 60,
      apiCalls: 3,
      toolCalls: 3,
    });
    const row = fixture.store.requireSession(session.id);
    expect([row.inputTokens, row.outputTokens, row.apiCallCount, row.toolCallCount]).toEqual([
      600, 60, 3, 3,
    ]);

    const seen = types(fixture.events);
    expect(seen[0]).toBe('run.started');
    expect(seen.at(-1)).toBe('run.completed');
    expect(seen.filter((type) => type === 'tool.started')).toHaveLength(3);
    expect(seen.filter((type) => type === 'tool.completed')).toHaveLength(3);
    expect(seen.filter((type) => type === 'message.completed')).toHaveLength(3);
  });

  it('streams message deltas in order between run.started and message.completed', async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'Hello there, my friend.', chunkSize: 3 }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'hi', onEvent: fixture.onEvent });
    const deltas = fixture.events.filter((event) => event.type === 'message.delta');
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.map((event) => event.text).join('')).toBe('Hello there, my friend.');
    const seen = types(fixture.events);
    expect(seen.indexOf('run.started')).toBe(0);
    expect(seen.lastIndexOf('message.delta')).toBeLessThan(seen.indexOf('message.completed'));
    expect(seen.at(-1)).toBe('run.completed');
    for (const event of fixture.events) expect(event.sessionId).toBe(session.id);
  });

  it('answers bad arguments, bad JSON and unknown tools to the model, then finishes', async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          { toolCalls: [{ id: 'b1', name: 'read_file', arguments: { path: 42 } }] },
          { toolCalls: [{ id: 'b2', name: 'read_file', arguments: '{"path": ' }] },
          { toolCalls: [{ id: 'b3', name: 'launch_rockets' }] },
          { text: 'I will stop.' },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'go',
      onEvent: fixture.onEvent,
    });
    expect(result.status).toBe('completed');
    const toolRows = fixture.store.getMessages(session.id).filter((row) => row.role === 'tool');
    const errors = toolRows.map((row) => JSON.parse(row.content ?? '{}').error as string);
    expect(errors[0]).toBe(
      TOOL_ERROR_MESSAGES.invalidArguments('path: Invalid type: Expected string but received 42'),
    );
    expect(errors[1]?.startsWith('Invalid JSON in tool arguments: ')).toBe(true);
    expect(errors[2]).toBe(TOOL_ERROR_MESSAGES.unknownTool('launch_rockets'));
    expect(fixture.events.filter((event) => event.type === 'tool.failed')).toHaveLength(3);
    const last = requestBodies(fixture.model)[3] as Body;
    expect(last.messages.filter((message) => message.role === 'tool')).toHaveLength(3);
  });

  it('stops at agent.max_turns with a tool-less grace call and the (empty) sentinel', async () => {
    const fixture = await agentFixture({
      raw: { agent: { max_turns: 2 } },
      server: {
        script: [
          { toolCalls: [{ name: 'todo' }] },
          { toolCalls: [{ name: 'todo' }] },
          { text: '' },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'loop',
      onEvent: fixture.onEvent,
    });
    expect(result).toMatchObject({
      status: 'completed',
      exitReason: 'max_iterations',
      finalResponse: EMPTY_RESPONSE_SENTINEL,
    });
    const grace = requestBodies(fixture.model)[2] as Body;
    expect(grace.tools).toBeUndefined();
    expect(grace.messages.at(-1)).toEqual({ role: 'user', content: GRACE_CALL_NOTE });
    const completed = fixture.events.at(-1);
    expect(completed).toMatchObject({ type: 'run.completed', exitReason: 'max_iterations' });
    expect(JSON.stringify(fixture.store.getMessages(session.id))).not.toContain(GRACE_CALL_NOTE);
  });

  it('sends an ephemeral note without storing it, and stores an injected message with its display kind', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'noted' }] } });
    const agent = fixture.agent();
    const session = await agent.createSession();
    await agent.runTurn({
      sessionId: session.id,
      message: '[ASYNC DELEGATION COMPLETE — deleg_1] result',
      displayKind: 'async_delegation',
      ephemeralSystemNote: 'NOTE: a background task just finished.',
    });
    const body = requestBodies(fixture.model)[0] as Body;
    expect(body.messages[0]?.content).toContain('NOTE: a background task just finished.');
    const rows = fixture.store.getMessages(session.id);
    expect(rows[0]).toMatchObject({ role: 'user', displayKind: 'async_delegation' });
    expect(JSON.stringify(rows)).not.toContain('a background task just finished');
  });

  it('moves to fallback_providers after retrying a failing main provider', async () => {
    const backup = await startModelServer({ script: [{ text: 'backup speaking' }] });
    try {
      const fixture = await agentFixture({
        raw: {
          agent: { api_max_retries: 1 },
          fallback_providers: [{ provider: 'custom', base_url: backup.baseUrl, model: 'b-model' }],
        },
        server: { script: [{ error: { status: 500 } }, { error: { status: 503 } }] },
      });
      const agent = fixture.agent();
      const session = await agent.createSession();
      const result = await agent.runTurn({
        sessionId: session.id,
        message: 'hi',
        onEvent: fixture.onEvent,
      });
      expect(result.finalResponse).toBe('backup speaking');
      expect(fixture.model.modelRequests).toHaveLength(2);
      expect(backup.modelRequests[0]?.body).toMatchObject({ model: 'b-model' });
      expect(types(fixture.events)).toContain('model.fallback');
    } finally {
      await backup.close();
    }
  });

  it('reports a provider failure as run.failed with the provider’s message, keeping the user message', async () => {
    const fixture = await agentFixture({
      server: { script: [{ error: { status: 401, message: 'Incorrect API key provided.' } }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'hi',
      onEvent: fixture.onEvent,
    });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({
      code: 'provider_error',
      message: 'Incorrect API key provided.',
    });
    expect(fixture.events.at(-1)).toMatchObject({ type: 'run.failed' });
    expect(fixture.store.getMessages(session.id).map((row) => row.role)).toEqual(['user']);
  });
});

describe('runTurn: model calls counted', () => {
  it('a call that fails after its retries counts every request it sent', async () => {
    // Default retries (agent.api_max_retries 2): three requests, answered with errors or a
    // dropped connection, then the turn fails.
    const fixture = await agentFixture({
      server: { script: [{ error: { status: 500 } }, { reset: true }, { error: { status: 503 } }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'hi',
      onEvent: fixture.onEvent,
    });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider_unavailable');
    expect(fixture.model.modelRequests).toHaveLength(3);
    expect(result.usage.apiCalls).toBe(3);
    expect(fixture.events.at(-1)).toMatchObject({ type: 'run.failed', usage: { apiCalls: 3 } });
    expect(fixture.store.requireSession(session.id).apiCallCount).toBe(3);
  });

  it("a refused call counts once, a new conversation's first call too", async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          { error: { status: 400, message: 'bad request' } },
          { error: { status: 401, message: 'no key' } },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const refused = await agent.runTurn({ sessionId: session.id, message: 'hi' });
    expect(refused).toMatchObject({ status: 'failed', usage: { apiCalls: 1 } });
    expect(fixture.store.requireSession(session.id).apiCallCount).toBe(1);
    // The early call sent while the new conversation's transaction commits.
    const fresh = await agent.runTurn({ sessionId: 'fresh', newSession: {}, message: 'hi' });
    expect(fresh).toMatchObject({ status: 'failed', usage: { apiCalls: 1 } });
    expect(fixture.store.requireSession('fresh').apiCallCount).toBe(1);
    expect(fixture.model.modelRequests).toHaveLength(2);
  });

  it("a call answered after a retry counts both requests, and a fallback's too", async () => {
    const backup = await startModelServer({ script: [{ text: 'backup speaking' }] });
    try {
      const fixture = await agentFixture({
        raw: {
          fallback_providers: [{ provider: 'custom', base_url: backup.baseUrl, model: 'b-model' }],
        },
        server: {
          script: [
            { reset: true },
            { text: 'retried' },
            { error: { status: 500 } },
            { error: { status: 502 } },
            { error: { status: 503 } },
          ],
        },
      });
      const agent = fixture.agent();
      const session = await agent.createSession();
      const retried = await agent.runTurn({ sessionId: session.id, message: 'one' });
      expect(retried).toMatchObject({ finalResponse: 'retried', usage: { apiCalls: 2 } });
      const fellBack = await agent.runTurn({ sessionId: session.id, message: 'two' });
      expect(fellBack).toMatchObject({ finalResponse: 'backup speaking', usage: { apiCalls: 4 } });
      expect(fixture.store.requireSession(session.id).apiCallCount).toBe(6);
    } finally {
      await backup.close();
    }
  });
});

describe('runTurn: where the turn starts', () => {
  /** The `previousMessageId` of the turn's `run.started`. */
  const markOf = (events: readonly AgentEvent[]) => {
    const started = events.find((event) => event.type === 'run.started');
    return started?.type === 'run.started' ? started.previousMessageId : undefined;
  };

  it("run.started names the session's newest row before the turn's user message, as the turn's transaction saw it", async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'first' }, { text: 'second' }, { text: 'resumed' }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const first: AgentEvent[] = [];
    await agent.runTurn({ sessionId: session.id, message: 'one', onEvent: (e) => first.push(e) });
    expect(markOf(first)).toBe(0);

    // Another connection (another process's store) appends after the agent last read the session.
    const other = await openSessionStore({ path: path.join(fixture.home, 'state.db') });
    const [elsewhere] = await other.appendMessages(session.id, [
      { role: 'assistant', content: 'said elsewhere' },
    ]);
    await other.close();
    const second: AgentEvent[] = [];
    await agent.runTurn({ sessionId: session.id, message: 'two', onEvent: (e) => second.push(e) });
    const rows = fixture.store.getMessages(session.id);
    const userRow = rows.findIndex((row) => row.role === 'user' && row.content === 'two');
    expect(rows[userRow - 1]?.id).toBe(elsewhere);
    expect(markOf(second)).toBe(elsewhere);

    // A turn without a user message starts after the newest row.
    const resumed: AgentEvent[] = [];
    await agent.runTurn({ sessionId: session.id, onEvent: (e) => resumed.push(e) });
    expect(markOf(resumed)).toBe(rows.at(-1)?.id);
  });

  it('reads the mark under the lease when the opening transaction fails and the turn stores its message alone', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'a' }, { text: 'b' }] } });
    const session = await fixture.agent().createSession();
    await fixture.agent().runTurn({ sessionId: session.id, message: 'one' });
    // The opening transaction fails (a store error other than a lock held too long).
    const failing = new Proxy(fixture.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === 'beginTurn') return () => Promise.reject(new Error('disk I/O error'));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const events: AgentEvent[] = [];
    const result = await fixture
      .agent({ store: failing })
      .runTurn({ sessionId: session.id, message: 'two', onEvent: (event) => events.push(event) });
    expect(result.status).toBe('completed');
    const rows = fixture.store.getMessages(session.id);
    const userRow = rows.findIndex((row) => row.content === 'two');
    expect(userRow).toBeGreaterThan(0);
    expect(markOf(events)).toBe(rows[userRow - 1]?.id);
  });

  it("a new conversation's turn starts after the client's earlier messages", async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'a' }, { text: 'b' }] } });
    const agent = fixture.agent({ platform: 'api_server' });
    const seeded: AgentEvent[] = [];
    await agent.runTurn({
      sessionId: 'with_history',
      message: 'and now?',
      newSession: {
        history: [
          { role: 'user', content: 'earlier question' },
          { role: 'assistant', content: 'earlier answer' },
        ],
      },
      onEvent: (event) => seeded.push(event),
    });
    const rows = fixture.store.getMessages('with_history');
    expect(rows.map((row) => row.content).slice(0, 3)).toEqual([
      'earlier question',
      'earlier answer',
      'and now?',
    ]);
    expect(markOf(seeded)).toBe(rows[1]?.id);
    const fresh: AgentEvent[] = [];
    await agent.runTurn({
      sessionId: 'without_history',
      message: 'hi',
      newSession: {},
      onEvent: (event) => fresh.push(event),
    });
    expect(markOf(fresh)).toBe(0);
  });
});

describe('runTurn: run ids', () => {
  it("carries a caller's run id on every event, the result and the tools' context", async () => {
    const seen: string[] = [];
    const probe = defineTool({
      name: 'probe',
      toolset: 'file',
      readOnly: true,
      description: 'Reports its run id',
      parameters: v.object({}),
      run: (_args, context) => {
        seen.push(context.runId);
        return 'ok';
      },
    });
    const fixture = await agentFixture({
      server: {
        script: [{ toolCalls: [{ id: 'c1', name: 'probe', arguments: {} }] }, { text: 'done' }],
      },
    });
    const agent = fixture.agent({ tools: [probe] });
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'go',
      runId: 'run_0123abcd',
      onEvent: fixture.onEvent,
    });
    expect(result.runId).toBe('run_0123abcd');
    expect(seen).toEqual(['run_0123abcd']);
    expect(fixture.events.length).toBeGreaterThan(3);
    expect(new Set(fixture.events.map((event) => event.runId))).toEqual(new Set(['run_0123abcd']));

    // Without one, each turn draws its own.
    const other = await agent.createSession();
    const drawn = await agent.runTurn({ sessionId: other.id, message: 'again' });
    expect(drawn.runId).toMatch(/^run_[0-9a-f]{32}$/);
  });
});

describe('runTurn: refusals', () => {
  it('throws the configuration error before storing anything', async () => {
    const fixture = await agentFixture();
    const agent = fixture.agent({
      config: { ...fixture.config, model: { ...fixture.config.model, baseUrl: '' } },
    });
    const session = await agent.createSession();
    const error = await agent
      .runTurn({ sessionId: session.id, message: 'hi' })
      .catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error)).toBe(true);
    expect((error as AgentError).message).toBe(AGENT_ERROR_MESSAGES.baseUrlMissing);
    expect(fixture.store.getMessages(session.id)).toEqual([]);
  });

  it('refuses a second turn on a busy session with a typed error, then serves it afterwards', async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'slow', delayMs: 600 }, { text: 'second' }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const first = agent.runTurn({ sessionId: session.id, message: 'one' });
    await waitFor(() => fixture.model.modelRequests.length === 1);
    const busy = await agent
      .runTurn({ sessionId: session.id, message: 'two' })
      .catch((caught: unknown) => caught);
    expect((busy as AgentError).code).toBe('session_busy');
    expect((busy as AgentError).message).toBe(AGENT_ERROR_MESSAGES.sessionBusy(session.id));
    expect((await first).finalResponse).toBe('slow');
    expect((await agent.runTurn({ sessionId: session.id, message: 'two' })).finalResponse).toBe(
      'second',
    );
    expect(fixture.store.getMessages(session.id).map((row) => row.content)).toEqual([
      'one',
      'slow',
      'two',
      'second',
    ]);
  });

  it('refuses a run id that is not a plain token before storing anything', async () => {
    const fixture = await agentFixture();
    const agent = fixture.agent();
    const session = await agent.createSession();
    for (const runId of ['', 'run 1', 'r'.repeat(129), 'run\n1', 7 as unknown as string]) {
      await expect(agent.runTurn({ sessionId: session.id, message: 'hi', runId })).rejects.toThrow(
        TypeError,
      );
    }
    expect(fixture.store.getMessages(session.id)).toEqual([]);
    expect(fixture.model.modelRequests).toHaveLength(0);
  });

  it('refuses an unknown session', async () => {
    const fixture = await agentFixture();
    await expect(fixture.agent().runTurn({ sessionId: 'nope', message: 'x' })).rejects.toThrow(
      AGENT_ERROR_MESSAGES.sessionNotFound('nope'),
    );
  });
});

describe('runTurn: interrupts', () => {
  it('cancels the stream, stores what was said, and the next turn resumes with it', async () => {
    const text = 'This answer is long enough to be interrupted somewhere in the middle of it.';
    const fixture = await agentFixture({
      server: { script: [{ text, chunkSize: 4, chunkDelayMs: 30 }, { text: 'Resumed.' }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const controller = new AbortController();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'tell me',
      signal: controller.signal,
      onEvent: (event) => {
        fixture.onEvent(event);
        if (
          event.type === 'message.delta' &&
          fixture.events.filter((e) => e.type === 'message.delta').length === 3
        )
          controller.abort();
      },
    });
    expect(result.status).toBe('interrupted');
    expect(result.finalResponse.length).toBeGreaterThan(0);
    expect(text.startsWith(result.finalResponse)).toBe(true);
    expect(result.finalResponse.length).toBeLessThan(text.length);
    expect(fixture.events.at(-1)).toMatchObject({
      type: 'run.interrupted',
      partialResponse: result.finalResponse,
    });
    // The stopped call was made: it counts, in the result and in the session's counters.
    expect(result.usage.apiCalls).toBe(1);
    expect(fixture.store.getSession(session.id)?.apiCallCount).toBe(1);
    const stored = fixture.store.getMessages(session.id);
    expect(stored.at(-1)).toMatchObject({
      role: 'assistant',
      content: result.finalResponse,
      finishReason: 'interrupted',
    });

    const resumed = await agent.runTurn({ sessionId: session.id, message: 'go on' });
    expect(resumed.finalResponse).toBe('Resumed.');
    const body = requestBodies(fixture.model)[1] as Body;
    expect(body.messages.slice(1).map((message) => [message.role, message.content])).toEqual([
      ['user', 'tell me'],
      ['assistant', result.finalResponse],
      ['user', 'go on'],
    ]);
  });

  it('kills a running terminal command’s process tree and leaves a valid transcript', async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          {
            toolCalls: [
              {
                id: 't1',
                name: 'terminal',
                arguments: { command: 'sleep 60 & echo $! > bg.pid; wait' },
              },
            ],
          },
          { text: 'after' },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const controller = new AbortController();
    const pidFile = path.join(fixture.workdir, 'bg.pid');
    const running = agent.runTurn({
      sessionId: session.id,
      message: 'run it',
      signal: controller.signal,
    });
    await waitFor(() => {
      try {
        return readFileSync(pidFile, 'utf8').trim() !== '';
      } catch {
        return false;
      }
    });
    const sleeper = Number((await readFile(pidFile, 'utf8')).trim());
    expect(isProcessRunning(sleeper)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result.status).toBe('interrupted');
    await waitFor(() => !isProcessRunning(sleeper));
    const toolRow = fixture.store.getMessages(session.id).find((row) => row.role === 'tool');
    expect(JSON.parse(toolRow?.content ?? '{}')).toEqual({
      error: TOOL_ERROR_MESSAGES.interrupted,
    });
    expect((await agent.runTurn({ sessionId: session.id, message: 'next' })).finalResponse).toBe(
      'after',
    );
  });
});

describe('system prompt', () => {
  it('carries SOUL.md and the workspace context files, and is stored on the session', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'ok' }] } });
    await writeFile(path.join(fixture.home, 'SOUL.md'), 'You are Ada, terse and exact.');
    await writeFile(path.join(fixture.workdir, 'AGENTS.md'), 'Use tabs.');
    await mkdir(path.join(fixture.workdir, 'sub'));
    const agent = fixture.agent({ systemPromptParts: ['CONTEXT: extra brief'] });
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'hi' });
    const system = (requestBodies(fixture.model)[0] as Body).messages[0]?.content ?? '';
    expect(system.startsWith('You are Ada, terse and exact.')).toBe(true);
    expect(system).toContain('## AGENTS.md (workspace instructions)\n\nUse tabs.');
    expect(system.endsWith('CONTEXT: extra brief')).toBe(true);
    expect(fixture.store.getSessionSystemPrompt(session.id)).toBe(system);
  });
});
