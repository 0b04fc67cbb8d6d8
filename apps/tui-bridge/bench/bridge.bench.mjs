// Benchmarks of the built bridge (dist/bin.js), each against a baseline measured in the same run:
//  1. round trip of `profiles.list` over stdio vs a bare JSON echo child over stdio;
//  2. the same over WebSocket vs a bare `ws` echo server (a child process too);
//     (both also time a method the bridge does not have, whose -32601 answer takes the transport
//     and framing path without a method behind it: what the transport costs on its own);
//  3. event latency: from the moment the (local, scripted) model server writes a streamed chunk to
//     the moment the front end has parsed the matching `message.delta` event — the agent's SSE
//     parsing, the event mapping, serialisation and the pipe/socket are all inside it.
// Run: pnpm --filter @hermes/tui-bridge bench (after a build).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageDir = path.join(here, '..');
const BIN = path.join(packageDir, 'dist', 'bin.js');
const BLOCKS = 6;
const PER_BLOCK = 250;
const TOKEN = 'bench-token-0123456789abcdef';
const CHUNKS = 200;

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;

/** Line-oriented JSON-RPC client over a child's stdio. */
function stdioClient(child) {
  const pending = new Map();
  const listeners = new Set();
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    for (let index = buffer.indexOf('\n'); index !== -1; index = buffer.indexOf('\n')) {
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      const now = performance.now();
      if (message.id !== undefined && pending.has(message.id)) {
        pending.get(message.id)(message);
        pending.delete(message.id);
      }
      for (const listener of listeners) listener(message, now);
    }
  });
  let nextId = 1;
  return {
    call(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function wsClient(socket) {
  const pending = new Map();
  let nextId = 1;
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  });
  return {
    call(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
  };
}

const ECHO_STDIO = `
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let index = buffer.indexOf('\\n'); index !== -1; index = buffer.indexOf('\\n')) {
    const line = buffer.slice(0, index);
    buffer = buffer.slice(index + 1);
    const request = JSON.parse(line);
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { echo: true } }) + '\\n');
  }
});`;

const ECHO_WS = `
import { WebSocketServer } from 'ws';
const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
server.on('listening', () => process.stdout.write('port ' + server.address().port + '\\n'));
server.on('connection', (socket) => socket.on('message', (data) => {
  const request = JSON.parse(data.toString());
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { echo: true } }));
}));`;

function waitForLine(child, pattern) {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk) => {
      text += chunk.toString();
      const match = pattern.exec(text);
      if (match) {
        child.stdout.off('data', onData);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', () => reject(new Error(`exited before ${pattern}`)));
  });
}

async function roundTrips(client, method, count) {
  const samples = [];
  for (let index = 0; index < count; index += 1) {
    const start = performance.now();
    await client.call(method, {});
    samples.push(performance.now() - start);
  }
  return samples;
}

/**
 * A method the bridge does not have: its answer (-32601) takes the same path as any request —
 * line framing, JSON parsing, the envelope check, serialising the reply, the write — without a
 * method behind it. Its round trip is what the transport and framing cost on their own.
 */
const UNKNOWN_METHOD = 'bench.no_such_method';

/** Alternating blocks so load changes on the shared machine hit all sides alike. */
async function compare(label, subject, baseline) {
  await roundTrips(subject, 'profiles.list', 100); // warm-up
  await roundTrips(baseline, 'profiles.list', 100);
  await roundTrips(subject, UNKNOWN_METHOD, 100);
  const ours = [];
  const framing = [];
  const bare = [];
  for (let block = 0; block < BLOCKS; block += 1) {
    ours.push(...(await roundTrips(subject, 'profiles.list', PER_BLOCK)));
    framing.push(...(await roundTrips(subject, UNKNOWN_METHOD, PER_BLOCK)));
    bare.push(...(await roundTrips(baseline, 'echo', PER_BLOCK)));
  }
  const result = {
    label,
    bridgeP50: percentile(ours, 50),
    bridgeP99: percentile(ours, 99),
    framingP50: percentile(framing, 50),
    framingP99: percentile(framing, 99),
    echoP50: percentile(bare, 50),
    echoP99: percentile(bare, 99),
  };
  result.ratio = result.bridgeP50 / result.echoP50;
  result.framingRatio = result.framingP50 / result.echoP50;
  return result;
}

/** A minimal streaming chat-completions server that records when each chunk was written. */
function startChunkServer() {
  const sent = new Map();
  let run = 0;
  const server = createServer((request, response) => {
    request.resume(); // the request body is not needed
    request.on('end', async () => {
      run += 1;
      const prefix = `r${run}-`;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = {
        id: `chatcmpl-${run}`,
        object: 'chat.completion.chunk',
        created: 0,
        model: 'test-model',
      };
      const write = (delta, finish = null) =>
        response.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      write({ role: 'assistant', content: '' });
      for (let index = 0; index < CHUNKS; index += 1) {
        const token = `#${prefix}${index};`;
        sent.set(token, performance.now());
        write({ content: token });
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
      write({}, 'stop');
      response.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, sent, port: server.address().port }));
  });
}

async function main() {
  const home = mkdtempSync(path.join(tmpdir(), 'hermes-bridge-bench-'));
  const chunks = await startChunkServer();
  writeFileSync(
    path.join(home, 'config.yaml'),
    `model:\n  default: test-model\n  base_url: http://127.0.0.1:${chunks.port}/v1\n  api_key: sk-bench-0123456789\n`,
  );
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HERMES_HOME: home,
    HERMES_TUI_BRIDGE_TOKEN: TOKEN,
  };
  const children = [];
  const spawnChild = (args, options = {}) => {
    const child = spawn(process.execPath, args, {
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
      ...options,
    });
    children.push(child);
    return child;
  };
  try {
    // stdio
    const bridge = spawnChild([BIN]);
    const bridgeClient = stdioClient(bridge);
    await waitForLine(bridge, /gateway\.ready/);
    const echo = spawnChild(['-e', ECHO_STDIO]);
    const stdio = await compare('stdio', bridgeClient, stdioClient(echo));

    // WebSocket
    const wsBridge = spawnChild([BIN, '--port', '0']);
    const [, url] = await waitForLine(wsBridge, /listening on (ws:\/\/\S+)/);
    const wsEcho = spawnChild(['--input-type=module', '-e', ECHO_WS], { cwd: packageDir });
    const [, echoPort] = await waitForLine(wsEcho, /port (\d+)/);
    const open = (target, headers) =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(target, { headers });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
    const bridgeSocket = await open(url, { authorization: `Bearer ${TOKEN}` });
    const echoSocket = await open(`ws://127.0.0.1:${echoPort}/`, {});
    const ws = await compare('websocket', wsClient(bridgeSocket), wsClient(echoSocket));
    bridgeSocket.close();
    echoSocket.close();

    // Event latency over stdio: model chunk written → message.delta parsed by the front end.
    const session = await bridgeClient.call('session.create', {});
    const sessionId = session.result.session_id;
    const latencies = [];
    for (let turn = 0; turn < 3; turn += 1) {
      const done = new Promise((resolve) => {
        const stop = bridgeClient.listen((message, receivedAt) => {
          if (message.method !== 'event') return;
          const { type, payload } = message.params;
          if (type === 'message.delta') {
            for (const token of payload.text.match(/#r\d+-\d+;/g) ?? []) {
              const sentAt = chunks.sent.get(token);
              if (sentAt !== undefined) latencies.push(receivedAt - sentAt);
            }
          } else if (type === 'run.completed') {
            stop();
            resolve();
          }
        });
      });
      const reply = await bridgeClient.call('prompt.submit', {
        session_id: sessionId,
        text: `stream ${turn}`,
      });
      if (reply.error) throw new Error(reply.error.message);
      await done;
    }

    console.log(
      '\nRound trip of profiles.list vs a bare JSON echo over the same transport (alternating blocks):',
    );
    console.log(
      '| transport | bridge p50 | bridge p99 | echo p50 | echo p99 | ratio p50 | target |',
    );
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const row of [stdio, ws]) {
      console.log(
        `| ${row.label} | ${fmt(row.bridgeP50)} | ${fmt(row.bridgeP99)} | ${fmt(row.echoP50)} | ${fmt(row.echoP99)} | ${row.ratio.toFixed(2)}× | ≤ 2× |`,
      );
    }
    console.log(
      `\nThe same transports answering a method the bridge does not have (${UNKNOWN_METHOD} → -32601): framing, parsing, envelope check and reply without a method:`,
    );
    console.log('| transport | framing p50 | framing p99 | echo p50 | ratio p50 |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const row of [stdio, ws]) {
      console.log(
        `| ${row.label} | ${fmt(row.framingP50)} | ${fmt(row.framingP99)} | ${fmt(row.echoP50)} | ${row.framingRatio.toFixed(2)}× |`,
      );
    }
    console.log(
      `\nEvent latency, model chunk written → message.delta parsed (stdio, ${latencies.length} deltas): p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}`,
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    chunks.server.close();
    setTimeout(() => rmSync(home, { recursive: true, force: true }), 500).unref();
  }
}

await main();
