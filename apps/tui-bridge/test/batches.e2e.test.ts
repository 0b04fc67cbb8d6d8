import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import {
  scriptedModel,
  startStdioBridge,
  startWsBridge,
  writeModelConfig,
} from './bridge-client.js';

type Message = {
  id?: unknown;
  method?: string;
  result?: { run_id?: string };
  error?: { code: number };
  params?: { type: string; payload: Record<string, unknown> };
};

/** Where in `lines` (raw lines or frames, batches flattened) each message sits. */
function flatten(lines: readonly string[]): Message[] {
  return lines.flatMap((line) => {
    const value = JSON.parse(line) as Message | Message[];
    return Array.isArray(value) ? value : [value];
  });
}

describe('a batch', () => {
  it('streams the events of a prompt submitted inside it, after the batch reply', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { text: 'answered from a batch' },
      { text: 'the next one' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});

    const fromLine = client.lines.length;
    const fromEvent = client.events.length;
    client.write(
      JSON.stringify([
        {
          jsonrpc: '2.0',
          id: 'in-batch',
          method: 'prompt.submit',
          params: { session_id, text: 'hello' },
        },
      ]),
    );
    // The turn's events reach the front end without any other request to push them out.
    const done = await client.waitForEvent(
      (event) => event.type === 'run.completed',
      15_000,
      fromEvent,
    );
    expect(done.payload).toMatchObject({
      status: 'completed',
      final_response: 'answered from a batch',
    });
    const lines = client.lines.slice(fromLine);
    const batchReply = lines.findIndex((line) => line.startsWith('['));
    const started = lines.findIndex((line) => line.includes('"run.started"'));
    expect(batchReply).toBeGreaterThanOrEqual(0);
    expect(started).toBeGreaterThan(batchReply);
    const [reply] = JSON.parse(lines[batchReply] ?? '[]') as Message[];
    expect(reply?.result?.run_id).toBe(done.payload.run_id);
  });

  it('attaches a session.resume inside it: the running turn is replayed, then goes on live', async () => {
    const home = await tempHome();
    const reply = 'streamed slowly enough for a second front end to join';
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

    const second = await bridge.connect();
    second.client.write(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'r', method: 'session.resume', params: { session_id } },
      ]),
    );
    const done = await second.client.waitForEvent((event) => event.type === 'run.completed');
    expect(done.payload).toMatchObject({ run_id, status: 'completed', final_response: reply });
    const seen = flatten(second.client.lines);
    const replyAt = seen.findIndex((message) => message.id === 'r');
    const replayed = seen.findIndex(
      (message) => message.params?.type === 'run.started' && message.params.payload.replayed,
    );
    expect(replyAt).toBeGreaterThanOrEqual(0);
    expect(replayed).toBeGreaterThan(replyAt);
    // Replayed and live deltas together are the whole answer, once.
    const text = second.client
      .eventsOf('message.delta', session_id)
      .map((event) => String(event.payload.text))
      .join('');
    expect(text).toBe(reply);
  });
});

describe('two prompts for one session written together', () => {
  it('answers the one that runs before any of its events, and refuses the other with 4009', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'only one of them runs' }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});

    const fromLine = client.lines.length;
    const fromEvent = client.events.length;
    const request = (id: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'prompt.submit',
        params: { session_id, text: id },
      });
    // One write, as a front end does when the user presses Enter twice.
    client.write(`${request('first')}\n${request('second')}`);
    await client.waitForEvent((event) => event.type === 'run.completed', 15_000, fromEvent);

    const seen = flatten(client.lines.slice(fromLine));
    const accepted = seen.findIndex((message) => message.id === 'first');
    const refused = seen.find((message) => message.id === 'second');
    const started = seen.findIndex((message) => message.params?.type === 'run.started');
    expect(seen[accepted]?.result?.run_id).toMatch(/\S/);
    expect(refused?.error?.code).toBe(RPC_ERROR_CODES.sessionBusy);
    expect(started).toBeGreaterThan(accepted);
  });
});
