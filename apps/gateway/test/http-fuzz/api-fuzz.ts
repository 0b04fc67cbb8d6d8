import path from 'node:path';
import { type ModelServer, startModelServer } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import type { StartedGateway } from '../gateway-process.js';
import { RequestTimeout, WireClient, type WireResponse } from './client.js';
import { describeExchange, judgeAnswer, StoreWatch, snapshotDifference } from './judge.js';
import { type FuzzCase, type FuzzSettings, generateCase } from './mutations.js';
import { type Fixtures, ROUTES, type RouteTemplate } from './routes.js';
import { Dice } from './weird-values.js';

/** A turn with the scripted model takes milliseconds; this is "it hangs". */
export const ANSWER_TIMEOUT_MS = 15_000;
const FAILURES_SHOWN = 5;
/** Requests whose turns the model fails (a provider error), so those paths are fuzzed too. */
const MODEL_FAILURE_RATE = 0.04;

/** The scripted model of a fuzz run: it answers, unless `fails` is set for the request. */
export async function startFuzzModel(
  requests: number,
): Promise<{ model: ModelServer; control: { fails: boolean } }> {
  // Any 5xx but the one the model was told to cause is the gateway's own.
  const control = { fails: false };
  const model = await startModelServer({
    script: Array.from(
      { length: requests * 2 },
      () => () =>
        control.fails
          ? { error: { status: 400, message: 'told to fail', code: 'fuzz_failure' } }
          : { text: 'fuzz reply' },
    ),
  });
  onTestFinished(() => model.close());
  return { model, control };
}

export interface ApiFuzzOptions {
  readonly gateway: StartedGateway;
  readonly model: ModelServer;
  readonly control: { fails: boolean };
  /** The home of the profile the requests address (its `state.db` is watched). */
  readonly home: string;
  readonly seed: number;
  readonly requests: number;
  readonly settings: FuzzSettings;
  /** Checks of the gateway beyond the answer (another profile's store, …); empty when fine. */
  readonly check?: (fuzzCase: FuzzCase, response: WireResponse) => string[];
}

export interface ApiFuzzResult {
  readonly failures: string[];
  readonly summary: string;
  /** Sends a request with the profile's prefix and key; throws on a status of 300 or more. */
  readonly call: (method: string, pathname: string, json?: unknown) => Promise<unknown>;
}

/**
 * The generative fuzz of the HTTP API (see `http-fuzz.e2e.test.ts`): valid requests of every route
 * of docs/gateway.md made for the profile `settings.profile` addresses, each mutated and judged.
 * Stops after a few failures; the caller reports them.
 */
export async function runApiFuzz(options: ApiFuzzOptions): Promise<ApiFuzzResult> {
  const { gateway, model, control, settings } = options;
  const base = settings.profile?.prefix ?? '';
  const client = new WireClient(gateway.url);
  onTestFinished(() => client.close());

  const call = async (method: string, pathname: string, json?: unknown) => {
    const response = await client.send(
      {
        method,
        path: `${base}${pathname}`,
        headers: {
          authorization: `Bearer ${settings.apiKey}`,
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

  const database = new Database(path.join(options.home, 'state.db'), { readonly: true });
  onTestFinished(() => {
    database.close();
  });
  const watch = new StoreWatch(database);
  const dice = new Dice(options.seed);
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const verdicts = { accept: 0, reject: 0, any: 0 };
  const started = performance.now();

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
    const route = fuzzCase.request.path.replace(/^\/p\/[^/]*/, '').split('?')[0];
    if (route === '/v1/runs' && typeof body.id === 'string') fixtures.runId = body.id;
  };

  for (let index = 0; index < options.requests && failures.length < FAILURES_SHOWN; index += 1) {
    const template = dice.pick(ROUTES);
    await prepare(template);
    const fuzzCase = generateCase({
      index,
      dice,
      template,
      fixtures,
      settings,
      unique: `${index}`,
    });
    verdicts[fuzzCase.verdict] += 1;
    control.fails = dice.chance(MODEL_FAILURE_RATE);
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
      modelFailed: control.fails,
    });
    // A run answers 202 once its turn started; with a healthy model it must not fail later.
    if (run !== undefined && !control.fails) {
      const finished = await call('GET', `/v1/runs/${run}`);
      if (finished.status === 'failed')
        problems.push(`run ${run} failed: ${JSON.stringify(finished.error)}`);
    }
    // No request of the fuzz names the fixture sessions for deletion: they must stay.
    for (const id of [fixtures.sessionId, fixtures.patchId])
      if (!sessionExists.get(id)) problems.push(`session ${id} vanished`);
    problems.push(...(options.check?.(fuzzCase, response) ?? []));
    if (gateway.process.child.exitCode !== null || gateway.process.child.signalCode !== null)
      problems.push(`the gateway exited (${gateway.process.child.exitCode})`);
    if (problems.length > 0) {
      failures.push(`${describeExchange(fuzzCase, response)}\n  ✗ ${problems.join('\n  ✗ ')}`);
      continue;
    }
    follow(fuzzCase, response);
    if (index % 50 === 49) {
      const health = await call('GET', '/health');
      if (JSON.stringify(health) !== JSON.stringify({ status: 'ok', platform: 'hermes' }))
        failures.push(`#${index}: /health answered ${JSON.stringify(health)}`);
    }
  }
  control.fails = false;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return {
    failures,
    call,
    summary: `${seconds} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; verdicts ${JSON.stringify(verdicts)}; model calls ${model.modelRequests.length}`,
  };
}
