// `pnpm --filter @hermes/gateway bench`: 32 concurrent clients against the built gateway,
// compared in the same run with a bare @hono/node-server route and with direct calls to the
// model server. Prints req/s, p50 and p99 per target and the ratios the issue sets as targets:
//   GET /api/sessions       ≥ 0.5 × the bare route's throughput
//   /v1/chat/completions    ≤ 2 ms p50 over a direct model call (proxy overhead)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLIENTS = 32;
const WARMUP_MS = 1000;
const MEASURE_MS = Number(process.env.BENCH_MEASURE_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SEEDED_SESSIONS = 200;
const SEQUENTIAL_REQUESTS = Number(process.env.BENCH_SEQUENTIAL ?? 300);
// BENCH_GATEWAY_BIN=<path to another build's bin.js> runs another build in the gateway's place;
// BENCH_COMPARE_BIN=<path> runs another build beside this one, its one-client chats interleaved
// with this build's (request by request, so both see the same machine).

const children = [];
let stopping = false;
function start(command, args, pattern, env = process.env) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let ready = false;
    child.stdout.on('data', (chunk) => {
      // Read on after the ready line (a full pipe would block the child's log writes) but keep
      // only the start.
      if (ready) return;
      out += chunk;
      const match = pattern.exec(out);
      if (match) {
        ready = true;
        resolve(match.length > 2 ? match.slice(1) : match[1]);
      }
    });
    // The last of each child's stderr, shown if it exits before the bench is done.
    let err = '';
    child.stderr.on('data', (chunk) => {
      err = (err + chunk).slice(-8000);
    });
    child.once('exit', (code, signal) => {
      if (!stopping) {
        process.stderr.write(
          `bench: ${path.basename(args.find((arg) => /\.m?js$/.test(arg)) ?? command)} exited (${code ?? signal}) during the run:\n${err}\n`,
        );
      }
      reject(new Error(`${args.join(' ')} exited ${code ?? signal}: ${out}\n${err}`));
    });
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });
function request(url, { method = 'GET', body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method,
        headers: body
          ? {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              ...headers,
            }
          : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function load(label, send) {
  const stopAt = performance.now() + WARMUP_MS + MEASURE_MS;
  const measureFrom = performance.now() + WARMUP_MS;
  const latencies = [];
  let failures = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < stopAt) {
        const started = performance.now();
        const response = await send().catch((error) => ({ status: 0, error }));
        const ended = performance.now();
        if (response.status !== 200) {
          failures += 1;
          if (response.error && failures === 1)
            process.stderr.write(`bench: ${label}: ${response.error.message}\n`);
        }
        if (started >= measureFrom) latencies.push(ended - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    label,
    rps: latencies.length / (MEASURE_MS / 1000),
    p50: at(0.5),
    p99: at(0.99),
    failures,
  };
}

const home = mkdtempSync(path.join(tmpdir(), 'hermes-bench-'));
try {
  const [modelUrl, modelControlUrl] = await start(
    process.execPath,
    [path.join(here, 'model-server.mjs')],
    /MODEL (\S+) CONTROL (\S+)/,
  );
  writeFileSync(
    path.join(home, 'config.yaml'),
    // The shipped defaults, nothing tuned: the agent streams its model calls, the loop watchdog
    // runs, the log level is info (a line per turn).
    `model:\n  default: test-model\n  base_url: ${modelUrl}\n  api_key: sk-bench\n`,
  );
  const gatewayUrl = await start(
    process.execPath,
    [process.env.BENCH_GATEWAY_BIN ?? path.join(here, '..', 'dist', 'bin.js'), '--port', '0'],
    /listening on (http:\/\/\S+)/,
    { ...process.env, HERMES_HOME: home },
  );
  let compareUrl;
  if (process.env.BENCH_COMPARE_BIN) {
    const compareHome = path.join(home, 'compare-home');
    const { mkdirSync: mkdir, copyFileSync: copy } = await import('node:fs');
    mkdir(compareHome);
    copy(path.join(home, 'config.yaml'), path.join(compareHome, 'config.yaml'));
    compareUrl = await start(
      process.execPath,
      [process.env.BENCH_COMPARE_BIN, '--port', '0'],
      /listening on (http:\/\/\S+)/,
      { ...process.env, HERMES_HOME: compareHome },
    );
  }
  for (let index = 0; index < SEEDED_SESSIONS; index += 1) {
    for (const url of compareUrl ? [gatewayUrl, compareUrl] : [gatewayUrl]) {
      await request(`${url}/api/sessions`, {
        method: 'POST',
        body: JSON.stringify({ title: `session ${index}` }),
      });
    }
  }
  const listing = await request(`${gatewayUrl}/api/sessions`);
  const bodyFile = path.join(home, 'listing.json');
  writeFileSync(bodyFile, listing.text);
  const bareUrl = await start(
    process.execPath,
    [path.join(here, 'bare-server.mjs'), bodyFile],
    /BARE (\S+)/,
  );

  const chatBody = JSON.stringify({
    model: 'test-model',
    messages: [{ role: 'user', content: 'hi' }],
  });
  const results = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    // Alternate the order each round so machine load drifts over every target alike.
    const targets = [
      ['bare GET /api/sessions', () => request(`${bareUrl}/api/sessions`)],
      ['gateway GET /api/sessions', () => request(`${gatewayUrl}/api/sessions`)],
      [
        'model direct /v1/chat/completions',
        () => request(`${modelUrl}/chat/completions`, { method: 'POST', body: chatBody }),
      ],
      [
        'gateway /v1/chat/completions',
        () => request(`${gatewayUrl}/v1/chat/completions`, { method: 'POST', body: chatBody }),
      ],
    ];
    // The compare build gets the same load: a build measured cold (its code not optimised yet,
    // its caches empty) beside a warm one is 1.2 ms slower a chat with the very same code.
    if (compareUrl)
      targets.push(
        ['compare GET /api/sessions', () => request(`${compareUrl}/api/sessions`)],
        [
          'compare /v1/chat/completions',
          () => request(`${compareUrl}/v1/chat/completions`, { method: 'POST', body: chatBody }),
        ],
      );
    if (round % 2 === 0) targets.reverse();
    for (const [label, send] of targets) results.push({ round, ...(await load(label, send)) });
  }
  // One client, one request at a time: where a turn's time goes without queueing. Every request
  // starts a new conversation, as an OpenAI-compatible client that sends no session header does.
  // The agent runs in this process on its own home with the same config (no HTTP, no gateway):
  // a turn that creates its conversation, as the gateway's does. The direct calls: the client's
  // one message, and the very request the gateway sent the model (system prompt, tools,
  // message), replayed.
  const { createAgent } = await import('@hermes/agent');
  const { loadConfig } = await import('@hermes/config');
  const { openSessionStore } = await import('@hermes/session-store');
  const agentHome = path.join(home, 'agent-home');
  const { mkdirSync, copyFileSync } = await import('node:fs');
  mkdirSync(agentHome);
  copyFileSync(path.join(home, 'config.yaml'), path.join(agentHome, 'config.yaml'));
  const agentStore = await openSessionStore({ path: path.join(agentHome, 'state.db') });
  const agentInProcess = createAgent({
    config: loadConfig({ home: agentHome }).config,
    store: agentStore,
    home: agentHome,
    platform: 'api_server',
  });
  await request(`${gatewayUrl}/v1/chat/completions`, { method: 'POST', body: chatBody });
  const sameRequest = (await request(`${modelControlUrl}/last-body`)).text;
  const sequential = { bare: [], direct: [], same: [], agent: [], gateway: [], compare: [] };
  const timed = async (list, work) => {
    const started = performance.now();
    await work();
    list.push(performance.now() - started);
  };
  for (let index = 0; index < SEQUENTIAL_REQUESTS; index += 1) {
    await timed(sequential.bare, () =>
      request(`${bareUrl}/v1/chat/completions`, { method: 'POST', body: chatBody }),
    );
    await timed(sequential.direct, () =>
      request(`${modelUrl}/chat/completions`, { method: 'POST', body: chatBody }),
    );
    await timed(sequential.same, () =>
      request(`${modelUrl}/chat/completions`, { method: 'POST', body: sameRequest }),
    );
    await timed(sequential.agent, async () => {
      // As the gateway runs it: the turn creates the conversation (`newSession`).
      await agentInProcess.runTurn({
        sessionId: `bench_${index}`,
        message: 'hi',
        newSession: { source: 'api_server' },
      });
    });
    const viaGateway = () =>
      timed(sequential.gateway, () =>
        request(`${gatewayUrl}/v1/chat/completions`, { method: 'POST', body: chatBody }),
      );
    const viaCompare = () =>
      timed(sequential.compare, () =>
        request(`${compareUrl}/v1/chat/completions`, { method: 'POST', body: chatBody }),
      );
    // Each build goes first every other time: a gateway's work after its answer (the log line,
    // WAL writes) overlaps whatever request comes next, so a fixed order slows the second.
    if (!compareUrl) await viaGateway();
    else if (index % 2 === 0) {
      await viaGateway();
      await viaCompare();
    } else {
      await viaCompare();
      await viaGateway();
    }
  }
  await agentStore.close();
  const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1] ?? 0;
  const line = (r) =>
    `${`round ${r.round}  ${r.label}`.padEnd(48)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms${r.failures ? `  (${r.failures} non-200)` : ''}`;
  console.log(
    `${CLIENTS} concurrent clients, ${MEASURE_MS} ms per target per round (after ${WARMUP_MS} ms warm-up)\n`,
  );
  for (const result of results) console.log(line(result));
  console.log('');
  for (let round = 1; round <= ROUNDS; round += 1) {
    const get = (label) => results.find((r) => r.round === round && r.label === label);
    const sessions = get('gateway GET /api/sessions').rps / get('bare GET /api/sessions').rps;
    const overhead =
      get('gateway /v1/chat/completions').p50 - get('model direct /v1/chat/completions').p50;
    console.log(
      `round ${round}: sessions list ${sessions.toFixed(2)}× the bare route (target ≥ 0.5×); chat proxy overhead p50 ${overhead.toFixed(2)} ms at ${CLIENTS} clients (target ≤ 2 ms)`,
    );
  }
  const bare = median(sequential.bare);
  const direct = median(sequential.direct);
  const same = median(sequential.same);
  const agentTurn = median(sequential.agent);
  const viaGateway = median(sequential.gateway);
  console.log(
    `\none client, ${SEQUENTIAL_REQUESTS} requests each (a new conversation each), p50: bare round trip ${bare.toFixed(2)} ms; direct model call with the client's message ${direct.toFixed(2)} ms, with the request the gateway sends (${Buffer.byteLength(sameRequest)} bytes: system prompt, tools, message) ${same.toFixed(2)} ms; agent session + runTurn in-process ${agentTurn.toFixed(2)} ms; gateway /v1/chat/completions ${viaGateway.toFixed(2)} ms`,
  );
  console.log(
    `  proxy overhead (gateway over the direct call it makes) ${(viaGateway - same).toFixed(2)} ms (target ≤ 2 ms), of which the agent's session and turn ${(agentTurn - same).toFixed(2)} ms and the gateway's HTTP layer ${(viaGateway - agentTurn).toFixed(2)} ms (one round trip to a bare route ${bare.toFixed(2)} ms, the gateway's own work ${(viaGateway - agentTurn - bare).toFixed(2)} ms); over the client's one-message call ${(viaGateway - direct).toFixed(2)} ms`,
  );
  if (compareUrl) {
    const compared = median(sequential.compare);
    console.log(
      `  compare build (${process.env.BENCH_COMPARE_BIN}), interleaved: /v1/chat/completions ${compared.toFixed(2)} ms, proxy overhead ${(compared - same).toFixed(2)} ms (this build ${(viaGateway - same).toFixed(2)} ms)`,
    );
  }
} finally {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  agent.destroy();
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(home, { recursive: true, force: true });
}
