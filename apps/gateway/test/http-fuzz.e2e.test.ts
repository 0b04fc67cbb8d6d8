import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import { runApiFuzz, startFuzzModel } from './http-fuzz/api-fuzz.js';
import { sendRawBytes, splitResponses } from './http-fuzz/client.js';
import { rawAnswerProblems } from './http-fuzz/judge.js';
import type { FuzzSettings } from './http-fuzz/mutations.js';
import { rawProbes } from './http-fuzz/raw-probes.js';

/**
 * A seeded generative fuzz of the whole HTTP API: each request is a valid request of one route
 * (docs/gateway.md), mutated — fields of other types, dropped, added, duplicated, whole bodies
 * that are not JSON objects, odd ids, queries and headers, bodies at and over the limit. Every
 * answer must be below 500, errors in the OpenAI shape, a refusal must change nothing in the
 * store, what the contract refuses must be refused and what it takes must be taken, and the
 * gateway must stay up. `HERMES_FUZZ_SEED=<n>` replays a run; `HERMES_FUZZ_REQUESTS` sizes it.
 */
const SEED = Number(process.env.HERMES_FUZZ_SEED ?? 0x9e3779b9);
const REQUESTS = Number(process.env.HERMES_FUZZ_REQUESTS ?? 4000);
const API_KEY = 'fuzz-api-key-0123456789';
const SETTINGS: FuzzSettings = { apiKey: API_KEY, maxRequestBytes: 64 * 1024 };
const FAILURES_SHOWN = 5;

describe('HTTP API under generated bad input', () => {
  it('answers every mutated request below 500, in the OpenAI error shape, changing nothing when it refuses', async () => {
    const { model, control } = await startFuzzModel(REQUESTS);
    const home = (await tempHome()).path;
    await writeConfig(
      home,
      modelConfig(
        model.baseUrl,
        `api_server:\n  key: ${API_KEY}\n  max_request_bytes: ${SETTINGS.maxRequestBytes}\nbrowser:\n  extension_control:\n    enabled: true\n`,
      ),
    );
    const gateway = await startGateway({ home });
    console.log(
      `http fuzz: seed ${SEED} (HERMES_FUZZ_SEED=${SEED} replays it), ${REQUESTS} requests`,
    );
    const { failures, summary, call } = await runApiFuzz({
      gateway,
      model,
      control,
      home,
      seed: SEED,
      requests: REQUESTS,
      settings: SETTINGS,
    });

    const rawStatuses: string[] = [];
    for (const probe of rawProbes(API_KEY)) {
      if (failures.length >= FAILURES_SHOWN) break;
      const { text } = await sendRawBytes(gateway.url, Buffer.from(probe.bytes), 5_000);
      const responses = splitResponses(text);
      rawStatuses.push(
        `${probe.name}: ${responses.map((answer) => answer.status).join('+') || '-'}`,
      );
      const problems = rawAnswerProblems(probe, responses);
      if (gateway.process.child.exitCode !== null) problems.push('the gateway exited');
      if (problems.length > 0)
        failures.push(
          `raw probe "${probe.name}"\n  → ${text.slice(0, 400)}\n  ✗ ${problems.join('\n  ✗ ')}`,
        );
    }

    console.log(`http fuzz: ${summary}`);
    console.log(`http fuzz raw probes: ${rawStatuses.join('; ')}`);
    if (failures.length > 0) {
      throw new Error(
        `http fuzz, seed ${SEED} (rerun with HERMES_FUZZ_SEED=${SEED}):\n\n${failures.join('\n\n')}`,
      );
    }
    expect(await call('GET', '/health')).toEqual({ status: 'ok', platform: 'hermes' });
  }, 60_000);
});
