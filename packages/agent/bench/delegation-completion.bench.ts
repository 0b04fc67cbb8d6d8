/**
 * Completion latency of the async rail: from a child's final model answer (its last streamed
 * delta) to (1) the completion event on the queue — terminal checkpoint file, ledger update,
 * publish — and (2) the injected turn's message stored in the owning session — claim marker,
 * ledger claim, turn lease, system prompt, message, acknowledgement. 200 background delegations
 * one after another, the scripted server answering at once. Target: p50 < 5 ms to the queue.
 *
 *   pnpm --filter @hermes/agent bench
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConfig } from '@hermes/config';
import { openSessionStore } from '@hermes/session-store';
import { type RecordedRequest, startModelServer } from '@hermes/testkit';
import {
  createAgent,
  createCompletionDelivery,
  createDelegationRegistry,
  delegateTask,
  SUBAGENT_INTRO,
} from '../src/index.js';

const RUNS = 200;
const WARMUP = 20;

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const home = mkdtempSync(path.join(tmpdir(), 'hermes-delegation-bench-'));
const server = await startModelServer({});
const reply = (request: RecordedRequest) => {
  const system = (request.body as { messages: { content: string }[] }).messages[0]?.content ?? '';
  return { text: system.startsWith(SUBAGENT_INTRO) ? 'child answer' : 'noted' };
};
for (let index = 0; index < (RUNS + WARMUP) * 2 + 10; index += 1) server.push(reply);
const store = await openSessionStore({ path: path.join(home, 'state.db') });
const config = resolveConfig({ model: { base_url: server.baseUrl, default: 'test-model' } });

const lastDelta = new Map<string, number>();
const queued = new Map<string, number>();
const stored = new Map<string, number>();
const registry = createDelegationRegistry({
  store,
  home,
  onEvent: (event) => {
    if (event.type === 'subagent' && event.event.type === 'subagent.event') {
      if (event.event.event.type === 'message.delta')
        lastDelta.set(event.delegationId, performance.now());
    }
  },
});
registry.queue.subscribe((event) => queued.set(event.delegation_id, performance.now()));
const agent = createAgent({
  config,
  store,
  home,
  cwd: home,
  secret: () => undefined,
  delegations: registry,
});
const session = await agent.createSession();
let delivered: ((id: string) => void) | undefined;
const delivery = createCompletionDelivery({
  registry,
  owner: () => session.id,
  runTurn: (options) =>
    agent.runTurn({
      ...options,
      onMessageStored: async (messageId) => {
        await options.onMessageStored?.(messageId);
        const id = /— (deleg_[0-9a-f]+)\]/.exec(options.message ?? '')?.[1];
        if (id) stored.set(id, performance.now());
      },
    }),
  onDelivered: (entry) => delivered?.(entry.event.delegation_id),
  pollMs: 0,
});
await delivery.start();

const toQueue: number[] = [];
const toStored: number[] = [];
for (let run = 0; run < RUNS + WARMUP; run += 1) {
  const done = new Promise<string>((resolve) => {
    delivered = resolve;
  });
  const result = await delegateTask(
    { tasks: [{ goal: `Benchmark task ${run}` }] },
    { parent: agent, background: true, sessionId: session.id },
  );
  const id = String(result.delegation_id);
  await done;
  if (run < WARMUP) continue;
  const answered = lastDelta.get(id) as number;
  toQueue.push((queued.get(id) as number) - answered);
  toStored.push((stored.get(id) as number) - answered);
}
toQueue.sort((left, right) => left - right);
toStored.sort((left, right) => left - right);
console.log(
  `delegation completion (${toQueue.length} runs): child answer → queue p50 ${percentile(toQueue, 0.5).toFixed(2)} ms, p99 ${percentile(toQueue, 0.99).toFixed(2)} ms (target p50 < 5 ms) | → injected turn stored p50 ${percentile(toStored, 0.5).toFixed(2)} ms, p99 ${percentile(toStored, 0.99).toFixed(2)} ms`,
);
await delivery.stop();
await registry.close();
await store.close();
await server.close();
rmSync(home, { recursive: true, force: true });
