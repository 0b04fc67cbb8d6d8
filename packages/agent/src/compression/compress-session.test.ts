import path from 'node:path';
import { COMPACTION_SUMMARY_PREFIXES } from '@hermes/session-store';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { agentFixture, requestBodies, spawnFixture } from '../../test/fixtures.js';
import { AGENT_ERROR_MESSAGES } from '../errors.js';
import type { AgentEvent } from '../events.js';
import { defineTool } from '../tools/define-tool.js';
import { COMPACTION_SUMMARY_PREFIX, compressSession } from './compress-session.js';

type Body = { messages: { role: string; content: string }[] };

const filler = (index: number) => `message ${index}: ${'lorem ipsum dolor sit amet '.repeat(12)}`;

/** A session with `pairs` user/assistant exchanges of ~330 characters each. */
async function seeded(fixture: Awaited<ReturnType<typeof agentFixture>>, pairs: number) {
  const session = await fixture.store.createSession({ source: 'cli' });
  for (let index = 0; index < pairs; index += 1) {
    await fixture.store.appendMessage(session.id, { role: 'user', content: filler(index * 2) });
    await fixture.store.appendMessage(session.id, {
      role: 'assistant',
      content: filler(index * 2 + 1),
    });
  }
  return session;
}

describe('context compression', () => {
  it('uses the prefix the store recognises for compaction carriers', () => {
    expect(COMPACTION_SUMMARY_PREFIXES).toContain(COMPACTION_SUMMARY_PREFIX);
  });

  it('publishes a child past the threshold; the turn and the next one continue on its tip', async () => {
    const fixture = await agentFixture({
      // 1500 tokens × 0.5 = a 750-token (~3000 character) budget; the seed is ~4000 characters,
      // the compressed child about half the budget.
      raw: { model: { context_length: 1500 }, compression: { threshold: 0.5, protect_last_n: 3 } },
      server: {
        script: [
          { text: 'The user and the agent discussed lorem ipsum at length.' },
          { text: 'Answer after compression.' },
          { text: 'Second answer.' },
        ],
      },
    });
    const session = await seeded(fixture, 6);
    // No tools: their schemas alone would pass this tiny window.
    const agent = fixture.agent({ toolsets: [] });
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'and now?',
      onEvent: fixture.onEvent,
    });

    expect(result.status).toBe('completed');
    expect(result.sessionId).not.toBe(session.id);
    const compressed = fixture.events.find(
      (event): event is Extract<AgentEvent, { type: 'session.compressed' }> =>
        event.type === 'session.compressed',
    );
    expect(compressed).toMatchObject({
      fromSessionId: session.id,
      toSessionId: result.sessionId,
      retainedMessages: 3,
    });
    expect(fixture.store.requireSession(session.id)).toMatchObject({ endReason: 'compression' });
    expect(fixture.store.getCompressionTip(session.id)).toBe(result.sessionId);

    const summaryRequest = requestBodies(fixture.model)[0] as Body;
    expect(summaryRequest.messages[1]?.content).toContain(filler(0));
    const continued = requestBodies(fixture.model)[1] as Body;
    const sent = continued.messages.map((message) => message.content).join('\n');
    expect(sent).toContain(
      `${COMPACTION_SUMMARY_PREFIX}\nThe user and the agent discussed lorem ipsum at length.`,
    );
    expect(sent).not.toContain(filler(0));
    expect(sent).toContain(filler(11));
    expect(continued.messages.at(-1)).toEqual({ role: 'user', content: 'and now?' });

    const child = fixture.store.getMessages(result.sessionId);
    expect(child[0]).toMatchObject({ role: 'user', compressedSummary: 1 });
    expect(child.at(-1)).toMatchObject({ role: 'assistant', content: 'Answer after compression.' });
    expect(fixture.store.getSessionSystemPrompt(result.sessionId)).toBe(
      continued.messages[0]?.content,
    );

    // The id the caller holds keeps working: the next turn lands on the tip.
    const next = await agent.runTurn({ sessionId: session.id, message: 'more' });
    expect(next.sessionId).toBe(result.sessionId);
    expect(fixture.store.getMessages(result.sessionId).at(-1)?.content).toBe('Second answer.');
  });

  it('compresses mid-turn once tool results grow the prompt past the threshold', async () => {
    const bulky = defineTool({
      name: 'bulky',
      toolset: 'bulky',
      description: 'returns a lot',
      parameters: v.object({}),
      run: () => 'z'.repeat(4000),
    });
    const fixture = await agentFixture({
      raw: { model: { context_length: 1500 }, compression: { threshold: 0.5, protect_last_n: 2 } },
      server: {
        script: [
          { toolCalls: [{ id: 'b1', name: 'bulky', arguments: {} }] },
          { text: 'Summary of the bulky work.' },
          { text: 'Done after the mid-turn compression.' },
        ],
      },
    });
    const session = await seeded(fixture, 1);
    const agent = fixture.agent({ tools: [bulky], toolsets: ['bulky'] });
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'go',
      onEvent: fixture.onEvent,
    });
    expect(result).toMatchObject({
      status: 'completed',
      finalResponse: 'Done after the mid-turn compression.',
    });
    const kinds = fixture.events.map((event) => event.type);
    // First call under the threshold; the 4,000-character tool result pushes the next one over.
    expect(kinds.indexOf('tool.completed')).toBeLessThan(kinds.indexOf('session.compressed'));
    expect(result.sessionId).not.toBe(session.id);
  });

  it('keeps every message and warns when the summary fails', async () => {
    const fixture = await agentFixture({
      raw: { model: { context_length: 1000 }, compression: { protect_last_n: 3 } },
      server: {
        script: [
          { error: { status: 400, message: 'summariser refused' } },
          { text: 'fine anyway' },
        ],
      },
    });
    const session = await seeded(fixture, 6);
    const agent = fixture.agent();
    const result = await agent.runTurn({
      sessionId: session.id,
      message: 'hi',
      onEvent: fixture.onEvent,
    });
    expect(result).toMatchObject({
      status: 'completed',
      sessionId: session.id,
      finalResponse: 'fine anyway',
    });
    const warning = fixture.events.find((event) => event.type === 'warning');
    expect(warning).toMatchObject({
      code: 'compression_failed',
      message: 'context compression failed, continuing uncompressed: summariser refused',
    });
    expect(fixture.store.getMessages(session.id)).toHaveLength(14);
    expect(fixture.store.requireSession(session.id).endedAt).toBeNull();
    const sent = (requestBodies(fixture.model)[1] as Body).messages
      .map((message) => message.content)
      .join('\n');
    expect(sent).toContain(filler(0));
  });

  it('compresses on demand (/compress) without splitting a tool call from its result', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'summary' }] } });
    const session = await seeded(fixture, 3);
    await fixture.store.appendMessage(session.id, {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'x1', type: 'function', function: { name: 'todo', arguments: '{}' } }],
    });
    await fixture.store.appendMessage(session.id, {
      role: 'tool',
      content: '{}',
      toolCallId: 'x1',
      toolName: 'todo',
    });
    const result = await compressSession({
      store: fixture.store,
      config: fixture.config,
      sessionId: session.id,
      protectLastN: 1,
      secret: () => undefined,
      home: fixture.home,
    });
    expect(result).toMatchObject({
      parentSessionId: session.id,
      summarizedMessages: 6,
      retainedMessages: 2,
    });
    const child = fixture.store.getMessages(result.childSessionId);
    expect(child.map((row) => row.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('carries into the child what another process stored while the summary was being made', async () => {
    let databasePath = '';
    let parentId = '';
    const fixture = await agentFixture({
      server: {
        script: [
          async () => {
            // A turn of another process (say the gateway's) stores a message meanwhile.
            const child = await spawnFixture('write-transcript.ts', [
              databasePath,
              parentId,
              'append',
              'said during the summary',
            ]);
            const exit = await child.exited;
            if (exit.code !== 0) throw new Error(child.stderr());
            return { text: 'summary' };
          },
        ],
      },
    });
    databasePath = path.join(fixture.home, 'state.db');
    const session = await seeded(fixture, 3);
    parentId = session.id;
    const result = await compressSession({
      store: fixture.store,
      config: fixture.config,
      sessionId: session.id,
      protectLastN: 2,
      secret: () => undefined,
      home: fixture.home,
    });
    const child = fixture.store.getMessages(result.childSessionId);
    expect(child.map((row) => row.content)).toEqual([
      `${COMPACTION_SUMMARY_PREFIX}\nsummary`,
      filler(4),
      filler(5),
      'said during the summary',
    ]);
    expect(fixture.store.requireSession(result.childSessionId).messageCount).toBe(4);
  });

  it('refuses while another holder has the compression lease, changing nothing', async () => {
    const fixture = await agentFixture({ server: { script: [{ text: 'never used' }] } });
    const session = await seeded(fixture, 3);
    expect(await fixture.store.acquireCompressionLease(session.id)).not.toBeNull();
    await expect(
      compressSession({
        store: fixture.store,
        config: fixture.config,
        sessionId: session.id,
        protectLastN: 1,
      }),
    ).rejects.toThrow(AGENT_ERROR_MESSAGES.compressionBusy(session.id));
    expect(fixture.model.modelRequests).toHaveLength(0);
    expect(fixture.store.requireSession(session.id).endedAt).toBeNull();
  });
});
