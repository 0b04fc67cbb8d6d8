/**
 * What one `agent.runTurn` costs over a bare model call, one client, one request at a time: a
 * session of the `api_server` platform (its default toolsets), a one-word message, the scripted
 * model server (its own process) answering at once with text. Against, in the same run and
 * interleaved: the same server called directly with the `openai` SDK sending exactly the request
 * the agent's turn just sent (system prompt, tools, the whole conversation) — the agent's own
 * overhead; the SDK with one user message and no tools; and a bare `node:http` POST of that
 * message (what the gateway bench calls "direct"). The turns all go to one session, so its
 * transcript grows as a chat's does. Target (issue 17's proxy budget): the turn's p50 at most
 * ~1.5 ms over the direct call.
 *
 *   pnpm --filter @hermes/agent bench
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConfig } from '@hermes/config';
import { openSessionStore } from '@hermes/session-store';
import OpenAI from 'openai';
import { createAgent } from '../src/index.js';
import { SYSTEM_PROMPT_RACY_WINDOW_MS } from '../src/prompt/system-prompt.js';
import { spawnModelServer } from './spawn-model-server.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const WARMUP = 30;

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

const server = await spawnModelServer(['text']);
const { baseUrl } = server;

const home = mkdtempSync(path.join(tmpdir(), 'hermes-agent-turn-bench-'));
// A workspace with the usual instruction file, read (or not) on every turn.
writeFileSync(path.join(home, 'AGENTS.md'), '# Workspace\n\nRun the tests before you commit.\n');
// A file changed within the racy window of a read is read again on every turn; a workspace file
// is normally older than that, so the turns measured start once it has aged past it.
await new Promise((resolve) => setTimeout(resolve, SYSTEM_PROMPT_RACY_WINDOW_MS + 100));
const store = await openSessionStore({ path: path.join(home, 'state.db') });
const config = resolveConfig({ model: { base_url: baseUrl, default: 'test-model' } });
const agent = createAgent({
  config,
  store,
  home,
  cwd: home,
  platform: 'api_server',
  secret: () => undefined,
});
const session = await agent.createSession();

const sdk = new OpenAI({ baseURL: baseUrl, apiKey: 'k', maxRetries: 0 });
const keepAlive = new http.Agent({ keepAlive: true });
const body = JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
const target = new URL(`${baseUrl}/chat/completions`);
function post(): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent: keepAlive,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.on('data', () => {});
        response.on('end', () => resolve());
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

const samples = {
  turn: [] as number[],
  same: [] as number[],
  sdk: [] as number[],
  http: [] as number[],
};
const timed = async (list: number[] | undefined, work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  list?.push(performance.now() - started);
};
for (let index = 0; index < TURNS + WARMUP; index += 1) {
  const record = index >= WARMUP;
  await timed(record ? samples.http : undefined, post);
  await timed(record ? samples.sdk : undefined, async () => {
    const stream = await sdk.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const _chunk of stream) {
      // drain
    }
  });
  await timed(record ? samples.turn : undefined, async () => {
    const result = await agent.runTurn({ sessionId: session.id, message: 'hi' });
    if (result.status !== 'completed')
      throw new Error(`bench turn ${result.status}: ${result.error?.message}`);
  });
  const [sent] = (await server.lastBodies(1)) as OpenAI.Chat.ChatCompletionCreateParams[];
  await timed(record ? samples.same : undefined, async () => {
    const stream = await sdk.chat.completions.create({
      ...(sent as OpenAI.Chat.ChatCompletionCreateParams),
      stream: true,
    });
    for await (const _chunk of stream) {
      // drain
    }
  });
}

const p = (list: number[]) => {
  const sorted = [...list].sort((left, right) => left - right);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};
const turn = p(samples.turn);
const same = p(samples.same);
const direct = p(samples.sdk);
const bare = p(samples.http);
const f = (value: number) => value.toFixed(2);
console.log(
  [
    `agent.runTurn, one client, ${TURNS} turns on one session (transcript ${samples.turn.length * 2 + WARMUP * 2} messages at the end):`,
    `  turn                                p50 ${f(turn.p50)} ms  p99 ${f(turn.p99)} ms`,
    `  direct SDK call, the turn's request p50 ${f(same.p50)} ms  p99 ${f(same.p99)} ms  → turn overhead p50 ${f(turn.p50 - same.p50)} ms`,
    `  direct SDK call, one message        p50 ${f(direct.p50)} ms  p99 ${f(direct.p99)} ms  → ${f(turn.p50 - direct.p50)} ms`,
    `  bare HTTP POST, one message         p50 ${f(bare.p50)} ms  p99 ${f(bare.p99)} ms  → ${f(turn.p50 - bare.p50)} ms`,
    '  (target: the turn ≤ ~1.5 ms over the direct call)',
  ].join('\n'),
);
await store.close();
server.close();
rmSync(home, { recursive: true, force: true });
