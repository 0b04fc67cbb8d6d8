import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { describe, expect, it } from 'vitest';
import {
  type AgentFixture,
  agentFixture,
  recordingCalls,
  requestBodies,
  sentContents,
  spawnFixture,
} from '../../test/fixtures.js';
import { sanitizeMessages } from '../model/sanitize-messages.js';
import { rowsToMessages } from './transcript.js';

type Body = { messages: { role: string; content: unknown; tool_calls?: unknown }[] };

function sent(bodies: Record<string, unknown>[], index: number): Body['messages'] {
  return (bodies[index] as Body).messages;
}

/** Runs `write-transcript.ts` in its own process: a foreign writer of the same state.db. */
async function writeFromAnotherProcess(
  databasePath: string,
  sessionId: string,
  ...args: string[]
): Promise<void> {
  const child = await spawnFixture('write-transcript.ts', [databasePath, sessionId, ...args]);
  const exit = await child.exited;
  expect(exit.code, child.stderr()).toBe(0);
}

/**
 * Two turns ("one", then "two") of one agent on one session, `between` running in between; the
 * texts of the second request's messages after the system prompt.
 */
async function secondRequestAround(
  between: (fixture: AgentFixture, sessionId: string) => Promise<void>,
): Promise<unknown[]> {
  const fixture = await agentFixture({
    server: { script: [{ text: 'first' }, { text: 'second' }] },
  });
  const agent = fixture.agent();
  const session = await agent.createSession();
  await agent.runTurn({ sessionId: session.id, message: 'one' });
  await between(fixture, session.id);
  await agent.runTurn({ sessionId: session.id, message: 'two' });
  return sentContents(fixture.model, 1);
}

describe('what a turn keeps between turns', () => {
  it('sends the workspace instructions as they are now: an edited, removed or new file is in the next turn', async () => {
    const fixture = await agentFixture({
      server: { script: Array.from({ length: 5 }, () => ({ text: 'ok' })) },
    });
    const agentsFile = path.join(fixture.workdir, 'AGENTS.md');
    await writeFile(agentsFile, 'Use tabs.');
    const agent = fixture.agent();
    const session = await agent.createSession();
    const turn = async () => {
      await agent.runTurn({ sessionId: session.id, message: 'hi' });
      const bodies = requestBodies(fixture.model);
      return String(sent(bodies, bodies.length - 1)[0]?.content);
    };
    expect(await turn()).toContain('Use tabs.');
    expect(await turn()).toContain('Use tabs.');
    await writeFile(agentsFile, 'Use tab!!'); // the same size
    expect(await turn()).toContain('Use tab!!');
    await rm(agentsFile);
    await writeFile(path.join(fixture.home, 'SOUL.md'), 'You are Ada.');
    const prompt = await turn();
    expect(prompt).not.toContain('AGENTS.md');
    expect(prompt.startsWith('You are Ada.')).toBe(true);
    await writeFile(path.join(fixture.workdir, 'CLAUDE.md'), 'Be brief.');
    expect(await turn()).toContain('## CLAUDE.md (workspace instructions)\n\nBe brief.');
    expect(fixture.store.getSessionSystemPrompt(session.id)).toContain('Be brief.');
  });

  it('sends turn after turn what a fresh agent would send: every stored message, tool calls and results included', async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          { toolCalls: [{ id: 'c1', name: 'todo', arguments: { todos: [] } }] },
          { text: 'first answer' },
          { text: 'second answer' },
          { text: 'fresh agent answer' },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'one' });
    await agent.runTurn({ sessionId: session.id, message: 'two' });
    await fixture.agent().runTurn({ sessionId: session.id, message: 'three' });
    const bodies = requestBodies(fixture.model);
    const second = sent(bodies, 2);
    expect(second.slice(1).map((message) => [message.role, message.content])).toEqual([
      ['user', 'one'],
      ['assistant', null],
      ['tool', expect.any(String)],
      ['assistant', 'first answer'],
      ['user', 'two'],
    ]);
    // The fresh agent (nothing kept) sends the same conversation plus its own message.
    expect(sent(bodies, 3).slice(0, -2)).toEqual(second);
    expect(sent(bodies, 3).slice(1)).toEqual(
      sanitizeMessages(rowsToMessages(fixture.store.getMessages(session.id)), 'test-model').slice(
        0,
        -1,
      ),
    );
  });

  it('sends a message another process stored between two turns, in its place', async () => {
    const texts = await secondRequestAround((fixture, sessionId) =>
      writeFromAnotherProcess(fixture.store.path, sessionId, 'append', 'from elsewhere'),
    );
    expect(texts).toEqual(['one', 'first', 'from elsewhere', 'two']);
  });

  it('drops a message another process superseded between two turns', async () => {
    const texts = await secondRequestAround((fixture, sessionId) =>
      writeFromAnotherProcess(fixture.store.path, sessionId, 'supersede', 'one'),
    );
    expect(texts).toEqual(['first', 'two']);
  });

  it('drops a message another store handle of this process superseded between two turns', async () => {
    const texts = await secondRequestAround(async (fixture, sessionId) => {
      const other = await openSessionStore({ path: fixture.store.path });
      try {
        await other.withWriteTransaction((database) =>
          database
            .prepare('UPDATE messages SET active = 0 WHERE session_id = ? AND content = ?')
            .run(sessionId, 'one'),
        );
      } finally {
        await other.close();
      }
    });
    expect(texts).toEqual(['first', 'two']);
  });
});

describe('the first turn of a conversation', () => {
  it('reads nothing back: the new session’s user message goes to the model as stored', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'hello' }] } });
    const { store, calls } = recordingCalls(fixture.store, ['getMessages']);
    const agent = fixture.agent({ store });
    const session = await agent.createSession();
    await agent.runTurn({ sessionId: session.id, message: 'hi there' });
    expect(calls).toEqual([]);
    expect(sentContents(fixture.model, 0)).toEqual(['hi there']);
  });

  it('sends the rows a caller stored before it (a seeded history), in order', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'hello' }] } });
    const agent = fixture.agent();
    const session = await agent.createSession();
    await fixture.store.appendMessages(session.id, [
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
    ]);
    await agent.runTurn({ sessionId: session.id, message: 'now' });
    expect(sentContents(fixture.model, 0)).toEqual(['earlier question', 'earlier answer', 'now']);
  });
});

describe('a session deleted and created again under its id', () => {
  it('starts from an empty conversation', async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'first' }, { text: 'second' }] },
    });
    const agent = fixture.agent();
    await agent.createSession({ id: 'chat' });
    await agent.runTurn({ sessionId: 'chat', message: 'one' });
    await fixture.store.deleteSession('chat');
    await agent.createSession({ id: 'chat' });
    await agent.runTurn({ sessionId: 'chat', message: 'two' });
    expect(sentContents(fixture.model, 1)).toEqual(['two']);
  });
});

describe('a turn’s writes', () => {
  it('leave the lease free, the usage recorded and every message stored once a turn completes', async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          {
            toolCalls: [{ id: 'c1', name: 'todo', arguments: { todos: [] } }],
            usage: { promptTokens: 5, completionTokens: 2 },
          },
          { text: 'done', usage: { promptTokens: 9, completionTokens: 3 } },
        ],
      },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({ sessionId: session.id, message: 'go' });
    expect(result.status).toBe('completed');
    expect(fixture.store.getTurnLease(session.id)).toBeNull();
    expect(fixture.store.getMessages(session.id).map((row) => row.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(fixture.store.requireSession(session.id)).toMatchObject({
      inputTokens: 14,
      outputTokens: 5,
      apiCallCount: 2,
      toolNames: JSON.stringify(['todo']),
    });
  });

  it('are two write transactions for a turn without tools: opening and closing', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'a' }, { text: 'b' }] } });
    const agent = fixture.agent();
    const session = await agent.createSession();
    // contentVersion ends with this store's commit count.
    const commits = () => Number(fixture.store.contentVersion().split('.')[1]);
    const before = commits();
    await agent.runTurn({ sessionId: session.id, message: 'one' });
    expect(commits() - before).toBe(2);
    await agent.runTurn({ sessionId: session.id, message: 'two' });
    expect(commits() - before).toBe(4);
    expect(fixture.store.getMessages(session.id).map((row) => row.content)).toEqual([
      'one',
      'a',
      'two',
      'b',
    ]);
  });

  it('still store the reply when the store refuses the usage, and say so', async () => {
    const fixture = await agentFixture({
      // A provider reporting a fractional token count: the store refuses that usage.
      server: { script: [{ text: 'kept', usage: { promptTokens: 1.5, completionTokens: 1 } }] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'hi',
      onEvent: fixture.onEvent,
    });
    expect(result).toMatchObject({ status: 'completed', finalResponse: 'kept' });
    expect(fixture.store.getMessages(session.id).map((row) => row.content)).toEqual(['hi', 'kept']);
    expect(fixture.events).toContainEqual(
      expect.objectContaining({ type: 'warning', code: 'usage_not_recorded' }),
    );
    expect(fixture.store.getTurnLease(session.id)).toBeNull();
  });

  it('fail the turn, not throw, when the opening writes cannot be stored, and leave the lease free', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'never' }] } });
    const broken = fixture.agent({ systemPrompt: 42 as unknown as string });
    const session = await broken.createSession();
    const result = await broken.runTurn({ sessionId: session.id, message: 'hi' });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'internal_error' } });
    expect(fixture.model.modelRequests).toHaveLength(0);
    expect(fixture.store.getTurnLease(session.id)).toBeNull();
  });
});
