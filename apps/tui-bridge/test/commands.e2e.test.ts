import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  scriptedModel,
  startStdioBridge,
  startWsBridge,
  writeModelConfig,
} from './bridge-client.js';

describe('slash.exec and command.dispatch', () => {
  it('answers help, status, title and history from the live session', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'Lyon is 2 hours away by train.' }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    const help = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/help',
    });
    expect(help.output).toContain('/review');
    const { run_id } = await client.request<{ run_id: string }>('prompt.submit', {
      session_id,
      text: 'How far is Lyon?',
    });
    await client.waitForEvent(
      (event) => event.type === 'run.completed' && event.payload.run_id === run_id,
    );
    const status = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: 'status',
    });
    expect(status.output).toContain('Messages: 2');
    expect(status.output).toContain('Idle.');
    const titled = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/title Lyon trip',
    });
    expect(titled.output).toBe('Title set: Lyon trip');
    const history = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/HISTORY',
    });
    expect(history.output).toBe('you: How far is Lyon?\nagent: Lyon is 2 hours away by train.');
    const unknown = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/frobnicate',
    });
    expect(unknown.output).toContain('Unknown command: /frobnicate');
  });

  it('answers a command named like an Object member (/constructor, /__proto__) as unknown', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    for (const name of ['constructor', '__proto__', 'hasownproperty', 'tostring']) {
      const answer = await client.request<{ output: string }>('slash.exec', {
        session_id,
        command: `/${name}`,
      });
      expect(answer.output).toBe(
        `Unknown command: /${name}. Send /help for the commands available here.`,
      );
    }
  });

  it('queues a prompt behind the running turn and steers the running turn', async () => {
    const home = await tempHome();
    const scratch = path.join(home.path, 'scratch.txt');
    const server = await scriptedModel([
      // Turn 1 calls a tool slowly, so the steer lands with that tool's result.
      {
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: scratch } }],
        delayMs: 600,
      },
      { text: 'First answer.' },
      { text: 'Queued answer.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    await client.request('prompt.submit', { session_id, text: 'first' });
    const steered = await client.request<{ type: string }>('command.dispatch', {
      session_id,
      name: 'steer',
      arg: 'be brief',
    });
    expect(steered.type).toBe('steered');
    const queued = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/queue second please',
    });
    expect(queued.output).toContain('Queued (position 1)');
    await client.waitFor(() => {
      const completed = client.eventsOf('run.completed', session_id);
      return completed.length >= 2 ? completed : undefined;
    });
    const origins = client.eventsOf('run.started', session_id).map((event) => event.payload.origin);
    expect(origins).toEqual(['prompt', 'queue']);
    const transcript = await client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      { session_id },
    );
    expect(transcript.messages.map((message) => message.content)).toContain('second please');
    expect(transcript.messages.at(-1)?.content).toBe('Queued answer.');
    // The steer reached the model with the tool result of the running turn.
    const secondCall = JSON.stringify(server.modelRequests[1]?.body ?? {});
    expect(secondCall).toContain('be brief');
  });
});

describe('approvals', () => {
  it('asks the front end before a dangerous command and runs it only when allowed', async () => {
    const home = await tempHome();
    const target = path.join(home.path, 'to-delete');
    await mkdir(path.join(target, 'inner'), { recursive: true });
    const server = await scriptedModel([
      {
        toolCalls: [
          { id: 'call_rm', name: 'terminal', arguments: { command: `rm -rf ${target}` } },
        ],
      },
      { text: 'Deleted.' },
      {
        toolCalls: [
          { id: 'call_rm2', name: 'terminal', arguments: { command: `rm -rf ${home.path}/other` } },
        ],
      },
      { text: 'Not deleted.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    await mkdir(path.join(home.path, 'other'));
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    await client.request('prompt.submit', { session_id, text: 'delete it' });
    const asked = await client.waitForEvent((event) => event.type === 'approval.request');
    expect(asked.payload).toMatchObject({ tool_name: 'terminal', command: `rm -rf ${target}` });
    expect(existsSync(target)).toBe(true);
    await client.request('approval.respond', {
      session_id,
      request_id: asked.payload.request_id,
      decision: 'once',
    });
    await client.waitForEvent((event) => event.type === 'run.completed');
    expect(existsSync(target)).toBe(false);

    const from = client.events.length;
    await client.request('prompt.submit', { session_id, text: 'delete the other one' });
    const second = await client.waitForEvent(
      (event) => event.type === 'approval.request',
      15_000,
      from,
    );
    await client.request('approval.respond', {
      session_id,
      request_id: second.payload.request_id,
      decision: 'deny',
    });
    await client.waitForEvent((event) => event.type === 'run.completed', 15_000, from);
    expect(existsSync(path.join(home.path, 'other'))).toBe(true);
  });
});

describe('a /steer that never reaches its turn', () => {
  it('is reported when the turn ends without another tool result, and never rides on a later turn', async () => {
    const home = await tempHome();
    const notes = path.join(home.path, 'notes.txt');
    await writeFile(notes, 'notes\n');
    const server = await scriptedModel([
      // Turn 1 streams its answer and calls no tool: nothing for a steer to ride on.
      { text: 'An answer with no tool call at all.', chunkSize: 2, chunkDelayMs: 60 },
      // Turn 2 calls a tool: a leftover steer would land in its result.
      { toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: notes } }] },
      { text: 'Read it.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    const first = await client.request<{ run_id: string }>('prompt.submit', {
      session_id,
      text: 'answer me',
    });
    await client.waitForEvent((event) => event.type === 'message.delta');
    const steered = await client.request<{ type: string }>('command.dispatch', {
      session_id,
      name: 'steer',
      arg: 'use metric units',
    });
    expect(steered.type).toBe('steered');
    const done = await client.waitForEvent(
      (event) => event.type === 'run.completed' && event.payload.run_id === first.run_id,
    );
    const missed = client
      .eventsOf('warning', session_id)
      .find((event) => event.payload.code === 'steer_missed');
    expect(missed?.payload.run_id).toBe(first.run_id);
    expect(String(missed?.payload.message)).toContain('use metric units');
    expect(client.events.indexOf(missed as never)).toBeLessThan(client.events.indexOf(done));

    const from = client.events.length;
    await client.request('prompt.submit', { session_id, text: 'read my notes' });
    await client.waitForEvent((event) => event.type === 'run.completed', 15_000, from);
    const sent = JSON.stringify(server.modelRequests.map((request) => request.body));
    expect(sent).not.toContain('use metric units');
  });
});

describe('approvals and a front end that resumes mid-turn', () => {
  it('replays the approval still pending, not the one already answered', async () => {
    const home = await tempHome();
    await mkdir(path.join(home.path, 'first'));
    await mkdir(path.join(home.path, 'second'));
    const server = await scriptedModel([
      {
        toolCalls: [
          { id: 'call_1', name: 'terminal', arguments: { command: `rm -rf ${home.path}/first` } },
        ],
      },
      {
        toolCalls: [
          { id: 'call_2', name: 'terminal', arguments: { command: `rm -rf ${home.path}/second` } },
        ],
      },
      { text: 'One deleted, one kept.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });
    const desk = await bridge.connect();
    const { session_id } = await desk.client.request<{ session_id: string }>('session.create', {});
    await desk.client.request('prompt.submit', { session_id, text: 'clean up' });
    const answered = await desk.client.waitForEvent((event) => event.type === 'approval.request');
    await desk.client.request('approval.respond', {
      session_id,
      request_id: answered.payload.request_id,
      decision: 'once',
    });
    const pending = await desk.client.waitForEvent(
      (event) =>
        event.type === 'approval.request' &&
        event.payload.request_id !== answered.payload.request_id,
    );

    const laptop = await bridge.connect();
    await laptop.client.request('session.resume', { session_id });
    const replayed = await laptop.client.waitForEvent(
      (event) => event.type === 'approval.request' && event.payload.replayed === true,
    );
    expect(replayed.payload.request_id).toBe(pending.payload.request_id);
    await laptop.client.request('approval.respond', {
      session_id,
      request_id: replayed.payload.request_id,
      decision: 'deny',
    });
    await laptop.client.waitForEvent((event) => event.type === 'run.completed');
    // The laptop was never asked about the first command: it had been answered already.
    expect(
      laptop.client.eventsOf('approval.request').map((event) => event.payload.request_id),
    ).toEqual([pending.payload.request_id]);
    expect(existsSync(path.join(home.path, 'first'))).toBe(false);
    expect(existsSync(path.join(home.path, 'second'))).toBe(true);
  });
});

describe('the front end going away over stdio', () => {
  it('lets the running turn finish and stores it before the bridge exits', async () => {
    const home = await tempHome();
    const reply = 'a reply that outlives its front end';
    const server = await scriptedModel([{ text: reply, chunkSize: 3, chunkDelayMs: 60 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startStdioBridge({ home: home.path });
    const { stored_session_id, session_id } = await bridge.client.request<{
      session_id: string;
      stored_session_id: string;
    }>('session.create', {});
    await bridge.client.request('prompt.submit', { session_id, text: 'go' });
    await bridge.client.waitForEvent((event) => event.type === 'message.delta');
    bridge.endInput();
    expect(await bridge.exited).toBe(0);
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    const rows = store.getMessages(stored_session_id);
    expect(rows.map((row) => [row.role, row.content])).toEqual([
      ['user', 'go'],
      ['assistant', reply],
    ]);
    // The bridge ended the session as machinery (recoverable by a later resume), not as a person.
    expect(store.getSession(stored_session_id)?.endReason).toBe('tui_shutdown');
    await store.close();

    // A new bridge resumes it: the whole turn is there and the conversation goes on.
    const next = await startStdioBridge({ home: home.path });
    const resumed = await next.client.request<{ messages: { content: string }[] }>(
      'session.resume',
      { session_id: stored_session_id },
    );
    expect(resumed.messages.map((message) => message.content)).toEqual(['go', reply]);
  });
});
