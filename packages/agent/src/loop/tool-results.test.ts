import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MessageRecord, SessionStore } from '@hermes/session-store';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { agentFixture, recordingCalls } from '../../test/fixtures.js';
import { defineTool } from '../tools/define-tool.js';

/** What the store holds, as `role[:tool call id]`, when the model is asked. */
function stored(store: SessionStore, sessionId: string): string[] {
  return store
    .getMessages(sessionId)
    .map((row: MessageRecord) => (row.toolCallId ? `${row.role}:${row.toolCallId}` : row.role));
}

const look = defineTool({
  name: 'look',
  toolset: 'file',
  readOnly: true,
  description: 'Reads nothing, changes nothing',
  parameters: v.object({}),
  run: () => 'seen',
});

function effect(workdir: string) {
  return defineTool({
    name: 'effect',
    toolset: 'file',
    description: 'Writes a file',
    parameters: v.object({}),
    run: async () => {
      await writeFile(path.join(workdir, 'effect.txt'), 'done');
      return 'written';
    },
  });
}

describe('runTurn: when tool results are stored', () => {
  it('stores a side-effecting call before the next model call, and a read-only call with the model’s next reply', async () => {
    const fixture = await agentFixture();
    let sessionId = '';
    const seenByModel: string[][] = [];
    fixture.model.push(
      { toolCalls: [{ id: 'e1', name: 'effect', arguments: {} }] },
      () => {
        seenByModel.push(stored(fixture.store, sessionId));
        return { toolCalls: [{ id: 'l1', name: 'look', arguments: {} }] };
      },
      () => {
        seenByModel.push(stored(fixture.store, sessionId));
        return { toolCalls: [{ id: 'e2', name: 'effect', arguments: {} }] };
      },
      () => {
        seenByModel.push(stored(fixture.store, sessionId));
        return { text: 'done' };
      },
    );
    const agent = fixture.agent({ tools: [look, effect(fixture.workdir)] });
    const session = await agent.createSession();
    sessionId = session.id;
    const result = await agent.runTurn({ sessionId, message: 'go' });
    expect(result.status).toBe('completed');

    // The effect's result is on record before the model is asked again.
    expect(seenByModel[0]).toEqual(['user', 'assistant', 'tool:e1']);
    // The read-only result is not yet: it rides with the next reply ...
    expect(seenByModel[1]).toEqual(['user', 'assistant', 'tool:e1', 'assistant']);
    // ... and is stored before that reply, so the next call (an effect) finds it on record.
    expect(seenByModel[2]).toEqual([
      'user',
      'assistant',
      'tool:e1',
      'assistant',
      'tool:l1',
      'assistant',
      'tool:e2',
    ]);
    expect(stored(fixture.store, sessionId)).toEqual([
      'user',
      'assistant',
      'tool:e1',
      'assistant',
      'tool:l1',
      'assistant',
      'tool:e2',
      'assistant',
    ]);
  });

  it('spends one transaction per iteration of read-only calls', async () => {
    const fixture = await agentFixture();
    const iterations = 5;
    for (let index = 0; index < iterations; index += 1)
      fixture.model.push({
        toolCalls: [
          { id: `a${index}`, name: 'look', arguments: {} },
          { id: `b${index}`, name: 'look', arguments: {} },
        ],
      });
    fixture.model.push({ text: 'done' });
    const counted = recordingCalls(fixture.store, [
      'appendMessage',
      'appendMessages',
      'beginTurn',
      'endTurn',
    ]);
    const agent = fixture.agent({ store: counted.store, tools: [look] });
    const session = await agent.createSession();
    const result = await agent.runTurn({ sessionId: session.id, message: 'go' });
    expect(result.status).toBe('completed');
    // beginTurn (lease, prompt, message), one append per tool-calling reply (carrying the
    // previous iteration's results), endTurn (the last results, the reply, usage, lease).
    expect(counted.calls).toEqual([
      'beginTurn',
      ...Array.from({ length: iterations }, () => 'appendMessages'),
      'endTurn',
    ]);
    const rows = fixture.store.getMessages(session.id);
    expect(rows).toHaveLength(1 + iterations * 3 + 1);
    expect(rows.filter((row) => row.role === 'tool').map((row) => row.toolCallId)).toEqual(
      Array.from({ length: iterations }, (_, index) => [`a${index}`, `b${index}`]).flat(),
    );
    expect(fixture.store.requireSession(session.id).toolCallCount).toBe(iterations * 2);
  });

  it('stores pending read-only results when the turn is interrupted during the next model call', async () => {
    const fixture = await agentFixture();
    const controller = new AbortController();
    fixture.model.push({ toolCalls: [{ id: 'l1', name: 'look', arguments: {} }] }, () => {
      controller.abort();
      return { text: 'never seen', delayMs: 5000 };
    });
    const agent = fixture.agent({ tools: [look] });
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'go',
      signal: controller.signal,
    });
    expect(result.status).toBe('interrupted');
    expect(stored(fixture.store, session.id)).toEqual(['user', 'assistant', 'tool:l1']);
    // The next turn sends the real result, not "no result recorded".
    fixture.model.push({ text: 'ok' });
    await agent.runTurn({ sessionId: session.id, message: 'again' });
    const last = fixture.model.modelRequests.at(-1)?.body as {
      messages: { role: string; content: string }[];
    };
    expect(last.messages.find((message) => message.role === 'tool')?.content).toBe('seen');
  });

  it('stores pending read-only results when the next model call fails', async () => {
    const fixture = await agentFixture();
    fixture.model.push(
      { toolCalls: [{ id: 'l1', name: 'look', arguments: {} }] },
      { error: { status: 400, message: 'bad request from provider' } },
    );
    const agent = fixture.agent({ tools: [look] });
    const session = await agent.createSession();
    const result = await agent.runTurn({ sessionId: session.id, message: 'go' });
    expect(result.status).toBe('failed');
    expect(stored(fixture.store, session.id)).toEqual(['user', 'assistant', 'tool:l1']);
  });

  it('warns, not throws, when the pending results cannot be stored at the end', async () => {
    const fixture = await agentFixture();
    let sessionId = '';
    fixture.model.push({ toolCalls: [{ id: 'l1', name: 'look', arguments: {} }] }, async () => {
      // The conversation is deleted while the model answers (another process forcing it, say).
      await fixture.store.deleteSession(sessionId, { whileTurnRuns: 'delete' });
      return { error: { status: 400, message: 'bad request from provider' } };
    });
    const agent = fixture.agent({ tools: [look] });
    const session = await agent.createSession();
    sessionId = session.id;
    const events: string[] = [];
    const result = await agent.runTurn({
      sessionId,
      message: 'go',
      onEvent: (event) => {
        if (event.type === 'warning') events.push(event.code);
      },
    });
    expect(result.status).toBe('failed');
    expect(events).toContain('tool_results_not_recorded');
  });
});
