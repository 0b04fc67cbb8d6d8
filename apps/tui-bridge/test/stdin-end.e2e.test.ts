import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { scriptedModel, startStdioBridge, writeModelConfig } from './bridge-client.js';

function line(id: number | string, method: string, params: unknown): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
}

function replyTo(
  lines: readonly string[],
  id: number | string,
): Record<string, unknown> | undefined {
  return lines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((message) => message.id === id && message.method === undefined);
}

describe('a front end that closes stdin right after writing', () => {
  it('gets an answer to every request it wrote, and the session it created ends as machinery', async () => {
    const home = await tempHome();
    const bridge = await startStdioBridge({ home: home.path });
    // A script: `hermes-tui-bridge < requests.ndjson`. The input ends in the same write.
    bridge.child.stdin.end(
      line(1, 'session.create', { title: 'Piped' }) +
        line(2, 'session.list', {}) +
        line(3, 'profiles.list', {}),
    );
    expect(await bridge.exited).toBe(0);

    const lines = bridge.client.lines;
    expect(replyTo(lines, 1)?.result).toMatchObject({ title: 'Piped', profile: 'default' });
    expect(replyTo(lines, 2)?.result).toHaveProperty('sessions');
    expect(replyTo(lines, 3)?.result).toHaveProperty('profiles');
    const created = replyTo(lines, 1)?.result as { stored_session_id: string } | undefined;
    const stored = created?.stored_session_id ?? '';
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    expect(store.getSession(stored)?.endReason).toBe('tui_shutdown');
    await store.close();
  });

  it('gets the run id, the events and the stored answer of a prompt written just before', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'an answer for a closed pipe', chunkSize: 4 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startStdioBridge({ home: home.path });
    const { session_id, stored_session_id } = await bridge.client.request<{
      session_id: string;
      stored_session_id: string;
    }>('session.create', {});

    bridge.child.stdin.end(line('last', 'prompt.submit', { session_id, text: 'one more thing' }));
    expect(await bridge.exited).toBe(0);

    const reply = replyTo(bridge.client.lines, 'last');
    const runId = (reply?.result as { run_id?: string } | undefined)?.run_id;
    expect(runId).toMatch(/\S/);
    const done = bridge.client.eventsOf('run.completed', session_id).at(-1);
    expect(done?.payload).toMatchObject({
      run_id: runId,
      status: 'completed',
      final_response: 'an answer for a closed pipe',
    });
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    expect(store.getMessages(stored_session_id).map((row) => [row.role, row.content])).toEqual([
      ['user', 'one more thing'],
      ['assistant', 'an answer for a closed pipe'],
    ]);
    expect(store.getSession(stored_session_id)?.endReason).toBe('tui_shutdown');
    await store.close();
  });
});

describe('a prompt queued when the front end closes stdin', () => {
  it('runs after the running turn during the drain, and both are stored', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { text: 'the first answer, streamed for a while', chunkSize: 3, chunkDelayMs: 60 },
      { text: 'the queued answer' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startStdioBridge({ home: home.path });
    const { session_id, stored_session_id } = await bridge.client.request<{
      session_id: string;
      stored_session_id: string;
    }>('session.create', {});
    await bridge.client.request('prompt.submit', { session_id, text: 'first' });
    await bridge.client.waitForEvent((event) => event.type === 'message.delta');
    const queued = await bridge.client.request<{ type: string }>('command.dispatch', {
      session_id,
      name: 'queue',
      arg: 'and then this',
    });
    expect(queued.type).toBe('queued');

    bridge.endInput();
    expect(await bridge.exited).toBe(0);
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    expect(store.getMessages(stored_session_id).map((row) => [row.role, row.content])).toEqual([
      ['user', 'first'],
      ['assistant', 'the first answer, streamed for a while'],
      ['user', 'and then this'],
      ['assistant', 'the queued answer'],
    ]);
    expect(store.getSession(stored_session_id)?.endReason).toBe('tui_shutdown');
    await store.close();
  });
});

describe('a signal while the bridge drains after stdin closed', () => {
  it('interrupts the turn now: what it said is stored and the session ends as machinery', async () => {
    const home = await tempHome();
    const reply = 'a long answer that is still streaming when the signal comes in';
    // About 6 s of streaming: the signal lands well inside it.
    const server = await scriptedModel([{ text: reply, chunkSize: 2, chunkDelayMs: 200 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startStdioBridge({ home: home.path });
    const { session_id, stored_session_id } = await bridge.client.request<{
      session_id: string;
      stored_session_id: string;
    }>('session.create', {});
    await bridge.client.request('prompt.submit', { session_id, text: 'go' });
    await bridge.client.waitForEvent((event) => event.type === 'message.delta');

    bridge.endInput();
    // The drain is under way: the turn goes on streaming after the input ended.
    const from = bridge.client.eventsOf('message.delta').length;
    await bridge.client.waitFor(() =>
      bridge.client.eventsOf('message.delta').length >= from + 2 ? true : undefined,
    );
    bridge.child.kill('SIGTERM');
    expect(await bridge.exited).toBe(0);

    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    const rows = store.getMessages(stored_session_id);
    expect(rows[0]).toMatchObject({ role: 'user', content: 'go' });
    const partial = rows[1]?.content ?? '';
    expect(rows[1]?.role).toBe('assistant');
    expect(partial.length).toBeGreaterThan(0);
    expect(reply.startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(reply.length);
    expect(store.getSession(stored_session_id)?.endReason).toBe('tui_shutdown');
    await store.close();
  });
});
