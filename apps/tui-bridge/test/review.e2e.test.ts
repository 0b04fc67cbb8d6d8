import { REVIEW_SESSION_BUSY_MESSAGE, REVIEW_STARTED_NOTE } from '@hermes/review-engine';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import {
  type RpcClient,
  RpcErrorReply,
  scriptedModel,
  startStdioBridge,
  startWsBridge,
  writeModelConfig,
} from './bridge-client.js';

async function chat(client: RpcClient, sessionId: string, text: string): Promise<void> {
  const from = client.events.length;
  const { run_id } = await client.request<{ run_id: string }>('prompt.submit', {
    session_id: sessionId,
    text,
  });
  await client.waitForEvent(
    (event) => event.type === 'run.completed' && event.payload.run_id === run_id,
    15_000,
    from,
  );
}

describe('/review from slash.exec', () => {
  it('dispatches a reviewer that subagent.list shows, and its completion re-enters only the session that asked', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { text: 'Added retries to upload().' },
      { text: 'Wrote the changelog.' },
      // The reviewer (a background child): slow enough to be listed while it runs.
      { text: 'REVIEW: looks good — retries are bounded.', delayMs: 1500 },
      // The primary agent answering the re-entered review in session A.
      { text: 'Thanks — the review found nothing to fix.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const ready = client.eventsOf('gateway.ready')[0];
    expect(ready?.payload.delegation).toBe(true);

    const a = await client.request<{ session_id: string; stored_session_id: string }>(
      'session.create',
      { title: 'A' },
    );
    const b = await client.request<{ session_id: string }>('session.create', { title: 'B' });
    await chat(client, a.session_id, 'Add retries to the uploader.');
    await chat(client, b.session_id, 'Write the changelog.');

    const dispatched = await client.request<{ output: string }>('slash.exec', {
      session_id: a.session_id,
      command: '/review focus on error handling',
    });
    expect(dispatched.output).toBe(REVIEW_STARTED_NOTE);

    const listed = await client.request<{
      subagents: { subagent_id: string; goal: string; status: string }[];
    }>('subagent.list', { session_id: a.session_id });
    expect(listed.subagents).toEqual([
      expect.objectContaining({ goal: 'Review: focus on error handling' }),
    ]);
    // Another session's spawn tree does not hold it.
    expect(
      (
        await client.request<{ subagents: unknown[] }>('subagent.list', {
          session_id: b.session_id,
        })
      ).subagents,
    ).toEqual([]);
    const subagentId = listed.subagents[0]?.subagent_id ?? '';
    const steered = await client.request<{ status: string }>('subagent.steer', {
      session_id: a.session_id,
      subagent_id: subagentId,
      message: 'also check the timeout path',
    });
    expect(steered.status).toBe('queued');
    const foreign = await client
      .request('subagent.steer', {
        session_id: b.session_id,
        subagent_id: subagentId,
        message: 'hijack',
      })
      .catch((error: unknown) => error);
    expect((foreign as RpcErrorReply).code).toBe(RPC_ERROR_CODES.subagentNotFound);

    const completed = await client.waitForEvent(
      (event) => event.type === 'delegation.completed',
      20_000,
    );
    expect(completed.session_id).toBe(a.session_id);
    expect(String(completed.payload.text)).toContain('REVIEW: looks good');
    const injected = await client.waitForEvent(
      (event) => event.type === 'run.started' && event.payload.origin === 'delegation',
      20_000,
    );
    expect(injected.session_id).toBe(a.session_id);
    const answered = await client.waitForEvent(
      (event) => event.type === 'run.completed' && event.payload.run_id === injected.payload.run_id,
    );
    expect(answered.payload.final_response).toBe('Thanks — the review found nothing to fix.');

    // Stored in A as a new turn; B untouched.
    const storedA = await client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      {
        session_id: a.session_id,
      },
    );
    const reentry = storedA.messages.find((message) =>
      message.content.startsWith('[ASYNC DELEGATION BATCH COMPLETE'),
    );
    expect(reentry?.role).toBe('user');
    expect(reentry?.content).toContain('REVIEW: looks good');
    expect(storedA.messages.at(-1)?.content).toBe('Thanks — the review found nothing to fix.');
    const storedB = await client.request<{ messages: { content: string }[] }>('session.resume', {
      session_id: b.session_id,
    });
    expect(storedB.messages.map((message) => message.content)).toEqual([
      'Write the changelog.',
      'Wrote the changelog.',
    ]);
    expect(
      client.events.filter(
        (event) => event.session_id === b.session_id && event.type === 'delegation.completed',
      ),
    ).toEqual([]);
    // The reviewer got the steer with its next tool result or not at all — but nothing else leaked.
    expect(server.remaining).toBe(0);
  });

  it('refuses /review while the session runs a turn, with the reference text', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'r'.repeat(200), chunkSize: 2, chunkDelayMs: 20 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const bridge = await startWsBridge({ home: home.path });
    const { client } = await bridge.connect();
    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    await client.request('prompt.submit', { session_id, text: 'write' });
    const refused = await client.request<{ output: string }>('slash.exec', {
      session_id,
      command: '/review',
    });
    expect(refused.output).toBe(REVIEW_SESSION_BUSY_MESSAGE);
    expect(refused.output).toBe('session busy — wait for the current turn to finish, then /review');
    await client.waitForEvent((event) => event.type === 'run.completed');
    expect(
      (await client.request<{ subagents: unknown[] }>('subagent.list', { session_id })).subagents,
    ).toEqual([]);
    void RpcErrorReply;
  });

  it('runs the review again after the bridge died mid-review and delivers its findings into the same conversation', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { text: 'Added retries to upload().' },
      // The reviewer: still thinking when the bridge is killed.
      { text: 'REVIEW: never finished', delayMs: 10_000 },
      // After the restart: the reviewer, run again by the new bridge …
      { text: 'REVIEW: the retries never back off.' },
      // … and the primary agent answering its re-entered findings.
      { text: 'Adding backoff to the retries.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const first = await startStdioBridge({ home: home.path });
    const created = await first.client.request<{ session_id: string; stored_session_id: string }>(
      'session.create',
      {},
    );
    await chat(first.client, created.session_id, 'Add retries to the uploader.');
    const note = await first.client.request<{ output: string }>('slash.exec', {
      session_id: created.session_id,
      command: '/review',
    });
    expect(note.output).toBe(REVIEW_STARTED_NOTE);
    // Killed while the reviewer waits for its model (the scripted reply takes 10 s).
    for (;;) {
      const listed = await first.client.request<{ subagents: unknown[] }>('subagent.list', {
        session_id: created.session_id,
      });
      if (listed.subagents.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startStdioBridge({ home: home.path });
    const resumed = await second.client.request<{ session_id: string }>('session.resume', {
      session_id: created.stored_session_id,
    });
    const injected = await second.client.waitForEvent(
      (event) => event.type === 'run.started' && event.payload.origin === 'delegation',
      20_000,
    );
    expect(injected.session_id).toBe(resumed.session_id);
    await second.client.waitForEvent(
      (event) => event.type === 'run.completed' && event.payload.run_id === injected.payload.run_id,
    );
    const stored = await second.client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      {
        session_id: resumed.session_id,
      },
    );
    const reentry = stored.messages.find((message) =>
      message.content.startsWith('[ASYNC DELEGATION BATCH COMPLETE'),
    );
    expect(reentry?.content).toContain('Resumed after a restart');
    expect(reentry?.content).toContain('REVIEW: the retries never back off.');
    expect(reentry?.content).not.toContain('outcome unknown');
    expect(stored.messages.at(-1)?.content).toBe('Adding backoff to the retries.');
  });
});
