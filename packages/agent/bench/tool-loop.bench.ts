/**
 * One tool-loop iteration (model call → one no-op tool → results stored) against a direct
 * `openai` SDK streaming call with the same request body to an identical scripted server,
 * measured in the same run, alternating blocks so drift hits both. Target: agent p50 ≤ 1.3×
 * the direct call.
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
import { spawnModelServer } from './spawn-model-server.js';

const ITERATIONS_PER_TURN = 10;
const BLOCKS = 30;
const WARMUP_BLOCKS = 3;

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const noop = defineTool({
  name: 'noop',
  toolset: 'bench',
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
      index < ITERATIONS_PER_TURN * (BLOCKS + WARMUP_BLOCKS) * 2 + 100;
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
const agent = createAgent({
  config,
  store,
  home,
  cwd: home,
  tools: [noop],
  secret: () => undefined,
});

const agentSamples: number[] = [];
const directSamples: number[] = [];

async function agentBlock(record: boolean): Promise<void> {
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
// building the request, parsing the stream, running the tool and storing every message.
const directServer = await (inProcess ? inProcessServer(false) : processServer(false));
const directClient = new OpenAI({ baseURL: directServer.baseUrl, apiKey: 'k', maxRetries: 0 });
async function directBlock(record: boolean): Promise<void> {
  const bodies = (await server.lastBodies(ITERATIONS_PER_TURN + 1)).slice(0, -1);
  for (const body of bodies) {
    directServer.pushToolCall();
    const started = performance.now();
    const stream = await directClient.chat.completions.create(
      body as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const _chunk of stream) {
      // drain
    }
    if (record) directSamples.push(performance.now() - started);
  }
}

for (let block = 0; block < BLOCKS + WARMUP_BLOCKS; block += 1) {
  const record = block >= WARMUP_BLOCKS;
  await agentBlock(record);
  await directBlock(record);
}

agentSamples.sort((left, right) => left - right);
directSamples.sort((left, right) => left - right);
const agentP50 = percentile(agentSamples, 0.5);
const directP50 = percentile(directSamples, 0.5);
const figures = {
  iterations: agentSamples.length,
  agent: { p50: agentP50, p99: percentile(agentSamples, 0.99) },
  direct: { p50: directP50, p99: percentile(directSamples, 0.99) },
  ratioP50: agentP50 / directP50,
};
console.log(
  `tool-loop iteration${inProcess ? '' : ' (model servers in their own processes)'}: agent p50 ${figures.agent.p50.toFixed(2)} ms, p99 ${figures.agent.p99.toFixed(2)} ms | direct SDK call p50 ${figures.direct.p50.toFixed(2)} ms, p99 ${figures.direct.p99.toFixed(2)} ms | ratio p50 ${figures.ratioP50.toFixed(2)}× (target ≤ 1.3×, ${figures.iterations} iterations)`,
);
await store.close();
await server.close();
await directServer.close();
rmSync(home, { recursive: true, force: true });
