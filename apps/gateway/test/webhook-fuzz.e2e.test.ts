import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { queryGatewayStatus } from '@hermes/control-socket';
import { startModelServer, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { signV1, signV2 } from '../src/platforms/webhook/signature.js';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import {
  RequestTimeout,
  sendRawBytes,
  splitResponses,
  WireClient,
  type WireResponse,
} from './http-fuzz/client.js';
import { StoreWatch, snapshotDifference } from './http-fuzz/judge.js';
import {
  expectedAnswers,
  generateWebhookCase,
  type ReplaySource,
  remember,
  replayCase,
  type WebhookCase,
  type WebhookMemory,
  webhookConfigYaml,
  webhookSubscriptionsJson,
  workWebhookConfigYaml,
} from './http-fuzz/webhook-cases.js';
import { describeWebhookExchange, judgeWebhookAnswer } from './http-fuzz/webhook-judge.js';
import { Dice } from './http-fuzz/weird-values.js';

/**
 * A seeded generative fuzz of the webhook platform's listener (docs/operations.md, "Webhook"), on
 * a gateway that multiplexes profiles: valid deliveries to every kind of route, mutated — broken,
 * stale, duplicated and oddly encoded signatures, bodies of every shape, sizes at and over the
 * limit, content types, unknown and undecodable route names, profile prefixes, methods, events,
 * delivery ids, replays — each judged against the documented order of checks. No answer may be a
 * 5xx; a delivery that is refused, ignored or a duplicate dispatches and stores nothing; a taken
 * one runs exactly one turn (or one delivery) with its own payload. Then raw requests no client
 * sends, and a burst of deliveries without ids. `HERMES_FUZZ_SEED` replays another run,
 * `HERMES_WEBHOOK_FUZZ_REQUESTS` sizes it.
 */
const SEED = Number(process.env.HERMES_FUZZ_SEED ?? 0x9e3779b9);
const REQUESTS = Number(process.env.HERMES_WEBHOOK_FUZZ_REQUESTS ?? 800);
const ANSWER_TIMEOUT_MS = 15_000;
const FAILURES_SHOWN = 5;
/** Every so often a delivery taken earlier is sent again. */
const REPLAY_RATE = 0.06;
const BURST = 24;

describe('webhook listener under generated bad input', () => {
  it('answers every mutated delivery as docs/operations.md orders its checks, never 5xx, taking only valid deliveries, once', async () => {
    const model = await startModelServer({
      script: Array.from({ length: REQUESTS + BURST * 2 }, () => ({ text: 'fuzz reply' })),
    });
    onTestFinished(() => model.close());
    const root = (await tempHome()).path;
    await writeConfig(
      root,
      modelConfig(model.baseUrl, `gateway:\n  multiplex_profiles: true\n${webhookConfigYaml()}`),
    );
    await writeFile(path.join(root, 'webhook_subscriptions.json'), webhookSubscriptionsJson());
    // A served profile with routes of its own (mirrored under /p/work on the one listener), and a
    // parked one.
    const work = path.join(root, 'profiles', 'work');
    for (const [name, file, text] of [
      ['work', 'config.yaml', modelConfig(model.baseUrl, workWebhookConfigYaml())],
      ['parked', 'gateway.parked', ''],
    ] as const) {
      await mkdir(path.join(root, 'profiles', name), { recursive: true, mode: 0o700 });
      await writeFile(path.join(root, 'profiles', name, file), text, { mode: 0o600 });
    }
    const gateway = await startGateway({ home: root, env: { HERMES_LOG_LEVEL: 'info' } });
    onTestFinished(async () => {
      await gateway.process.stop();
    });
    let url: string | undefined;
    for (let attempt = 0; attempt < 200 && !url; attempt += 1) {
      url = ((await queryGatewayStatus(root)) as { webhook_url?: string } | null)?.webhook_url;
      if (!url) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (!url) throw new Error('the webhook listener did not start');
    const client = new WireClient(url);
    onTestFinished(() => client.close());

    const database = new Database(path.join(root, 'state.db'), { readonly: true });
    onTestFinished(() => {
      database.close();
    });
    const watch = new StoreWatch(database);
    // Work's store, once a turn of work's has made it (null until then: nothing may make it).
    let workWatch: StoreWatch | undefined;
    const workStore = () => {
      if (!workWatch) {
        if (!existsSync(path.join(work, 'state.db'))) return null;
        const workDatabase = new Database(path.join(work, 'state.db'), { readonly: true });
        onTestFinished(() => {
          workDatabase.close();
        });
        workWatch = new StoreWatch(workDatabase);
      }
      return workWatch.current();
    };
    // Both profiles' inbound journals.
    const journals = [path.join(root, 'state', 'inbound'), path.join(work, 'state', 'inbound')];
    const journalFiles = () =>
      journals
        .flatMap((journal) => {
          try {
            return readdirSync(journal)
              .filter((name) => name.endsWith('.json'))
              .map((name) => `${path.basename(path.dirname(path.dirname(journal)))}/${name}`);
          } catch {
            return [];
          }
        })
        .sort()
        .join(',');
    /** Replies the routes delivered to their `log` target so far. */
    let replies = 0;
    let scanned = 0;
    const countReplies = () => {
      // Whole lines only: a line still being written is counted once it is complete.
      const text = gateway.process.stderr();
      const end = text.lastIndexOf('\n') + 1;
      replies += text.slice(scanned, end).split('"msg":"webhook reply"').length - 1;
      scanned = Math.max(scanned, end);
      return replies;
    };
    const expected = { turns: 0, replies: 0 };
    /** Until every taken delivery has run its turn and delivered its reply. */
    const settle = async () => {
      const deadline = performance.now() + ANSWER_TIMEOUT_MS;
      for (;;) {
        const turns = model.modelRequests.length;
        if (
          turns === expected.turns &&
          countReplies() === expected.replies &&
          journalFiles() === ''
        )
          return;
        const counts = `${turns}/${expected.turns} turns, ${replies}/${expected.replies} replies, journal ${journalFiles() || 'empty'}`;
        if (turns > expected.turns || replies > expected.replies)
          throw new Error(`more turns or replies than deliveries taken: ${counts}`);
        if (performance.now() > deadline) throw new Error(`still settling after 15 s: ${counts}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };

    const dice = new Dice(SEED);
    const memory: WebhookMemory = {
      deliveries: new Set(),
      signatures: new Set(),
      limitedHits: 0,
      limitedSince: undefined,
    };
    const taken: ReplaySource[] = [];
    /** A turn that never settled: what the gateway does next can no longer be judged. */
    let lost = false;
    const failures: string[] = [];
    const statuses = new Map<string, number>();
    const started = performance.now();
    console.log(
      `webhook fuzz: seed ${SEED} (HERMES_FUZZ_SEED=${SEED} replays it), ${REQUESTS} requests`,
    );

    for (let index = 0; index < REQUESTS && failures.length < FAILURES_SHOWN; index += 1) {
      const unique = `${index}`;
      const source = taken.length > 0 && dice.chance(REPLAY_RATE) ? dice.pick(taken) : undefined;
      const fuzzCase: WebhookCase = source
        ? replayCase({ index, dice, unique, source })
        : generateWebhookCase({ index, dice, unique, nowS: Math.floor(Date.now() / 1000) });
      const allowed = expectedAnswers(fuzzCase.facts, memory);
      const before = {
        store: watch.current(),
        workStore: workStore(),
        journal: journalFiles(),
        turns: model.modelRequests.length,
      };
      let response: WireResponse;
      try {
        response = await client.send(fuzzCase.request, ANSWER_TIMEOUT_MS);
      } catch (error) {
        const what = error instanceof RequestTimeout ? 'hang' : 'connection failed';
        failures.push(describeWebhookExchange(fuzzCase, `${what}: ${String(error)}`));
        if (gateway.process.child.exitCode !== null) break;
        continue;
      }
      const { problems, answer } = judgeWebhookAnswer(fuzzCase, response, allowed);
      const label = `${response.status}${answer.outcome && answer.outcome !== 'ok' ? ` ${answer.outcome}` : ''}`;
      statuses.set(label, (statuses.get(label) ?? 0) + 1);
      const turn = answer.outcome === 'accepted';
      const delivered = answer.outcome === 'delivered';
      if (!turn) {
        // Refused, ignored, a duplicate or delivered as it is: no turn, nothing stored.
        const change = snapshotDifference(before.store, watch.current());
        if (change) problems.push(`no turn, yet the store changed: ${change}`);
        const workAfter = workStore();
        const workChange =
          before.workStore === null
            ? workAfter === null
              ? null
              : "work's store was created"
            : workAfter === null
              ? null
              : snapshotDifference(before.workStore, workAfter);
        if (workChange) problems.push(`no turn, yet work's store changed: ${workChange}`);
        if (journalFiles() !== before.journal)
          problems.push(`no turn, yet the inbound journal changed: ${journalFiles()}`);
        if (model.modelRequests.length !== before.turns)
          problems.push('no turn, yet the model was called');
      }
      // Whatever else is wrong, what was taken runs: later requests are judged after it. A
      // delivery only writes its reply to the log, counted at the next settling.
      if (turn || delivered) expected.replies += 1;
      if (turn) {
        expected.turns += 1;
        try {
          await settle();
        } catch (error) {
          // What the gateway runs is no longer known: nothing after this can be judged.
          failures.push(`${describeWebhookExchange(fuzzCase, response)}\n  ✗ ${String(error)}`);
          lost = true;
          break;
        }
        const prompt = JSON.stringify(model.modelRequests.at(-1)?.body ?? '');
        if (fuzzCase.facts.marker && !prompt.includes(fuzzCase.facts.marker))
          problems.push(`the turn's prompt does not carry ${fuzzCase.facts.marker}`);
      }
      if (turn || delivered) {
        if (!source && fuzzCase.facts.route && problems.length === 0)
          taken.push({
            request: fuzzCase.request,
            facts: fuzzCase.facts,
            routeSpec: fuzzCase.facts.route,
          });
      }
      if (gateway.process.child.exitCode !== null) problems.push('the gateway exited');
      // What the gateway did, right or wrong, is what later requests meet.
      remember(memory, fuzzCase.facts, answer);
      if (problems.length > 0)
        failures.push(
          `${describeWebhookExchange(fuzzCase, response)}\n  ✗ ${problems.join('\n  ✗ ')}`,
        );
    }

    // Requests no HTTP client sends: each must get a 4xx (or no answer for one never finished).
    const rawStatuses: string[] = [];
    const body = '{"a":1}';
    const signature = signV2('whsec-fuzz-a-0123456789', body, Math.floor(Date.now() / 1000));
    const post = (target: string, headers = '', content = body) =>
      `POST ${target} HTTP/1.1\r\nHost: localhost\r\nX-Webhook-Signature-V2: ${signature}\r\nContent-Length: ${Buffer.byteLength(content)}\r\n${headers}\r\n${content}`;
    const probes: [string, string, 'error' | 'any'][] = [
      ['absolute-form target with a broken host', post('http://[bad/webhooks/notify'), 'error'],
      ['scheme-relative target with a broken host', post('//[::1/webhooks/notify'), 'error'],
      ['asterisk target', post('*'), 'error'],
      ['backslash target', post('\\webhooks\\notify'), 'error'],
      ['space in the target', post('/webhooks/no tify'), 'error'],
      [
        'declared far over the limit',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999\r\n\r\n{}`,
        'error',
      ],
      [
        'Content-Length not a number',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n{}`,
        'error',
      ],
      [
        'chunk size not hex',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        'error',
      ],
      [
        'NUL in a header',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nX-Request-ID: a\0b\r\nContent-Length: 2\r\n\r\n{}`,
        'error',
      ],
      [
        'headers over 16 KiB',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
        'error',
      ],
      [
        'body shorter than its Content-Length, then closed',
        `POST /webhooks/notify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"a":`,
        'any',
      ],
    ];
    for (const [name, bytes, expect] of probes) {
      if (failures.length >= FAILURES_SHOWN) break;
      const { text } = await sendRawBytes(url, Buffer.from(bytes), 5_000);
      const responses = splitResponses(text);
      rawStatuses.push(`${name}: ${responses.map((answer) => answer.status).join('+') || '-'}`);
      const problems: string[] = [];
      const first = responses[0];
      if (expect === 'error' && !(first && first.status >= 400 && first.status < 500))
        problems.push(`expected a 4xx, got ${first ? first.status : 'no answer'}`);
      for (const answer of responses) {
        if (answer.status >= 500) problems.push(`server error ${answer.status}`);
        if (answer.status < 400) continue;
        // The listener's own shape, also for what Node itself refuses.
        let error: unknown;
        try {
          error = (JSON.parse(answer.body) as { error?: unknown }).error;
        } catch {
          error = undefined;
        }
        if (typeof error !== 'string' || error === '')
          problems.push(`${answer.status} without {"error": …}: ${JSON.stringify(answer.body)}`);
      }
      if (gateway.process.child.exitCode !== null) problems.push('the gateway exited');
      if (problems.length > 0)
        failures.push(
          `raw probe "${name}"\n  → ${text.slice(0, 300)}\n  ✗ ${problems.join('\n  ✗ ')}`,
        );
    }

    // A burst of distinct deliveries without delivery ids, each on its own connection: every one
    // is a delivery of its own (none may be taken for another's duplicate).
    if (failures.length < FAILURES_SHOWN && !lost) {
      await settle();
      const nowS = Math.floor(Date.now() / 1000);
      const clients = Array.from({ length: BURST * 2 }, () => new WireClient(url as string));
      onTestFinished(() => {
        for (const burstClient of clients) burstClient.close();
      });
      const answers = await Promise.all(
        clients.map((burstClient, index) => {
          const text = JSON.stringify({ burst: index });
          const signed =
            index < BURST
              ? { 'x-webhook-signature-v2': signV2('whsec-fuzz-a-0123456789', text, nowS) }
              : { 'x-webhook-signature': signV1('whsec-fuzz-a-0123456789', text) };
          return burstClient.send(
            {
              method: 'POST',
              path: '/webhooks/notify',
              headers: { 'content-type': 'application/json', ...signed },
              body: Buffer.from(text),
            },
            ANSWER_TIMEOUT_MS,
          );
        }),
      );
      const outcomes = answers.map(
        (answer) => `${answer.status} ${JSON.parse(answer.body.toString('utf8')).status}`,
      );
      const refused = outcomes.filter((outcome) => outcome !== '200 delivered');
      if (refused.length > 0)
        failures.push(
          `burst of ${answers.length} distinct deliveries without ids to notify (half V2, half V1): ${refused.length} not delivered: ${refused.join(', ')}`,
        );
      expected.replies += outcomes.length - refused.length;
      await settle().catch((error: unknown) => failures.push(String(error)));
    }

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `webhook fuzz: ${seconds} s; answers ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; turns ${model.modelRequests.length}; replies ${replies}`,
    );
    console.log(`webhook fuzz raw probes: ${rawStatuses.join('; ')}`);
    if (failures.length > 0)
      throw new Error(
        `webhook fuzz, seed ${SEED} (rerun with HERMES_FUZZ_SEED=${SEED}):\n\n${failures.join('\n\n')}`,
      );
    // The seed's deliveries reached work's own routes: its turns are in its store.
    expect(workStore()?.sessions.length ?? 0).toBeGreaterThan(0);
    const health = await client.send({ method: 'GET', path: '/health', headers: {} }, 5_000);
    expect(JSON.parse(health.body.toString('utf8'))).toEqual({ status: 'ok', platform: 'webhook' });
  }, 60_000);
});
