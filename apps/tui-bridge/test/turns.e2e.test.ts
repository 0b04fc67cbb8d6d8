import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import {
  BRIDGE_BIN,
  bridgeEnv,
  type RpcClient,
  RpcErrorReply,
  scriptedModel,
  startStdioBridge,
  startWsBridge,
  TEST_TOKEN,
  writeModelConfig,
} from './bridge-client.js';

/** A client over either transport, after `gateway.ready`. */
async function connect(transport: 'stdio' | 'websocket', home: string): Promise<RpcClient> {
  if (transport === 'stdio') return (await startStdioBridge({ home })).client;
  const bridge = await startWsBridge({ home });
  return (await bridge.connect()).client;
}

describe.each(['stdio', 'websocket'] as const)('a full turn over %s', (transport) => {
  it('streams deltas, tool events, the stored message and run.completed, in order, after the reply', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, 'notes.txt'), 'the answer is 42\n');
    const server = await scriptedModel([
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'read_file',
            arguments: { path: path.join(home.path, 'notes.txt') },
          },
        ],
      },
      { text: 'The file says the answer is 42.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const client = await connect(transport, home.path);

    const session = await client.request<{
      session_id: string;
      stored_session_id: string;
      profile: string;
    }>('session.create', {});
    expect(session.profile).toBe('default');
    const submitted = await client.call('prompt.submit', {
      session_id: session.session_id,
      text: 'What is in notes.txt?',
    });
    const runId = (submitted.result as { run_id: string }).run_id;
    expect(runId).toMatch(/\S/);
    const done = await client.waitForEvent((event) => event.type === 'run.completed');
    expect(done.session_id).toBe(session.session_id);
    expect(done.payload).toMatchObject({
      run_id: runId,
      status: 'completed',
      final_response: 'The file says the answer is 42.',
    });

    // The reply came before every event of the run it started.
    const replyIndex = client.lines.findIndex(
      (line) => line.includes('"result"') && line.includes(runId) && !line.includes('"event"'),
    );
    const firstEventIndex = client.lines.findIndex((line) => line.includes('"run.started"'));
    expect(replyIndex).toBeGreaterThanOrEqual(0);
    expect(firstEventIndex).toBeGreaterThan(replyIndex);

    const types = client.events
      .filter((event) => event.session_id === session.session_id)
      .map((event) => event.type);
    expect(types[0]).toBe('run.started');
    expect(types.at(-1)).toBe('run.completed');
    const toolStart = client.eventsOf('tool.start')[0];
    expect(toolStart?.payload).toMatchObject({
      run_id: runId,
      call_id: 'call_1',
      name: 'read_file',
    });
    const toolDone = client.eventsOf('tool.complete')[0];
    expect(toolDone?.payload).toMatchObject({
      call_id: 'call_1',
      name: 'read_file',
      ok: true,
      error: null,
    });
    expect(String(toolDone?.payload.result)).toContain('the answer is 42');
    expect(types.indexOf('tool.start')).toBeLessThan(types.indexOf('tool.complete'));
    const deltas = client
      .eventsOf('message.delta')
      .map((event) => event.payload.text)
      .join('');
    expect(deltas).toBe('The file says the answer is 42.');
    const completes = client.eventsOf('message.complete');
    expect(completes).toHaveLength(2);
    expect(completes[0]?.payload.tool_calls).toEqual([
      expect.objectContaining({ id: 'call_1', name: 'read_file' }),
    ]);
    expect(completes[1]?.payload).toMatchObject({ content: 'The file says the answer is 42.' });

    // Stored: a new front end resuming the session sees the whole turn.
    const resumed = await client.request<{
      messages: { role: string; content: string }[];
      running: boolean;
    }>('session.resume', { session_id: session.stored_session_id });
    expect(resumed.running).toBe(false);
    expect(resumed.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(resumed.messages.at(-1)?.content).toBe('The file says the answer is 42.');
  });
});

describe('session.resume from a front end already attached', () => {
  it('answers with the transcript mid-turn without sending the turn again', async () => {
    const home = await tempHome();
    const reply = 'streamed while the front end refreshes its transcript';
    const server = await scriptedModel([{ text: reply, chunkSize: 3, chunkDelayMs: 60 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    await client.request('prompt.submit', { session_id, text: 'go' });
    await client.waitForEvent((event) => event.type === 'message.delta');
    const resumed = await client.request<{ running: boolean }>('session.resume', { session_id });
    expect(resumed.running).toBe(true);
    await client.waitForEvent((event) => event.type === 'run.completed');
    // Every piece of the answer once: nothing replayed to a connection that saw it live.
    const text = client
      .eventsOf('message.delta', session_id)
      .map((event) => String(event.payload.text))
      .join('');
    expect(text).toBe(reply);
    expect(client.eventsOf('run.started', session_id)).toHaveLength(1);
  });

  it('still replays the turn to a front end whose prompt was refused mid-turn (4009)', async () => {
    const home = await tempHome();
    const reply = 'streamed while another front end knocks';
    const server = await scriptedModel([{ text: reply, chunkSize: 2, chunkDelayMs: 80 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });
    const first = await bridge.connect();
    const { session_id } = await first.client.request<{ session_id: string }>('session.create', {});
    await first.client.request('prompt.submit', { session_id, text: 'go' });
    await first.client.waitForEvent((event) => event.type === 'message.delta');

    const second = await bridge.connect();
    const refused = await second.client
      .request('prompt.submit', { session_id, text: 'me too' })
      .catch((error: unknown) => error);
    expect((refused as RpcErrorReply).code).toBe(RPC_ERROR_CODES.sessionBusy);
    const resumed = await second.client.request<{ running: boolean }>('session.resume', {
      session_id,
    });
    expect(resumed.running).toBe(true);
    await second.client.waitForEvent((event) => event.type === 'run.completed');
    const text = second.client
      .eventsOf('message.delta', session_id)
      .map((event) => String(event.payload.text))
      .join('');
    expect(text).toBe(reply);
  });
});

describe('interrupting a turn', () => {
  it('answers a second prompt on a running session with 4009 and interrupts on prompt.interrupt', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'x'.repeat(400), chunkSize: 4, chunkDelayMs: 20 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    const { run_id } = await client.request<{ run_id: string }>('prompt.submit', {
      session_id,
      text: 'long answer please',
    });
    await client.waitForEvent((event) => event.type === 'message.delta');

    const busy = await client
      .request('prompt.submit', { session_id, text: 'again' })
      .catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(RpcErrorReply);
    expect((busy as RpcErrorReply).code).toBe(RPC_ERROR_CODES.sessionBusy);

    expect(await client.request('prompt.interrupt', { session_id })).toEqual({ interrupted: true });
    const done = await client.waitForEvent((event) => event.type === 'run.completed');
    expect(done.payload).toMatchObject({ run_id, status: 'interrupted' });
    const partial = String(done.payload.final_response);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(400);
    expect(await client.request('prompt.interrupt', { session_id })).toEqual({
      interrupted: false,
    });

    // What was said before the interrupt is stored.
    const resumed = await client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      { session_id },
    );
    expect(resumed.messages.at(-1)).toMatchObject({ role: 'assistant', content: partial });
  });
});

describe('a turn over WebSocket', () => {
  it('finishes and is stored when the front end disconnects mid-turn; session.resume after reconnecting replays it', async () => {
    const home = await tempHome();
    const reply = 'streamed slowly so the socket closes in the middle';
    // About 2 s of streaming: long enough that the reconnect lands mid-turn even on a busy machine.
    const server = await scriptedModel([{ text: reply, chunkSize: 2, chunkDelayMs: 80 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });

    const first = await bridge.connect();
    const { session_id } = await first.client.request<{ session_id: string }>('session.create', {});
    const { run_id } = await first.client.request<{ run_id: string }>('prompt.submit', {
      session_id,
      text: 'go',
    });
    await first.client.waitForEvent((event) => event.type === 'message.delta');
    await first.close();

    const second = await bridge.connect();
    const resumed = await second.client.request<{
      running: boolean;
      run_id: string | null;
      messages: unknown[];
    }>('session.resume', { session_id });
    if (resumed.running) {
      // Still running: the turn so far is replayed, then it goes on live to the new connection.
      expect(resumed.run_id).toBe(run_id);
      await second.client.waitForEvent(
        (event) => event.type === 'message.delta' && event.payload.replayed === true,
      );
      const done = await second.client.waitForEvent((event) => event.type === 'run.completed');
      expect(done.payload).toMatchObject({ run_id, status: 'completed', final_response: reply });
    }
    const after = await second.client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      {
        session_id,
      },
    );
    expect(after.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'go'],
      ['assistant', reply],
    ]);
  });

  it('replays every delta of a long turn to a front end that resumes it, however many there were', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, 'notes.txt'), 'notes\n');
    // One character per chunk: more deltas than a turn's replay could hold as separate events.
    const thinking = 'thinking it over';
    const long = Array.from({ length: 24_000 }, (_, index) => String(index % 10)).join('');
    const server = await scriptedModel([
      {
        reasoning: thinking,
        text: long,
        chunkSize: 1,
        toolCalls: [
          {
            id: 'call_1',
            name: 'read_file',
            arguments: { path: path.join(home.path, 'notes.txt') },
          },
        ],
      },
      // Slow to start: the second front end joins while the turn waits for it.
      { text: 'done', delayMs: 4000 },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });
    const first = await bridge.connect();
    const { session_id } = await first.client.request<{ session_id: string }>('session.create', {});
    await first.client.request('prompt.submit', { session_id, text: 'go' });
    // The second model call (held back 4 s) means the first one streamed in full and the tool
    // ran. Polled: a waitForEvent over 24,000 events would rescan them on every message.
    while (server.modelRequests.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));

    const second = await bridge.connect();
    const resumed = await second.client.request<{ running: boolean }>('session.resume', {
      session_id,
    });
    expect(resumed.running).toBe(true);
    await second.client.waitForEvent((event) => event.type === 'run.completed', 30_000);
    const replayedText = (type: string) =>
      second.client
        .eventsOf(type, session_id)
        .filter((event) => event.payload.replayed === true)
        .map((event) => String(event.payload.text))
        .join('');
    expect(replayedText('reasoning.delta')).toBe(thinking);
    expect(replayedText('message.delta')).toBe(long);
    expect(second.client.eventsOf('tool.complete', session_id)).toHaveLength(1);
    const live = second.client
      .eventsOf('message.delta', session_id)
      .filter((event) => event.payload.replayed !== true);
    expect(live.map((event) => event.payload.text).join('')).toBe('done');
  });

  it('refuses an upgrade without the token, or with a wrong one', async () => {
    const home = await tempHome();
    const bridge = await startWsBridge({ home: home.path });
    await expect(bridge.connect('wrong-token-0123456789')).rejects.toThrow('HTTP 401');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = http.request(bridge.url.replace('ws://', 'http://'), {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      request.on('response', (response) => resolve(response.statusCode));
      request.on('upgrade', () => resolve(101));
      request.on('error', reject);
      request.end();
    });
    expect(status).toBe(401);
    // The right token opens the socket (the refusals above were about the token, not the server).
    const ok = await bridge.connect();
    expect(ok.client.eventsOf('gateway.ready')).toHaveLength(1);
  });

  it('reads the Authorization scheme in any case, as HTTP does, and still checks the token', async () => {
    const home = await tempHome();
    const bridge = await startWsBridge({ home: home.path });
    const upgrade = (authorization: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(bridge.url, { headers: { authorization } });
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_request, response) =>
          resolve(response.statusCode ?? 0),
        );
        socket.once('error', reject);
      });
    expect(await upgrade(`bearer ${TEST_TOKEN}`)).toBe(101);
    expect(await upgrade(`BEARER ${TEST_TOKEN}`)).toBe(101);
    expect(await upgrade('bearer wrong-token-0123456789')).toBe(401);
    expect(await upgrade(`Basic ${TEST_TOKEN}`)).toBe(401);
  });

  it('refuses to listen beyond loopback without an explicit token', async () => {
    const home = await tempHome();
    const child = spawn(process.execPath, [BRIDGE_BIN, '--port', '0', '--host', '0.0.0.0'], {
      env: bridgeEnv(home.path),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('--host 0.0.0.0 is not loopback: pass --token');
  });
});

describe('a blank prompt', () => {
  it('is refused with -32602 naming text, never sent to the model and never stored', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'fine' }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const session = await client.request<{ session_id: string; stored_session_id: string }>(
      'session.create',
      {},
    );
    for (const text of ['   ', '\n', ' \t\r\n ']) {
      const error = await client
        .request('prompt.submit', { session_id: session.session_id, text })
        .then(
          () => undefined,
          (failure: unknown) => failure,
        );
      expect(error).toBeInstanceOf(RpcErrorReply);
      expect((error as RpcErrorReply).code).toBe(RPC_ERROR_CODES.invalidParams);
      expect((error as RpcErrorReply).rpcMessage).toContain('text');
    }
    expect(server.modelRequests).toHaveLength(0);
    const resumed = await client.request<{ messages: unknown[]; running: boolean }>(
      'session.resume',
      { session_id: session.stored_session_id },
    );
    expect(resumed.running).toBe(false);
    expect(resumed.messages).toEqual([]);
    // Text around the blanks is a prompt like any other.
    await client.request('prompt.submit', { session_id: session.session_id, text: '  hi  ' });
    await client.waitForEvent((event) => event.type === 'run.completed');
    expect(server.modelRequests).toHaveLength(1);
  });
});

describe('SIGTERM with WebSocket front ends attached', () => {
  it('interrupts the running turn, sends its run.completed to every attached socket, then closes them with 1001', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { text: 'x'.repeat(4000), chunkSize: 4, chunkDelayMs: 20 },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });
    const first = await bridge.connect();
    const second = await bridge.connect();
    const { session_id, stored_session_id } = await first.client.request<{
      session_id: string;
      stored_session_id: string;
    }>('session.create', {});
    const { run_id } = await first.client.request<{ run_id: string }>('prompt.submit', {
      session_id,
      text: 'long answer please',
    });
    await second.client.request('session.resume', { session_id });
    await first.client.waitForEvent((event) => event.type === 'message.delta');
    await second.client.waitForEvent((event) => event.type === 'message.delta');

    const closes = [first, second].map(
      ({ socket, client }) =>
        new Promise<{ code: number; completed: boolean }>((resolve) =>
          socket.once('close', (code) =>
            resolve({
              code,
              completed: client
                .eventsOf('run.completed')
                .some((event) => event.payload.run_id === run_id),
            }),
          ),
        ),
    );
    const exited = new Promise<number | null>((resolve) => bridge.child.once('exit', resolve));
    bridge.child.kill('SIGTERM');
    // Each socket had the turn's final event before it was closed, with "going away".
    expect(await Promise.all(closes)).toEqual([
      { code: 1001, completed: true },
      { code: 1001, completed: true },
    ]);
    for (const { client } of [first, second]) {
      const done = client
        .eventsOf('run.completed')
        .find((event) => event.payload.run_id === run_id);
      expect(done?.payload.status).toBe('interrupted');
    }
    expect(await exited).toBe(0);
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    try {
      expect(store.getSession(stored_session_id)?.endReason).toBe('tui_shutdown');
    } finally {
      await store.close();
    }
  });
});
