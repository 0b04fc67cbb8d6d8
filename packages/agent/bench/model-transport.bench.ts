/**
 * What one model call costs over each transport for a plain-http base URL, one call at a time, to
 * the scripted model server in its own process (answering at once with a short text): the model
 * client as the agent builds it (`createModelClient`: straight over node:http), the same client
 * over the `openai` SDK (`createSdkModelClient`, its node:http fetch and shared pool), and a bare
 * `node:http` POST of the same request body that reads the answer without parsing it (the floor).
 * Streamed and non-streamed, the variants interleaved in a shuffled order every round, in one
 * process, so drift and noise land on all of them alike.
 *
 *   pnpm --filter @hermes/agent exec tsx --conditions=@hermes/source bench/model-transport.bench.ts
 *   (also the last of `pnpm --filter @hermes/agent bench`)
 *   BENCH_CALLS=3000 … (calls per variant, default 2000)
 */
import http from 'node:http';
import {
  createModelClient,
  createSdkModelClient,
  type ModelClient,
} from '../src/model/model-client.js';
import type { ModelRoute } from '../src/model/model-route.js';
import { sharedPlainHttpAgent } from '../src/model/plain-http-fetch.js';
import { spawnModelServer } from './spawn-model-server.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const WARMUP = 200;

const server = await spawnModelServer(['text']);
const route: ModelRoute = {
  provider: 'local',
  model: 'test-model',
  baseUrl: server.baseUrl,
  apiKey: 'k',
  apiMode: 'chat_completions',
};
const messages = [{ role: 'user' as const, content: 'hi' }];

function bare(stream: boolean): () => Promise<void> {
  const body = JSON.stringify({
    model: 'test-model',
    messages,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const target = new URL(`${server.baseUrl}/chat/completions`);
  return () =>
    new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: sharedPlainHttpAgent(),
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            authorization: 'Bearer k',
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          response.on('data', () => {});
          response.on('end', () => resolve());
          response.on('error', reject);
        },
      );
      request.once('error', reject);
      request.end(body);
    });
}

function call(client: ModelClient): () => Promise<void> {
  return async () => {
    const { turn } = await client.complete({ messages });
    if (turn.content !== 'ok') throw new Error(`unexpected reply ${JSON.stringify(turn.content)}`);
  };
}

const variants: { name: string; run: () => Promise<void>; samples: number[] }[] = [];
for (const stream of [true, false]) {
  const mode = stream ? 'stream' : 'json';
  variants.push(
    {
      name: `${mode} sdk`,
      run: call(createSdkModelClient({ routes: [route], stream })),
      samples: [],
    },
    {
      name: `${mode} direct`,
      run: call(createModelClient({ routes: [route], stream })),
      samples: [],
    },
    { name: `${mode} bare`, run: bare(stream), samples: [] },
  );
}

for (let round = 0; round < CALLS + WARMUP; round += 1) {
  const order = [...variants].sort(() => Math.random() - 0.5);
  for (const variant of order) {
    const started = performance.now();
    await variant.run();
    if (round >= WARMUP) variant.samples.push(performance.now() - started);
  }
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

const f = (value: number) => value.toFixed(3);
const lines = [`model call per transport, plain-http route, ${CALLS} interleaved calls each (ms):`];
for (const mode of ['stream', 'json']) {
  const [sdk, direct, floor] = ['sdk', 'direct', 'bare'].map((name) =>
    stats(variants.find((variant) => variant.name === `${mode} ${name}`)?.samples ?? []),
  ) as [ReturnType<typeof stats>, ReturnType<typeof stats>, ReturnType<typeof stats>];
  lines.push(
    `  ${mode.padEnd(6)} sdk    p50 ${f(sdk.p50)}  p90 ${f(sdk.p90)}  p99 ${f(sdk.p99)}`,
    `  ${mode.padEnd(6)} direct p50 ${f(direct.p50)}  p90 ${f(direct.p90)}  p99 ${f(direct.p99)}  → ×${(direct.p50 / sdk.p50).toFixed(2)} of sdk, ${f(sdk.p50 - direct.p50)} ms less a call`,
    `  ${mode.padEnd(6)} bare   p50 ${f(floor.p50)}  p90 ${f(floor.p90)}  p99 ${f(floor.p99)}  → direct is ${f(direct.p50 - floor.p50)} ms over the bare POST, sdk ${f(sdk.p50 - floor.p50)} ms`,
  );
}
console.log(lines.join('\n'));
server.close();
