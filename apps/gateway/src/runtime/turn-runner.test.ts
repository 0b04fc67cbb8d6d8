import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createProfileRuntime } from '@hermes/agent';
import { spawnProcess, startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ActiveTurns } from './active-turns.js';
import { runTurn } from './turn-runner.js';

const GATEWAY_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Another process's turn on the same conversation (a terminal chat): it begins (the turn lease,
 * its user message), then its ending transaction — its reply stored, its lease released, as
 * `endTurn` does — is held open (the database's write lock) until `<go file>` exists, then
 * commits.
 */
const OTHER_TURN_SCRIPT = `
import { existsSync, writeSync } from 'node:fs';
import { openSessionStore } from '@hermes/session-store';
const [databasePath, sessionId, goFile] = process.argv.slice(1);
const store = await openSessionStore({ path: databasePath });
const began = await store.beginTurn(sessionId, {
  messages: [{ role: 'user', content: 'typed in the terminal' }],
});
if (!began) {
  console.log('busy');
  process.exit(1);
}
const pause = new Int32Array(new SharedArrayBuffer(4));
await store.withWriteTransaction((database) => {
  database
    .prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'assistant', ?, ?)")
    .run(sessionId, 'answered in the terminal', Date.now() / 1000);
  database.prepare('DELETE FROM session_turn_leases WHERE holder = ?').run(began.holder);
  writeSync(1, 'ending\\n');
  while (!existsSync(goFile)) Atomics.wait(pause, 0, 0, 10);
});
console.log('ended');
await store.close();
`;

/** A profile runtime on a temp home whose model (a scripted server) answers `text` once. */
async function profileAnswering(text: string) {
  const model = await startModelServer({ script: [{ text }] });
  onTestFinished(() => model.close());
  const home = (await tempHome('hermes-turn-runner-')).path;
  await writeFile(
    path.join(home, 'config.yaml'),
    `model:\n  provider: openai\n  base_url: ${model.baseUrl}\n  default: test-model\n`,
  );
  const runtime = createProfileRuntime({
    name: 'default',
    home,
    secrets: { OPENAI_API_KEY: 'test-key' },
    platform: 'api_server',
  });
  onTestFinished(() => runtime.close());
  return { home, runtime };
}

describe('runTurn (gateway)', () => {
  it("collects as the turn's rows only those stored after it took the lease, not another process's reply that landed just before", async () => {
    const { home, runtime } = await profileAnswering('answered by the gateway');
    const store = await runtime.store();
    await store.createSession({ id: 'conversation', source: 'api_server' });

    const goFile = path.join(home, 'go');
    const other = await spawnProcess({
      command: process.execPath,
      args: [
        '--input-type=module',
        '-e',
        OTHER_TURN_SCRIPT,
        path.join(home, 'state.db'),
        'conversation',
        goFile,
      ],
      cwd: GATEWAY_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      readyLine: /^(ending|busy)$/m,
    });
    onTestFinished(() => other.stop().then(() => undefined));
    await other.waitForLine(/^ending$/m);

    // The gateway's turn starts while the other turn is ending: the runner registers it (and
    // goes on to the agent) before that ending commits; the agent's opening transaction waits
    // for the write lock and takes the lease once the other turn let it go.
    const turns = new ActiveTurns();
    const running = runTurn(turns, {
      runtime,
      sessionId: 'conversation',
      message: 'asked through the API',
      kind: 'api',
    });
    const deadline = Date.now() + 10_000;
    while (!turns.isRunning('default', 'conversation') && Date.now() < deadline) await sleep(1);
    expect(turns.isRunning('default', 'conversation')).toBe(true);
    await writeFile(goFile, '');
    await other.waitForLine(/^ended$/m);

    const outcome = await running;
    expect(outcome.result).toMatchObject({
      status: 'completed',
      finalResponse: 'answered by the gateway',
    });
    const rows = store.getMessages('conversation');
    expect(rows.map((row) => row.content)).toEqual([
      'typed in the terminal',
      'answered in the terminal',
      'asked through the API',
      'answered by the gateway',
    ]);
    expect(outcome.messages.map((message) => message.content)).toEqual(['answered by the gateway']);
    expect(outcome.messageId).toBe(rows[3]?.id);
  });
  it("logs 'turn finished' with the turn's fields after the turn's outcome is handed back, not before", async () => {
    const { runtime } = await profileAnswering('done');
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = {
      info: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }),
    } as unknown as NonNullable<Parameters<typeof runTurn>[1]['logger']>;

    const outcome = await runTurn(new ActiveTurns(), {
      runtime,
      sessionId: 'fresh',
      newSession: { source: 'api_server' },
      message: 'hi',
      kind: 'api',
      transcript: false,
      logger,
    });
    // The surface renders its answer in this turn of the event loop; the line comes after.
    expect(lines).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      {
        message: 'turn finished',
        fields: expect.objectContaining({
          profile: 'default',
          sessionId: outcome.result.sessionId,
          runId: outcome.result.runId,
          kind: 'api',
          status: 'completed',
          apiCalls: 1,
        }),
      },
    ]);
  });
});
