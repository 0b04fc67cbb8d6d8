import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MAX_STORED_RESPONSES } from '@hermes/session-store';
import { type ModelServer, startModelServer, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  modelConfig,
  readEvents,
  type StartedGateway,
  startGateway,
  writeConfig,
} from './gateway-process.js';

const API_KEY = 'gw-chat-api-key-abcdef0123';
const MODEL_KEY = 'sk-test-model-key-0123456789';

async function configuredHome(baseUrl: string, extra = '') {
  const home = (await tempHome()).path;
  const workspace = (await tempHome('hermes-workspace-')).path;
  await writeFile(path.join(workspace, 'notes.txt'), 'hello from the notes file\n');
  await writeConfig(home, modelConfig(baseUrl, `terminal:\n  cwd: ${workspace}\n${extra}`));
  await writeFile(path.join(home, '.env'), `API_SERVER_KEY=${API_KEY}\n`);
  return { home, workspace };
}

function messagesOf(request: { body: unknown }) {
  return (request.body as { messages: { role: string; content: unknown }[] }).messages;
}

/** A new session whose first chat (`one`) is with the model: its turn runs until `first` settles. */
async function startSlowTurn(gateway: StartedGateway, model: ModelServer) {
  const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
    method: 'POST',
    json: {},
    key: API_KEY,
  });
  const id = session.body.session.id;
  const first = gateway.json(`/api/sessions/${id}/chat`, {
    method: 'POST',
    json: { message: 'one' },
    key: API_KEY,
  });
  while (model.modelRequests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  return { id, first };
}

describe('chat without a model', () => {
  it('starts and answers a chat with the error naming the keys to set', async () => {
    const gateway = await startGateway();
    const completion = await gateway.json('/v1/chat/completions', {
      method: 'POST',
      json: { messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(completion.status).toBe(503);
    expect(completion.body).toMatchObject({
      error: {
        code: 'model_not_configured',
        message: expect.stringContaining('model.base_url is not set'),
      },
    });
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const chat = await gateway.json(`/api/sessions/${session.body.session.id}/chat`, {
      method: 'POST',
      json: { message: 'hi' },
    });
    expect(chat.status).toBe(503);
    expect(chat.body).toMatchObject({ error: { code: 'model_not_configured' } });
    // Slash commands still work: they never need a model.
    const help = await gateway.json<{ message: { content: string } }>(
      `/api/sessions/${session.body.session.id}/chat`,
      { method: 'POST', json: { message: '/help' } },
    );
    expect(help.body.message.content).toContain('/review');
  });
});

describe('chat completions', () => {
  it('runs a tool call end to end through the official openai client, in a session the client can continue', async () => {
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'The notes say hello.' },
        { text: 'You asked about the notes.' },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const { data, response } = await client.chat.completions
      .create({
        model: 'hermes-agent',
        messages: [{ role: 'user', content: 'What do my notes say?' }],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('The notes say hello.');
    expect(data.object).toBe('chat.completion');
    const sessionId = response.headers.get('x-hermes-session-id');
    expect(sessionId).toBeTruthy();
    const toolResult = messagesOf(model.modelRequests[1] as never).find(
      (message) => message.role === 'tool',
    );
    expect(String(toolResult?.content)).toContain('hello from the notes file');

    // Continuing with the header: the stored history is used, the client sends only the new turn.
    const followUp = await client.chat.completions.create(
      { model: 'hermes-agent', messages: [{ role: 'user', content: 'What did I ask?' }] },
      { headers: { 'X-Hermes-Session-Id': sessionId ?? '' } },
    );
    expect(followUp.choices[0]?.message.content).toBe('You asked about the notes.');
    const third = messagesOf(model.modelRequests[2] as never).map((message) => message.role);
    expect(third).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const stored = await gateway.json<{ data: { role: string }[] }>(
      `/api/sessions/${sessionId}/messages`,
      { key: API_KEY },
    );
    expect(stored.body.data.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('streams deltas through the openai client and seeds a new session with the client history', async () => {
    const model = await startModelServer({
      script: [{ text: 'Streaming works fine.', chunkSize: 3 }],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const stream = await client.chat.completions.create({
      model: 'hermes-agent',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
        { role: 'user', content: 'Does streaming work?' },
      ],
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Streaming works fine.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
    const sent = messagesOf(model.modelRequests[0] as never);
    expect(sent.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(String(sent[0]?.content)).toContain('Answer briefly.');
  });

  it('stores a new conversation answered in one piece with the client’s history, in order, and keeps it when the model fails', async () => {
    const model = await startModelServer({
      script: [
        { text: 'Third answer.' },
        { error: { status: 400, message: 'context too long for this model' } },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const asked = await gateway.json<{ choices: { message: { content: string } }[] }>(
      '/v1/chat/completions',
      {
        method: 'POST',
        key: API_KEY,
        json: {
          messages: [
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: 'First question' },
            { role: 'assistant', content: 'First answer' },
            { role: 'user', content: 'Third question' },
          ],
        },
      },
    );
    expect(asked.status).toBe(200);
    expect(asked.body.choices[0]?.message.content).toBe('Third answer.');
    const sent = messagesOf(model.modelRequests[0] as never);
    expect(sent.map((message) => message.content).slice(1)).toEqual([
      'First question',
      'First answer',
      'Third question',
    ]);
    expect(String(sent[0]?.content)).toContain('Answer briefly.');
    const sessionId = asked.headers.get('x-hermes-session-id');
    expect(sessionId).toMatch(/^api_\d+_[0-9a-f]{8}$/);
    const contents = async (id: string | null) =>
      (
        await gateway.json<{ data: { role: string; content: string }[] }>(
          `/api/sessions/${id}/messages`,
          { key: API_KEY },
        )
      ).body.data.map((message) => [message.role, message.content]);
    expect(await contents(sessionId)).toEqual([
      ['user', 'First question'],
      ['assistant', 'First answer'],
      ['user', 'Third question'],
      ['assistant', 'Third answer.'],
    ]);
    const session = await gateway.json<{ session: { source: string } }>(
      `/api/sessions/${sessionId}`,
      { key: API_KEY },
    );
    expect(session.body.session.source).toBe('api_server');

    // A failed turn still names its session, which holds the message the client sent.
    const failed = await gateway.json('/v1/chat/completions', {
      method: 'POST',
      key: API_KEY,
      json: { messages: [{ role: 'user', content: 'A question the model refuses' }] },
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const failedId = failed.headers.get('x-hermes-session-id');
    expect(failedId).toMatch(/^api_/);
    expect(failedId).not.toBe(sessionId);
    expect((await contents(failedId))[0]).toEqual(['user', 'A question the model refuses']);
  });

  it('accepts a well-formed tool-call history, stores it and sends it to the model as given', async () => {
    const model = await startModelServer({ script: [{ text: 'Noted.' }] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const call = { id: 'call_1', function: { name: 'todo', arguments: '{"todos":[]}' } };
    const answered = await gateway.json<{ choices: { message: { content: string } }[] }>(
      '/v1/chat/completions',
      {
        method: 'POST',
        key: API_KEY,
        json: {
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'tool', tool_call_id: 'call_1', content: 'no todos' },
            { role: 'user', content: 'now' },
          ],
        },
      },
    );
    expect(answered.status).toBe(200);
    expect(answered.body.choices[0]?.message.content).toBe('Noted.');
    const sent = messagesOf(model.modelRequests[0] as never) as Record<string, unknown>[];
    expect(sent.slice(1)).toMatchObject([
      { role: 'user', content: 'q' },
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'no todos' },
      { role: 'user', content: 'now' },
    ]);
    const stored = await gateway.json<{ data: Record<string, unknown>[] }>(
      `/api/sessions/${answered.headers.get('x-hermes-session-id')}/messages`,
      { key: API_KEY },
    );
    expect(stored.body.data).toMatchObject([
      { role: 'user', content: 'q' },
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'no todos' },
      { role: 'user', content: 'now' },
      { role: 'assistant', content: 'Noted.' },
    ]);
  });

  it('accepts text beside an image: the text reaches the model, the image only as a marker', async () => {
    const model = await startModelServer({ script: [{ text: 'A cat, I am told.' }] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const answered = await gateway.json('/v1/chat/completions', {
      method: 'POST',
      key: API_KEY,
      json: {
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, image] }],
      },
    });
    expect(answered.status).toBe(200);
    expect(messagesOf(model.modelRequests[0] as never).at(-1)).toEqual({
      role: 'user',
      content: 'What is it?\n[image_url]',
    });
  });

  it('reports an interrupted turn with finish_reason stop, not length, streamed or not', async () => {
    const slow = { text: 'partial answer that never finishes', chunkSize: 4, chunkDelayMs: 200 };
    const model = await startModelServer({ script: [slow, slow] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const interrupt = async (sessionId: string, requestsBefore: number) => {
      while (model.modelRequests.length === requestsBefore)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const stopped = await gateway.json<{ message: { content: string } }>(
        `/api/sessions/${sessionId}/chat`,
        { method: 'POST', json: { message: '/stop' }, key: API_KEY },
      );
      expect(stopped.status).toBe(200);
    };
    const ask = (sessionId: string, stream: boolean) =>
      gateway.request('/v1/chat/completions', {
        method: 'POST',
        key: API_KEY,
        headers: { 'X-Hermes-Session-Id': sessionId },
        json: { messages: [{ role: 'user', content: 'tell me a long story' }], stream },
      });

    const plain = ask('interrupted-plain', false);
    await interrupt('interrupted-plain', 0);
    const answered = (await (await plain).json()) as {
      choices: { finish_reason: string; message: { content: string } }[];
    };
    // Interrupted indeed: the model's text was cut short.
    expect(slow.text.startsWith(answered.choices[0]?.message.content ?? '')).toBe(true);
    expect(answered.choices[0]?.message.content).not.toBe(slow.text);
    expect(answered.choices[0]?.finish_reason).toBe('stop');

    const streamed = ask('interrupted-stream', true);
    await interrupt('interrupted-stream', 1);
    const chunks = (await readEvents(await streamed))
      .filter((event) => event.event === 'message' && event.data !== '[DONE]')
      .map((event) => JSON.parse(event.data));
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(slow.text.startsWith(text)).toBe(true);
    expect(text).not.toBe(slow.text);
    const reasons = chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean);
    expect(reasons).toEqual(['stop']);
  });

  it('answers slash commands itself: they never reach the model', async () => {
    const model = await startModelServer({ script: [] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const help = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: '/help' }],
    });
    expect(help.choices[0]?.message.content).toContain('/review');
    const unknown = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: '/frobnicate now' }],
    });
    expect(unknown.choices[0]?.message.content).toContain('Unknown command: /frobnicate');
    const review = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: '/review' }],
    });
    expect(review.choices[0]?.message.content).toBe(
      'Nothing to review yet — send a message first.',
    );
    expect(model.modelRequests).toHaveLength(0);
  });
});

describe('session chat', () => {
  it('streams the reference events with keep-alives, and run.completed carries the projected turn transcript', async () => {
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }], delayMs: 700 },
        { text: 'Done reading.', chunkSize: 4 },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home, args: ['--sse-keepalive', '0.2'] });
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
      key: API_KEY,
    });
    const response = await gateway.request(`/api/sessions/${session.body.session.id}/chat/stream`, {
      method: 'POST',
      json: { message: 'read my notes' },
      key: API_KEY,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(response);
    const names = events.map((event) => event.event);
    expect(names.filter((name) => name === ':').length).toBeGreaterThan(0);
    const meaningful = names.filter((name) => name !== ':');
    expect(meaningful[0]).toBe('run.started');
    expect(meaningful).toContain('tool.started');
    expect(meaningful).toContain('tool.completed');
    expect(meaningful).toContain('assistant.delta');
    expect(meaningful).toContain('message.started');
    expect(meaningful.slice(-2)).toEqual(['run.completed', 'done']);
    const deltas = events
      .filter((event) => event.event === 'assistant.delta')
      .map((event) => JSON.parse(event.data).delta)
      .join('');
    expect(deltas).toBe('Done reading.');
    const completed = JSON.parse(
      events.find((event) => event.event === 'run.completed')?.data ?? '{}',
    );
    expect(completed).toMatchObject({
      session_id: session.body.session.id,
      status: 'completed',
      final_response: 'Done reading.',
    });
    expect(completed.messages.map((message: { role: string }) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(completed.messages.some((message: { role: string }) => message.role === 'user')).toBe(
      false,
    );
    expect(completed.message_id).toBe(completed.messages[2].id);
    expect(completed.usage).toMatchObject({ api_calls: 2, tool_calls: 1 });
  });

  it('answers a busy session with 409 while its turn runs', async () => {
    const model = await startModelServer({ script: [{ text: 'slow', delayMs: 1500 }] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const { id, first } = await startSlowTurn(gateway, model);
    const second = await gateway.json(`/api/sessions/${id}/chat`, {
      method: 'POST',
      json: { message: 'two' },
      key: API_KEY,
    });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: { code: 'session_busy' } });
    const review = await gateway.json<{ message: { content: string } }>(
      `/api/sessions/${id}/chat`,
      {
        method: 'POST',
        json: { message: '/review please' },
        key: API_KEY,
      },
    );
    expect(review.body.message.content).toBe(
      'Agent is running — wait for the turn to finish, then /review.',
    );
    expect((await first).status).toBe(200);
  });

  it('refuses a wait:false message the turn would refuse (busy session, no model) with the same error, instead of accepting and dropping it', async () => {
    const model = await startModelServer({
      script: [{ text: 'slow', delayMs: 1500 }, { text: 'background reply' }],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const { id, first } = await startSlowTurn(gateway, model);
    const busy = await gateway.json(`/api/sessions/${id}/chat`, {
      method: 'POST',
      json: { message: 'dropped?', wait: false },
      key: API_KEY,
    });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: { code: 'session_busy' } });
    expect((await first).status).toBe(200);
    const contents = async () =>
      (
        await gateway.json<{ data: { role: string; content: string }[] }>(
          `/api/sessions/${id}/messages`,
          { key: API_KEY },
        )
      ).body.data.map((message) => [message.role, message.content]);
    expect(await contents()).toEqual([
      ['user', 'one'],
      ['assistant', 'slow'],
    ]);
    // Accepted: the turn has started (its message stored) when the 202 comes back.
    const accepted = await gateway.json(`/api/sessions/${id}/chat`, {
      method: 'POST',
      json: { message: 'in the background', wait: false },
      key: API_KEY,
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ object: 'hermes.session.chat.accepted', session_id: id });
    expect((await contents())[2]).toEqual(['user', 'in the background']);
    while ((await contents()).length < 4) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await contents())[3]).toEqual(['assistant', 'background reply']);

    const bare = await startGateway();
    const unconfigured = await bare.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const refused = await bare.json(`/api/sessions/${unconfigured.body.session.id}/chat`, {
      method: 'POST',
      json: { message: 'hi', wait: false },
    });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { code: 'model_not_configured' } });
  });
});

describe('runs refused before their turn starts', () => {
  it('answer the refusal (busy session, no model) instead of a 202 for a run that failed at once, and keep nothing under its Idempotency-Key', async () => {
    const model = await startModelServer({
      script: [{ text: 'slow', delayMs: 1500 }, { text: 'the run answers' }],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const { id, first } = await startSlowTurn(gateway, model);
    const startRun = () =>
      gateway.json<{ id: string; status: string; error?: { code: string } }>('/v1/runs', {
        method: 'POST',
        json: { input: 'run in the busy session', session_id: id },
        key: API_KEY,
        headers: { 'idempotency-key': 'retry-me' },
      });
    const busy = await startRun();
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: { code: 'session_busy', type: 'conflict_error' } });
    expect((await first).status).toBe(200);
    // The retry with the same key is a new run, not the refusal replayed.
    const retried = await startRun();
    expect(retried.status).toBe(202);
    const events = await readEvents(
      await gateway.request(`/v1/runs/${retried.body.id}/events`, { key: API_KEY }),
    );
    expect(events.filter((event) => event.event !== ':').at(-2)?.event).toBe('run.completed');
    expect((await startRun()).body.id).toBe(retried.body.id);

    const bare = await startGateway();
    const refused = await bare.json('/v1/runs', { method: 'POST', json: { input: 'hi' } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { code: 'model_not_configured' } });
    // The conversation made for it, which the refusal names nowhere, is not left behind empty.
    expect((await bare.json<{ data: unknown[] }>('/api/sessions')).body.data).toEqual([]);
  });
});

describe('responses', () => {
  it('stores responses, chains previous_response_id, and deletes them', async () => {
    const model = await startModelServer({
      script: [
        { text: 'Nice to meet you, Ada.' },
        { text: 'Your name is Ada.' },
        { text: 'Branch answer.' },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const first = await client.responses.create({
      model: 'hermes-agent',
      input: 'My name is Ada.',
    });
    expect(first.output_text).toBe('Nice to meet you, Ada.');
    expect(first.status).toBe('completed');
    const second = await client.responses.create({
      model: 'hermes-agent',
      input: 'What is my name?',
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe('Your name is Ada.');
    const sent = messagesOf(model.modelRequests[1] as never).map((message) => [
      message.role,
      message.content,
    ]);
    expect(sent.slice(1)).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Nice to meet you, Ada.'],
      ['user', 'What is my name?'],
    ]);
    // Chaining from the older response branches instead of seeing the newer turn.
    await client.responses.create({
      model: 'hermes-agent',
      input: 'Another path',
      previous_response_id: first.id,
    });
    const branch = messagesOf(model.modelRequests[2] as never).map((message) => message.content);
    expect(branch).not.toContain('What is my name?');
    expect(branch).toContain('Nice to meet you, Ada.');

    const fetched = await client.responses.retrieve(first.id);
    expect(fetched.id).toBe(first.id);
    const deleted = await gateway.json(`/v1/responses/${first.id}`, {
      method: 'DELETE',
      key: API_KEY,
    });
    expect(deleted.body).toEqual({ id: first.id, object: 'response', deleted: true });
    expect((await gateway.json(`/v1/responses/${first.id}`, { key: API_KEY })).status).toBe(404);
    const unknownChain = await gateway.json('/v1/responses', {
      method: 'POST',
      json: { input: 'x', previous_response_id: first.id },
      key: API_KEY,
    });
    expect(unknownChain.status).toBe(404);
    expect(unknownChain.body).toMatchObject({ error: { code: 'response_not_found' } });
  });

  it('keeps stored responses in the profile’s state.db: after a SIGKILL and a restart they chain, read and delete; store: false keeps nothing', async () => {
    const model = await startModelServer({
      script: [
        { text: 'Nice to meet you, Ada.' },
        { text: 'Not kept.' },
        { text: 'Your name is Ada.' },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const first = await client.responses.create({
      model: 'hermes-agent',
      input: 'My name is Ada.',
      store: true,
    });
    expect(first.output_text).toBe('Nice to meet you, Ada.');
    const unstored = await client.responses.create({
      model: 'hermes-agent',
      input: 'Forget this one.',
      store: false,
    });
    expect((await gateway.json(`/v1/responses/${unstored.id}`, { key: API_KEY })).status).toBe(404);

    gateway.process.kill('SIGKILL');
    expect(await gateway.process.exited).toMatchObject({ signal: 'SIGKILL' });
    const restarted = await startGateway({ home });
    const again = new OpenAI({ baseURL: `${restarted.url}/v1`, apiKey: API_KEY });
    const fetched = await again.responses.retrieve(first.id);
    expect(fetched).toMatchObject({ id: first.id, output_text: 'Nice to meet you, Ada.' });
    const second = await again.responses.create({
      model: 'hermes-agent',
      input: 'What is my name?',
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe('Your name is Ada.');
    expect(second.previous_response_id).toBe(first.id);
    const sent = messagesOf(model.modelRequests[2] as never).map((message) => message.content);
    expect(sent.slice(1)).toEqual([
      'My name is Ada.',
      'Nice to meet you, Ada.',
      'What is my name?',
    ]);
    const deleted = await restarted.json(`/v1/responses/${first.id}`, {
      method: 'DELETE',
      key: API_KEY,
    });
    expect(deleted.body).toEqual({ id: first.id, object: 'response', deleted: true });
    expect((await restarted.json(`/v1/responses/${first.id}`, { key: API_KEY })).status).toBe(404);
    expect(
      (await restarted.json(`/v1/responses/${first.id}`, { method: 'DELETE', key: API_KEY }))
        .status,
    ).toBe(404);
    expect((await again.responses.retrieve(second.id)).output_text).toBe('Your name is Ada.');
  });

  it('keeps the 100 most recently stored or chained-from responses', async () => {
    const model = await startModelServer({
      script: Array.from({ length: MAX_STORED_RESPONSES + 1 }, (_, index) => ({
        text: `answer ${index}`,
      })),
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const create = async (json: Record<string, unknown>) => {
      const created = await gateway.json<{ id: string }>('/v1/responses', {
        method: 'POST',
        json,
        key: API_KEY,
      });
      expect(created.status).toBe(200);
      return created.body.id;
    };
    const ids: string[] = [];
    for (let index = 0; index < MAX_STORED_RESPONSES; index += 1)
      ids.push(await create({ input: `question ${index}` }));
    const status = async (id: string | undefined) =>
      (await gateway.json(`/v1/responses/${id}`, { key: API_KEY })).status;
    expect(await status(ids[0])).toBe(200);
    // Chaining from the oldest makes it the most recently used: the next store prunes the
    // second oldest instead.
    const chained = await create({ input: 'and then?', previous_response_id: ids[0] });
    expect(await status(ids[0])).toBe(200);
    expect(await status(ids[1])).toBe(404);
    expect(await status(ids[2])).toBe(200);
    expect(await status(chained)).toBe(200);
  }, 120_000);

  it('answers a slash command as the whole response, streamed or not, without a model', async () => {
    const gateway = await startGateway();
    const plain = await gateway.json<{ status: string; output_text: string }>('/v1/responses', {
      method: 'POST',
      json: { input: '/help' },
    });
    expect(plain.status).toBe(200);
    expect(plain.body.status).toBe('completed');
    expect(plain.body.output_text).toContain('/review');
    const stream = await gateway.request('/v1/responses', {
      method: 'POST',
      json: { input: '/help', stream: true },
    });
    const events = await readEvents(stream);
    const data = (name: string) =>
      events.filter((event) => event.event === name).map((event) => JSON.parse(event.data));
    expect(data('response.output_text.delta').map((event) => event.delta)).toEqual([
      plain.body.output_text,
    ]);
    expect(data('response.completed')[0]?.response).toMatchObject({
      status: 'completed',
      output_text: plain.body.output_text,
    });
  });

  it('stores a slash command’s response like any other: it reads back and chains, streamed or not; store: false keeps nothing', async () => {
    const gateway = await startGateway();
    const version = await gateway.json<{ id: string; store: boolean; output_text: string }>(
      '/v1/responses',
      { method: 'POST', json: { input: '/version' } },
    );
    expect(version.status).toBe(200);
    expect(version.body.store).toBe(true);
    const sessionId = version.headers.get('x-hermes-session-id');
    const read = await gateway.json<{ id: string; output_text: string }>(
      `/v1/responses/${version.body.id}`,
    );
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: version.body.id, output_text: version.body.output_text });
    const chained = await gateway.json<{ previous_response_id: string }>('/v1/responses', {
      method: 'POST',
      json: { input: '/help', previous_response_id: version.body.id },
    });
    expect(chained.status).toBe(200);
    expect(chained.body.previous_response_id).toBe(version.body.id);
    // Nothing happened in between: the chain continues the same session.
    expect(chained.headers.get('x-hermes-session-id')).toBe(sessionId);

    const stream = await gateway.request('/v1/responses', {
      method: 'POST',
      json: { input: '/version', stream: true },
    });
    const completed = (await readEvents(stream))
      .filter((event) => event.event === 'response.completed')
      .map((event) => JSON.parse(event.data).response)[0];
    expect(completed.store).toBe(true);
    expect((await gateway.json(`/v1/responses/${completed.id}`)).status).toBe(200);

    const unstored = await gateway.json<{ id: string; store: boolean }>('/v1/responses', {
      method: 'POST',
      json: { input: '/version', store: false },
    });
    expect(unstored.body.store).toBe(false);
    expect((await gateway.json(`/v1/responses/${unstored.body.id}`)).status).toBe(404);
  });

  it('streams Responses API events the openai client understands', async () => {
    const model = await startModelServer({
      script: [{ text: 'Streamed response text.', chunkSize: 5 }],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const stream = await client.responses.create({
      model: 'hermes-agent',
      input: 'stream please',
      stream: true,
    });
    let text = '';
    const types: string[] = [];
    let final: { output_text?: string; id?: string } | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') final = event.response;
    }
    expect(text).toBe('Streamed response text.');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(final?.output_text).toBe('Streamed response text.');
    expect((await client.responses.retrieve(final?.id ?? '')).output_text).toBe(
      'Streamed response text.',
    );
  });
  it('streams a refusal as the Responses API error event (type error, with code, message and param) the openai client can tell apart', async () => {
    const model = await startModelServer({ script: [{ text: 'slow', delayMs: 1500 }] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const { id, first } = await startSlowTurn(gateway, model);
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    const stream = await client.responses.create(
      { model: 'hermes-agent', input: 'while it is busy', stream: true },
      { headers: { 'X-Hermes-Session-Id': id } },
    );
    const events: { type: string }[] = [];
    for await (const event of stream) events.push(event);
    const error = events.at(-1);
    expect(error).toEqual({
      type: 'error',
      sequence_number: events.length - 1,
      code: 'session_busy',
      message: expect.stringContaining('busy'),
      param: null,
    });
    expect(events.map((event) => event.type)).not.toContain('response.completed');
    expect((await first).status).toBe(200);
  });
});

describe('runs', () => {
  it('runs in the background with replayable events, a final result and a stop', async () => {
    const model = await startModelServer({
      script: [
        { text: 'Background answer.' },
        { text: 'z'.repeat(300), chunkSize: 2, chunkDelayMs: 40 },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const started = await gateway.json<{ id: string; status: string; session_id: string }>(
      '/v1/runs',
      {
        method: 'POST',
        json: { input: 'do it in the background' },
        key: API_KEY,
        headers: { 'idempotency-key': 'run-key-1' },
      },
    );
    expect(started.status).toBe(202);
    expect(started.body.status).toBe('running');
    const replayed = await gateway.json<{ id: string }>('/v1/runs', {
      method: 'POST',
      json: { input: 'do it in the background' },
      key: API_KEY,
      headers: { 'idempotency-key': 'run-key-1' },
    });
    expect(replayed.body.id).toBe(started.body.id);
    const events = await readEvents(
      await gateway.request(`/v1/runs/${started.body.id}/events`, { key: API_KEY }),
    );
    const named = events.filter((event) => event.event !== ':');
    const names = named.map((event) => event.event);
    expect(names[0]).toBe('run.started');
    expect(names.slice(-2)).toEqual(['run.completed', 'done']);
    // One run, one id: every event names the run the client was given.
    expect(
      new Set(named.map((event) => (JSON.parse(event.data) as { run_id: string }).run_id)),
    ).toEqual(new Set([started.body.id]));
    const finished = await gateway.json<{ status: string; output: string }>(
      `/v1/runs/${started.body.id}`,
      { key: API_KEY },
    );
    expect(finished.body).toMatchObject({ status: 'completed', output: 'Background answer.' });

    const long = await gateway.json<{ id: string }>('/v1/runs', {
      method: 'POST',
      json: { input: 'a long one', session_id: started.body.session_id },
      key: API_KEY,
    });
    while (model.modelRequests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stop = await gateway.json<{ stopping: boolean }>(`/v1/runs/${long.body.id}/stop`, {
      method: 'POST',
      key: API_KEY,
    });
    expect(stop.body.stopping).toBe(true);
    const stopEvents = await readEvents(
      await gateway.request(`/v1/runs/${long.body.id}/events`, { key: API_KEY }),
    );
    expect(stopEvents.map((event) => event.event)).toContain('run.cancelled');
    const stopped = await gateway.json<{ status: string; output: string }>(
      `/v1/runs/${long.body.id}`,
      { key: API_KEY },
    );
    expect(stopped.body.status).toBe('cancelled');
    expect(stopped.body.output.length).toBeLessThan(300);

    // The log names each run by the id its client has.
    gateway.process.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    const finishedRuns = (await readFile(path.join(home, 'logs', 'gateway.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; kind?: string; runId?: string })
      .filter((line) => line.msg === 'turn finished' && line.kind === 'run')
      .map((line) => line.runId);
    expect(finishedRuns).toEqual([started.body.id, long.body.id]);
  });

  it('starts one run for two simultaneous requests with the same Idempotency-Key, even while another process holds the write lock', async () => {
    const model = await startModelServer({ script: [{ text: 'Only once.' }, { text: 'Twice?' }] });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    // Another process (a terminal chat, say) holds the store's write lock: both requests reach
    // the write that makes their conversation and wait there, side by side.
    const holder = new Database(path.join(home, 'state.db'));
    onTestFinished(() => {
      holder.close();
    });
    holder.exec('BEGIN IMMEDIATE');
    const send = () =>
      gateway.json<{ id: string; session_id: string }>('/v1/runs', {
        method: 'POST',
        json: { input: 'do it once' },
        key: API_KEY,
        headers: { 'idempotency-key': 'same-key' },
      });
    const both = Promise.all([send(), send()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    holder.exec('COMMIT');
    const [first, second] = await both;
    expect([first.status, second.status].sort()).toEqual([200, 202]);
    expect(second.body.id).toBe(first.body.id);
    await readEvents(await gateway.request(`/v1/runs/${first.body.id}/events`, { key: API_KEY }));
    expect(model.modelRequests).toHaveLength(1);
    const listed = await gateway.json<{ data: { id: string }[] }>('/api/sessions', {
      key: API_KEY,
    });
    expect(listed.body.data.map((session) => session.id)).toEqual([first.body.session_id]);
  });

  it('gives every terminal run event and the run itself the chat stream’s runtime: how the turn ran, or which command answered', async () => {
    const model = await startModelServer({
      script: [
        { text: 'Streamed in the session.' },
        { text: 'Answered in a run.' },
        { error: { status: 400, message: 'the provider refuses this one' } },
      ],
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
      key: API_KEY,
    });
    const id = session.body.session.id;
    type Terminal = { runtime?: Record<string, unknown> };
    const terminalOf = (events: { event: string; data: string }[]) => {
      const found = events.find((event) => /^run\.(completed|failed|cancelled)$/.test(event.event));
      return { event: found?.event, data: JSON.parse(found?.data ?? '{}') as Terminal };
    };
    const streamed = async (message: string) =>
      terminalOf(
        await readEvents(
          await gateway.request(`/api/sessions/${id}/chat/stream`, {
            method: 'POST',
            json: { message },
            key: API_KEY,
          }),
        ),
      );
    const run = async (input: string) => {
      const started = await gateway.json<{ id: string }>('/v1/runs', {
        method: 'POST',
        json: { input, session_id: id },
        key: API_KEY,
      });
      const terminal = terminalOf(
        await readEvents(
          await gateway.request(`/v1/runs/${started.body.id}/events`, { key: API_KEY }),
        ),
      );
      const record = await gateway.json<{ runtime?: unknown }>(`/v1/runs/${started.body.id}`, {
        key: API_KEY,
      });
      return { id: started.body.id, terminal, record: record.body };
    };

    const chatRuntime = (await streamed('answer in the stream')).data.runtime ?? {};
    const completed = await run('answer in a run');
    expect(completed.terminal.event).toBe('run.completed');
    const runtime = completed.terminal.data.runtime;
    expect(Object.keys(runtime ?? {}).sort()).toEqual(Object.keys(chatRuntime).sort());
    expect(runtime).toMatchObject({
      run_id: completed.id,
      status: 'completed',
      exit_reason: 'completed',
      model: chatRuntime.model,
      provider: chatRuntime.provider,
    });
    expect(typeof runtime?.duration_ms).toBe('number');
    expect(completed.record.runtime).toEqual(runtime);

    const failed = await run('this one fails');
    expect(failed.terminal.event).toBe('run.failed');
    expect(failed.terminal.data.runtime).toMatchObject({ run_id: failed.id, status: 'failed' });
    expect(failed.record.runtime).toEqual(failed.terminal.data.runtime);

    // A command answers without a turn: its runtime names it, as the chat stream's does.
    const command = await run('/version');
    expect(command.terminal.data.runtime).toEqual((await streamed('/version')).data.runtime);
    expect(command.terminal.data.runtime).toEqual({ command: 'version' });
    expect(command.record.runtime).toEqual({ command: 'version' });
    expect(model.modelRequests).toHaveLength(3);
  });
});

describe('logs', () => {
  it('writes JSON lines to logs/gateway.log and never the API key or the model key', async () => {
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'ok' },
        { error: { status: 400, message: `bad key ${MODEL_KEY}` } },
      ],
      apiKey: MODEL_KEY,
    });
    const { home } = await configuredHome(model.baseUrl);
    const gateway = await startGateway({ home });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY });
    await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'read notes' }],
    });
    // A provider error that echoes the key, and requests that carry keys in odd places.
    await gateway.json('/v1/chat/completions', {
      method: 'POST',
      json: { messages: [{ role: 'user', content: 'fail' }] },
      key: API_KEY,
    });
    await gateway.json('/v1/models', { key: `${API_KEY}-wrong` });
    await gateway.json(`/v1/models?key=${API_KEY}`, { key: API_KEY });
    gateway.process.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    const files = (await readdir(path.join(home, 'logs'))).filter((file) =>
      file.startsWith('gateway.log'),
    );
    expect(files).toContain('gateway.log');
    let all = '';
    for (const file of files) all += await readFile(path.join(home, 'logs', file), 'utf8');
    const lines = all.trim().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(MODEL_KEY);
    expect(gateway.process.stdout() + gateway.process.stderr()).not.toContain(MODEL_KEY);
  });
});
