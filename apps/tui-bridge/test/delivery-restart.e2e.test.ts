import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSessionStore, readAllMessages } from '@hermes/session-store';
import { spawnProcess, tempHome, workspaceSourceNodeArgs } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  bridgeEnv,
  type RpcClient,
  scriptedModel,
  startStdioBridge,
  writeModelConfig,
} from './bridge-client.js';

// The crashing surface lives with the agent's test fixtures (the gateway's restart test uses it too).
const fixture = fileURLToPath(
  new URL('../../../packages/agent/test/fixtures/crash-before-ack.ts', import.meta.url),
);

type Stored = { role: string; content: string | null };

async function transcript(client: RpcClient, sessionId: string): Promise<Stored[]> {
  const resumed = await client.request<{ messages: Stored[] }>('session.resume', {
    session_id: sessionId,
  });
  return resumed.messages;
}

describe('a completion stored before a crash but never answered', () => {
  it('is answered by the next bridge as is: no second copy and no empty message of its own', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      // The reviewer subagent, in the process that then crashes.
      { text: 'REVIEW: retries are bounded.' },
      // The bridge answering the completion that is already stored.
      { text: 'Answered after the restart.' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const crashed = await spawnProcess({
      command: process.execPath,
      args: [...workspaceSourceNodeArgs(), fixture, home.path, 'tui'],
      env: bridgeEnv(home.path),
      readyLine: /SESSION (\S+)/,
      readyTimeoutMs: 30_000,
    });
    const sessionId = (await crashed.waitForLine(/SESSION (\S+)/))[1] as string;
    expect(await crashed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(crashed.stdout()).toContain('STORED');
    expect(server.modelRequests).toHaveLength(1);

    const { client } = await startStdioBridge({ home: home.path });
    const before = await transcript(client, sessionId);
    const injected = (messages: Stored[]) =>
      messages.filter((message) =>
        (message.content ?? '').startsWith('[ASYNC DELEGATION BATCH COMPLETE'),
      );
    expect(injected(before)).toHaveLength(1);
    await client.waitFor(() => (server.modelRequests.length === 2 ? true : undefined), 20_000);
    const answered = await client.waitForEvent(
      (event) => event.type === 'run.completed' && event.payload.status === 'completed',
      20_000,
    );
    expect(answered.payload.final_response).toBe('Answered after the restart.');

    // The model saw the stored completion as the last message: nothing was added after it.
    const sent =
      (server.modelRequests[1]?.body as { messages?: Stored[] } | undefined)?.messages ?? [];
    expect(sent.at(-1)?.role).toBe('user');
    expect(sent.at(-1)?.content).toMatch(/^\[ASYNC DELEGATION BATCH COMPLETE/);
    expect(sent.at(-1)?.content).toContain('REVIEW: retries are bounded.');

    const after = await transcript(client, sessionId);
    expect(injected(after)).toHaveLength(1);
    expect(after.filter((message) => message.role === 'user' && !message.content)).toEqual([]);
    expect(after.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(after.at(-1)?.content).toBe('Answered after the restart.');

    // Acknowledged once, and the stored transcript holds no empty user row.
    const id = /COMPLETE — (\S+)\]/.exec(injected(after)[0]?.content ?? '')?.[1] ?? '';
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    try {
      expect(store.getDelegation(id)?.deliveryState).toBe('delivered');
      expect(
        readAllMessages(store, sessionId).filter((row) => row.role === 'user' && !row.content),
      ).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
