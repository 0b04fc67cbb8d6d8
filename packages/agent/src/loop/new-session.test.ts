import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionStore } from '@hermes/session-store';
import { describe, expect, it } from 'vitest';
import { agentFixture, recordingCalls, requestBodies, sentContents } from '../../test/fixtures.js';
import { AgentError } from '../errors.js';

/**
 * `store` with `beginTurn` held until the model server has received a request (at most 3 s),
 * then `afterMs` more. Returns whether the request had arrived when the transaction started.
 */
function holdOpeningWrite(
  store: SessionStore,
  model: { modelRequests: readonly unknown[] },
  afterMs = 0,
): { store: SessionStore; arrivedFirst: boolean[] } {
  const arrivedFirst: boolean[] = [];
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'beginTurn') return value.bind(target);
      return async (...args: Parameters<SessionStore['beginTurn']>) => {
        const deadline = Date.now() + 3000;
        while (model.modelRequests.length === 0 && Date.now() < deadline) await sleep(5);
        arrivedFirst.push(model.modelRequests.length > 0);
        if (afterMs > 0) await sleep(afterMs);
        return target.beginTurn(...args);
      };
    },
  });
  return { store: proxy, arrivedFirst };
}

describe('a turn that starts a new conversation', () => {
  it('creates the conversation in the transaction that stores its first messages', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'hello back' }] } });
    const { store, calls } = recordingCalls(fixture.store, [
      'createSession',
      'beginTurn',
      'appendMessages',
      'appendMessage',
      'setSessionSystemPrompt',
      'endTurn',
    ]);
    const agent = fixture.agent({ store, platform: 'api_server' });
    const result = await agent.runTurn({
      sessionId: 'api_new_1',
      message: 'hi',
      newSession: { source: 'api_server', profileName: 'work', sessionKey: 'peer-1' },
    });
    expect(result).toMatchObject({ status: 'completed', finalResponse: 'hello back' });
    expect(calls).toEqual(['beginTurn', 'endTurn']);
    expect(fixture.store.requireSession('api_new_1')).toMatchObject({
      source: 'api_server',
      profileName: 'work',
      sessionKey: 'peer-1',
      model: 'test-model',
      cwd: fixture.workdir,
      messageCount: 2,
    });
    const [firstRequest] = requestBodies(fixture.model) as { messages: { content: string }[] }[];
    expect(fixture.store.getSessionSystemPrompt('api_new_1')).toBe(
      firstRequest?.messages[0]?.content,
    );
    expect(fixture.store.getMessages('api_new_1').map((row) => [row.role, row.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello back'],
    ]);
    expect(fixture.store.getTurnLease('api_new_1')).toBeNull();
  });

  it('sends the first model request before that transaction, and uses the answer only after it commits', async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'Hello there, my friend.', chunkSize: 3 }] },
    });
    // The whole streamed answer is in before the transaction even starts.
    const held = holdOpeningWrite(fixture.store, fixture.model, 200);
    const agent = fixture.agent({ store: held.store });
    const result = await agent.runTurn({
      sessionId: 'fresh',
      message: 'hi',
      newSession: {},
      onEvent: fixture.onEvent,
    });
    expect(held.arrivedFirst).toEqual([true]);
    expect(result.finalResponse).toBe('Hello there, my friend.');
    // Events the call produced while the transaction waited come after run.started, in order.
    const seen = fixture.events.map((event) => event.type);
    expect(seen[0]).toBe('run.started');
    const deltas = fixture.events.filter((event) => event.type === 'message.delta');
    expect(deltas.map((event) => event.text).join('')).toBe('Hello there, my friend.');
    expect(seen.lastIndexOf('message.delta')).toBeLessThan(seen.indexOf('message.completed'));
    for (const event of fixture.events) expect(event.sessionId).toBe('fresh');
    const [user, reply] = fixture.store.getMessages('fresh');
    expect([user?.content, reply?.content]).toEqual(['hi', 'Hello there, my friend.']);
    expect(reply?.id).toBeGreaterThan(user?.id ?? Number.POSITIVE_INFINITY);
  });

  it('stores the client’s earlier messages before the turn’s, and sends them all', async () => {
    const fixture = await agentFixture({
      server: { script: [{ text: 'four' }, { text: 'five' }] },
    });
    const agent = fixture.agent();
    await agent.runTurn({
      sessionId: 'seeded',
      message: 'and three?',
      newSession: {
        history: [
          { role: 'user', content: 'one?' },
          { role: 'assistant', content: 'two' },
        ],
      },
    });
    expect(sentContents(fixture.model, 0)).toEqual(['one?', 'two', 'and three?']);
    expect(fixture.store.getMessages('seeded').map((row) => row.content)).toEqual([
      'one?',
      'two',
      'and three?',
      'four',
    ]);
    // The next turn goes on from the stored conversation.
    await agent.runTurn({ sessionId: 'seeded', message: 'next?' });
    expect(sentContents(fixture.model, 1)).toEqual(['one?', 'two', 'and three?', 'four', 'next?']);
  });

  it('refuses an id that is taken — session_exists, the other conversation untouched, nothing stored', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'x', delayMs: 300 }] } });
    await fixture.store.createSession({ id: 'taken', source: 'cli' });
    await fixture.store.appendMessage('taken', { role: 'user', content: 'theirs' });
    const agent = fixture.agent();
    const attempt = agent.runTurn({
      sessionId: 'taken',
      message: 'mine',
      newSession: {},
      onEvent: fixture.onEvent,
    });
    await expect(attempt).rejects.toSatisfy(
      (error) => AgentError.isInstance(error) && error.code === 'session_exists',
    );
    expect(fixture.store.getMessages('taken').map((row) => row.content)).toEqual(['theirs']);
    expect(fixture.store.getSessionSystemPrompt('taken')).toBeNull();
    expect(fixture.store.getTurnLease('taken')).toBeNull();
    expect(fixture.events).toEqual([]);
  });
});
