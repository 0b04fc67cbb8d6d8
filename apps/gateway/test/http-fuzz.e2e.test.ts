import path from 'node:path';
import { startModelServer, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import {
  RequestTimeout,
  sendRawBytes,
  splitResponses,
  WireClient,
  type WireResponse,
} from './http-fuzz/client.js';
import {
  describeExchange,
  judgeAnswer,
  rawAnswerProblems,
  StoreWatch,
  snapshotDifference,
} from './http-fuzz/judge.js';
import { type FuzzCase, type FuzzSettings, generateCase } from './http-fuzz/mutations.js';
import { rawProbes } from './http-fuzz/raw-probes.js';
import { type Fixtures, ROUTES, type RouteTemplate } from './http-fuzz/routes.js';
import { Dice } from './http-fuzz/weird-values.js';

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
/** A turn with the scripted model takes milliseconds; this is "it hangs". */
const ANSWER_TIMEOUT_MS = 15_000;
const FAILURES_SHOWN = 5;
/** Requests whose turns the model fails (a provider error), so those paths are fuzzed too. */
const MODEL_FAILURE_RATE = 0.04;

describe('HTTP API under generated bad input', () => {
  it('answers every mutated request below 500, in the OpenAI error shape, changing nothing when it refuses', async () => {
    // The model answers, unless told to fail a request: any other 5xx is the gateway's own.
    let modelFails = false;
    const model = await startModelServer({
      script: Array.from(
        { length: REQUESTS * 2 },
        () => () =>
          modelFails
            ? { error: { status: 400, message: 'told to fail', code: 'fuzz_failure' } }
            : { text: 'fuzz reply' },
      ),
    });
    onTestFinished(() => model.close());
    const home = (await tempHome()).path;
    await writeConfig(
      home,
      modelConfig(
        model.baseUrl,
        `api_server:\n  key: ${API_KEY}\n  max_request_bytes: ${SETTINGS.maxRequestBytes}\nbrowser:\n  extension_control:\n    enabled: true\n`,
      ),
    );
    const gateway = await startGateway({ home });
    const client = new WireClient(gateway.url);
    onTestFinished(() => client.close());

    const call = async (method: string, pathname: string, json?: unknown) => {
      const response = await client.send(
        {
          method,
          path: pathname,
          headers: {
            authorization: `Bearer ${API_KEY}`,
            ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(json !== undefined ? { body: Buffer.from(JSON.stringify(json)) } : {}),
        },
        ANSWER_TIMEOUT_MS,
      );
      const text = response.body.toString('utf8');
      if (response.status >= 300)
        throw new Error(`${method} ${pathname}: ${response.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown> & { id: string };
    };
    /** Until no turn or run is going on (a 202 leaves its turn running). */
    const settle = async () => {
      const deadline = performance.now() + ANSWER_TIMEOUT_MS;
      for (;;) {
        const status = await call('GET', '/health/detailed');
        const queues = status.queue_depths as { runs_running: number };
        if (status.active_turns === 0 && queues.runs_running === 0) return;
        if (performance.now() > deadline) throw new Error('a turn is still running after 15 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const newSession = async (title?: string) =>
      ((await call('POST', '/api/sessions', title ? { title } : {})).session as { id: string }).id;

    const sessionId = await newSession('fuzz base');
    await call('POST', `/api/sessions/${sessionId}/chat`, { message: 'first' });
    const transcript = await call('GET', `/api/sessions/${sessionId}/messages`);
    const fixtures: Fixtures = {
      sessionId,
      messageId: (transcript.data as { id: number }[])[0]?.id ?? 1,
      patchId: await newSession('fuzz patch target'),
      responseId: (await call('POST', '/v1/responses', { input: 'first response' })).id,
      runId: (await call('POST', '/v1/runs', { input: 'first run', session_id: sessionId })).id,
      victim: '',
    };
    await settle();

    const database = new Database(path.join(home, 'state.db'), { readonly: true });
    onTestFinished(() => {
      database.close();
    });
    const watch = new StoreWatch(database);
    const dice = new Dice(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const verdicts = { accept: 0, reject: 0, any: 0 };
    const started = performance.now();
    console.log(
      `http fuzz: seed ${SEED} (HERMES_FUZZ_SEED=${SEED} replays it), ${REQUESTS} requests`,
    );

    const prepare = async (template: RouteTemplate) => {
      if (template.prepare === 'session') fixtures.victim = await newSession();
      if (template.prepare === 'response')
        fixtures.victim = (await call('POST', '/v1/responses', { input: '/version' })).id;
    };
    /** The run a 202 names (`hermes.run`), if it is one. */
    const runOf = (response: WireResponse): string | undefined => {
      try {
        const body = JSON.parse(response.body.toString('utf8')) as { object?: string; id?: string };
        return body.object === 'hermes.run' ? body.id : undefined;
      } catch {
        return undefined;
      }
    };
    const sessionExists = database.prepare('SELECT 1 FROM sessions WHERE id = ?');
    const newestResponse = database.prepare(
      'SELECT response_id FROM stored_responses ORDER BY used_seq DESC LIMIT 1',
    );
    /**
     * Keeps the fixtures live: the newest run, and the most recently used stored response (the
     * store keeps 100).
     */
    const follow = (fuzzCase: FuzzCase, response: WireResponse) => {
      fixtures.responseId =
        (newestResponse.pluck().get() as string | undefined) ?? fixtures.responseId;
      if (response.status >= 300 || fuzzCase.request.method !== 'POST') return;
      if (!String(response.headers['content-type']).startsWith('application/json')) return;
      const body = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
      const route = fuzzCase.request.path.replace(/^\/p\/default/, '').split('?')[0];
      if (route === '/v1/runs' && typeof body.id === 'string') fixtures.runId = body.id;
    };

    for (let index = 0; index < REQUESTS && failures.length < FAILURES_SHOWN; index += 1) {
      const template = dice.pick(ROUTES);
      await prepare(template);
      const fuzzCase = generateCase({
        index,
        dice,
        template,
        fixtures,
        settings: SETTINGS,
        unique: `${index}`,
      });
      verdicts[fuzzCase.verdict] += 1;
      modelFails = dice.chance(MODEL_FAILURE_RATE);
      const before = watch.current();
      let response: WireResponse;
      try {
        response = await client.send(fuzzCase.request, ANSWER_TIMEOUT_MS);
      } catch (error) {
        const what = error instanceof RequestTimeout ? 'hang' : 'connection failed';
        failures.push(describeExchange(fuzzCase, `${what}: ${String(error)}`));
        if (gateway.process.child.exitCode !== null) break;
        continue;
      }
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const ok = response.status >= 200 && response.status < 300;
      // A 202 (a run, a chat with `wait: false`) leaves its turn running.
      if (response.status === 202 || (ok && fuzzCase.template.background)) await settle();
      const run = response.status === 202 ? runOf(response) : undefined;
      const problems = judgeAnswer({
        fuzzCase,
        response,
        storeChange:
          response.status >= 400 && response.status < 500
            ? snapshotDifference(before, watch.current())
            : null,
        modelFailed: modelFails,
      });
      // A run answers 202 once its turn started; with a healthy model it must not fail later.
      if (run !== undefined && !modelFails) {
        const finished = await call('GET', `/v1/runs/${run}`);
        if (finished.status === 'failed')
          problems.push(`run ${run} failed: ${JSON.stringify(finished.error)}`);
      }
      // No request of the fuzz names the fixture sessions for deletion: they must stay.
      for (const id of [fixtures.sessionId, fixtures.patchId])
        if (!sessionExists.get(id)) problems.push(`session ${id} vanished`);
      if (gateway.process.child.exitCode !== null || gateway.process.child.signalCode !== null)
        problems.push(`the gateway exited (${gateway.process.child.exitCode})`);
      if (problems.length > 0) {
        failures.push(`${describeExchange(fuzzCase, response)}\n  ✗ ${problems.join('\n  ✗ ')}`);
        continue;
      }
      follow(fuzzCase, response);
      if (index % 50 === 49) {
        const health = await call('GET', '/health');
        expect(health).toEqual({ status: 'ok', platform: 'hermes' });
      }
    }

    modelFails = false;
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

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `http fuzz: ${seconds} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; verdicts ${JSON.stringify(verdicts)}; model calls ${model.modelRequests.length}`,
    );
    console.log(`http fuzz raw probes: ${rawStatuses.join('; ')}`);
    if (failures.length > 0) {
      throw new Error(
        `http fuzz, seed ${SEED} (rerun with HERMES_FUZZ_SEED=${SEED}):\n\n${failures.join('\n\n')}`,
      );
    }
    expect(await call('GET', '/health')).toEqual({ status: 'ok', platform: 'hermes' });
  }, 60_000);
});
