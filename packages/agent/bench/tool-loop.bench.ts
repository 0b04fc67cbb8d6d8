/**
 * One tool-loop iteration (model call → one no-op tool → results stored) against a direct
 * `openai` SDK streaming call with the same request body to an identical scripted server,
 * measured in the same run, alternating blocks so drift hits both. Target: agent p50 ≤ 1.3×
 * the direct call. Two agents take turns: one whose no-op tool is defined `readOnly` (its
 * result rides with the next reply: one transaction an iteration) and one whose tool is not
 * (the reply, then the result: two transactions).
 *
 * The scripted servers run in this process (the server's work shares the agent's event loop);
 * with `BENCH_MODEL_SERVER=process` each runs in its own process instead, as a provider does.
 *
 *   pnpm --filter @hermes/agent bench
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConfig } from '@hermes/config';
import { openSessionStore } from '@hermes/session-store';
import { startModelServer } from '@hermes/testkit';
import OpenAI from 'openai';
import * as v from 'valibot';
import { createAgent, defineTool } from '../src/index.js';
import { fetchForBaseUrl } from '../src/model/plain-http-fetch.js';
import { spawnModelServer } from './spawn-model-server.js';

const ITERATIONS_PER_TURN = 10;
const BLOCKS = 30;
const WARMUP_BLOCKS = 3;

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const noop = (readOnly: boolean) =>
  defineTool({
    name: 'noop',
    toolset: 'bench',
    readOnly,
    description: 'Does nothing',
    parameters: v.object({}),
    run: () => 'ok',
  });

const home = mkdtempSync(path.join(tmpdir(), 'hermes-agent-bench-'));
const inProcess = process.env.BENCH_MODEL_SERVER !== 'process';

interface BenchServer {
  readonly baseUrl: string;
  /** The bodies of the last `count` model requests, oldest first. */
  lastBodies(count: number): Promise<unknown[]>;
  /** In this process: queue one tool-call reply (the other kind scripts its own). */
  pushToolCall(): void;
  close(): Promise<void>;
}

async function inProcessServer(loop: boolean): Promise<BenchServer> {
  // Each turn: ITERATIONS_PER_TURN tool calls, then a final answer.
  let step = 0;
  const server = await startModelServer({});
  if (loop)
    for (
      let index = 0;
      index < (ITERATIONS_PER_TURN + 1) * (BLOCKS + WARMUP_BLOCKS) * 3 + 100;
      index += 1
    )
      server.push(() => {
        step += 1;
        return step % (ITERATIONS_PER_TURN + 1) === 0
          ? { text: 'done' }
          : { toolCalls: [{ name: 'noop', arguments: {} }] };
      });
  return {
    baseUrl: server.baseUrl,
    lastBodies: async (count) => server.modelRequests.slice(-count).map((request) => request.body),
    pushToolCall: () => server.push({ toolCalls: [{ name: 'noop', arguments: {} }] }),
    close: () => server.close(),
  };
}

async function processServer(loop: boolean): Promise<BenchServer> {
  const server = await spawnModelServer(loop ? ['loop', String(ITERATIONS_PER_TURN)] : ['tools']);
  return {
    baseUrl: server.baseUrl,
    lastBodies: (count) => server.lastBodies(count),
    pushToolCall: () => {},
    close: async () => server.close(),
  };
}

const server = await (inProcess ? inProcessServer(true) : processServer(true));
const store = await openSessionStore({ path: path.join(home, 'state.db') });
const config = resolveConfig({
  model: { base_url: server.baseUrl, default: 'test-model' },
  toolsets: ['bench'],
});
const agentWith = (readOnly: boolean) =>
  createAgent({
    config,
    store,
    home,
    cwd: home,
    tools: [noop(readOnly)],
    secret: () => undefined,
  });
const agents = { readOnly: agentWith(true), effect: agentWith(false) };

const samples = { readOnly: [] as number[], effect: [] as number[] };

async function agentBlock(kind: keyof typeof agents, record: boolean): Promise<void> {
  const agent = agents[kind];
  const agentSamples = samples[kind];
  const session = await agent.createSession();
  let last = 0;
  const result = await agent.runTurn({
    sessionId: session.id,
    message: 'loop',
    onEvent: (event) => {
      if (event.type === 'tool.completed' || event.type === 'run.started') {
        const now = performance.now();
        if (event.type === 'tool.completed' && record) agentSamples.push(now - last);
        last = now;
      }
    },
  });
  if (result.status !== 'completed')
    throw new Error(`bench turn ${result.status}: ${result.error?.message}`);
}

// The direct calls get their own server, and send exactly the bodies the agent sent in its
// last block (same conversation, same tools), so the ratio is the agent's own overhead:
// building the request, parsing the stream, running the tool and storing every message. Two
// direct clients: the SDK as another program calls it (Node's fetch), and the SDK over the
// `node:http` fetch on the agent's keep-alive pool (`fetchForBaseUrl`, what the agent's own SDK
// calls use). The agent's chat completions to a plain-http server skip the SDK altogether, so
// both ratios count that saving in the loop's favour; against the second, its fetch part is
// taken out.
const directServer = await (inProcess ? inProcessServer(false) : processServer(false));
const transportFetch = fetchForBaseUrl(directServer.baseUrl);
const directClients = {
  sdk: new OpenAI({ baseURL: directServer.baseUrl, apiKey: 'k', maxRetries: 0 }),
  transport: new OpenAI({
    baseURL: directServer.baseUrl,
    apiKey: 'k',
    maxRetries: 0,
    ...(transportFetch ? { fetch: transportFetch } : {}),
  }),
};
const directSamples = { sdk: [] as number[], transport: [] as number[] };
async function directBlock(record: boolean, block: number): Promise<void> {
  const bodies = (await server.lastBodies(ITERATIONS_PER_TURN + 1)).slice(0, -1);
  const kinds: (keyof typeof directClients)[] =
    block % 2 === 0 ? ['sdk', 'transport'] : ['transport', 'sdk'];
  for (const body of bodies) {
    for (const kind of kinds) {
      directServer.pushToolCall();
      const started = performance.now();
      const stream = await directClients[kind].chat.completions.create(
        body as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
      );
      for await (const _chunk of stream) {
        // drain
      }
      if (record) directSamples[kind].push(performance.now() - started);
    }
  }
}

for (let block = 0; block < BLOCKS + WARMUP_BLOCKS; block += 1) {
  const record = block >= WARMUP_BLOCKS;
  // Alternating which agent goes first; the direct calls replay the block just before them.
  const order: (keyof typeof agents)[] =
    block % 2 === 0 ? ['effect', 'readOnly'] : ['readOnly', 'effect'];
  for (const kind of order) await agentBlock(kind, record);
  await directBlock(record, block);
}

const direct = Object.fromEntries(
  Object.entries(directSamples).map(([kind, list]) => {
    list.sort((left, right) => left - right);
    return [kind, { p50: percentile(list, 0.5), p99: percentile(list, 0.99) }];
  }),
) as Record<keyof typeof directClients, { p50: number; p99: number }>;
console.log(
  `tool-loop iteration${inProcess ? '' : ' (model servers in their own processes)'}: direct SDK call p50 ${direct.sdk.p50.toFixed(2)} ms, p99 ${direct.sdk.p99.toFixed(2)} ms | the SDK over node:http fetch p50 ${direct.transport.p50.toFixed(2)} ms, p99 ${direct.transport.p99.toFixed(2)} ms`,
);
for (const [kind, label] of [
  ['readOnly', 'read-only tool'],
  ['effect', 'tool with effects'],
] as const) {
  const sorted = samples[kind].sort((left, right) => left - right);
  const p50 = percentile(sorted, 0.5);
  console.log(
    `  ${label}: agent p50 ${p50.toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms | ratio p50 ${(p50 / direct.sdk.p50).toFixed(2)}× the direct SDK call (target ≤ 1.3×), ${(p50 / direct.transport.p50).toFixed(2)}× the SDK over node:http fetch (${sorted.length} iterations)`,
  );
}
await store.close();
await server.close();
await directServer.close();
rmSync(home, { recursive: true, force: true });
