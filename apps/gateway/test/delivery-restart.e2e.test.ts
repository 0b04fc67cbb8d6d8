import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSessionStore, readAllMessages } from '@hermes/session-store';
import { spawnProcess, startModelServer, tempHome, workspaceSourceNodeArgs } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { gatewayEnv, modelConfig, startGateway, writeConfig } from './gateway-process.js';

// The crashing surface lives with the agent's test fixtures (the TUI bridge's restart test uses it too).
const fixture = fileURLToPath(
  new URL('../../../packages/agent/test/fixtures/crash-before-ack.ts', import.meta.url),
);
const COMPLETION_PREFIX = '[ASYNC DELEGATION BATCH COMPLETE';

type Message = { role: string; content: string | null };

describe('a completion stored before a crash but never answered', () => {
  it('is answered by the next gateway as is: no second copy and no empty message of its own', async () => {
    const model = await startModelServer({
      script: [
        // The reviewer subagent, in the process that then crashes.
        { text: 'REVIEW: retries are bounded.' },
        // The gateway answering the completion that is already stored.
        { text: 'Answered after the restart.' },
      ],
    });
    onTestFinished(() => model.close());
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const crashed = await spawnProcess({
      command: process.execPath,
      args: [...workspaceSourceNodeArgs(), fixture, home, 'api_server'],
      env: gatewayEnv(home),
      readyLine: /SESSION (\S+)/,
      readyTimeoutMs: 30_000,
    });
    const sessionId = (await crashed.waitForLine(/SESSION (\S+)/))[1] as string;
    expect(await crashed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(crashed.stdout()).toContain('STORED');

    const gateway = await startGateway({ home });
    const deadline = performance.now() + 20_000;
    let transcript: Message[] = [];
    while (transcript.at(-1)?.content !== 'Answered after the restart.') {
      if (performance.now() > deadline)
        throw new Error(`not answered in time: ${JSON.stringify(transcript)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const page = await gateway.json<{ data: Message[] }>(
        `/api/sessions/${sessionId}/messages?limit=500`,
      );
      transcript = page.body.data;
    }

    // The model saw the stored completion as the last message: nothing was added after it.
    expect(model.modelRequests).toHaveLength(2);
    const sent =
      (model.modelRequests[1]?.body as { messages?: Message[] } | undefined)?.messages ?? [];
    expect(sent.at(-1)?.role).toBe('user');
    expect(sent.at(-1)?.content).toMatch(/^\[ASYNC DELEGATION BATCH COMPLETE/);
    expect(sent.at(-1)?.content).toContain('REVIEW: retries are bounded.');

    const injected = transcript.filter((message) =>
      (message.content ?? '').startsWith(COMPLETION_PREFIX),
    );
    expect(injected).toHaveLength(1);
    expect(transcript.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);

    await gateway.process.stop();
    const id = /COMPLETE — (\S+)\]/.exec(injected[0]?.content ?? '')?.[1] ?? '';
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
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
