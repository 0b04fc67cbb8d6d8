// Control-socket latency against a bare `net` one-line-per-connection echo server, measured in
// the same run on the same machine. Run: pnpm --filter @hermes/control-socket bench
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  identifyGateway,
  queryControlSocket,
  startControlServer,
  writeRuntimeStatus,
} from '../src/index.js';

const SEQUENTIAL = 10_000;
const CONCURRENT_CLIENTS = 100;
const QUERIES_PER_CLIENT = 100;
const WARM_UP = 500;
const REQUEST = `${JSON.stringify({ verb: 'identify', id: 1, protocol: 1 })}\n`;

/** The baseline: reads one line, writes it back, closes. Nothing else. */
function startEchoServer(socketPath: string): Promise<net.Server> {
  const server = net.createServer((socket) => {
    let buffered = '';
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline !== -1) socket.end(buffered.slice(0, newline + 1));
    });
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve(server)));
}

/** The matching bare client: connect, write one line, read one line. */
function bareRoundTrip(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = '';
    socket.on('connect', () => socket.write(REQUEST));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.includes('\n')) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
  });
}

interface Summary {
  readonly p50: number;
  readonly p99: number;
  readonly totalMs: number;
}

function summarise(samples: number[], totalMs: number): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), totalMs };
}

type RoundTrip = () => Promise<unknown>;

/**
 * Runs every configuration in interleaved blocks (rotating which goes first), so load from other
 * work on the machine drifts over all of them alike instead of biasing whichever ran during a
 * busy moment. Returns one summary per configuration.
 */
async function interleaved(
  roundTrips: readonly RoundTrip[],
  blocks: number,
  runBlock: (roundTrip: RoundTrip, samples: number[]) => Promise<void>,
): Promise<Summary[]> {
  const samples = roundTrips.map(() => [] as number[]);
  const elapsed = roundTrips.map(() => 0);
  for (let block = 0; block < blocks; block += 1) {
    for (let offset = 0; offset < roundTrips.length; offset += 1) {
      const index = (block + offset) % roundTrips.length;
      const started = performance.now();
      await runBlock(roundTrips[index] as RoundTrip, samples[index] as number[]);
      elapsed[index] = (elapsed[index] as number) + performance.now() - started;
    }
  }
  return samples.map((list, index) => summarise(list, elapsed[index] as number));
}

async function timed(roundTrip: RoundTrip, samples: number[]): Promise<void> {
  const before = performance.now();
  await roundTrip();
  samples.push(performance.now() - before);
}

const SEQUENTIAL_BLOCKS = 10;
const CONCURRENT_BLOCKS = 4;

function sequential(roundTrips: readonly RoundTrip[]): Promise<Summary[]> {
  return interleaved(roundTrips, SEQUENTIAL_BLOCKS, async (roundTrip, samples) => {
    for (let index = 0; index < SEQUENTIAL / SEQUENTIAL_BLOCKS; index += 1) {
      await timed(roundTrip, samples);
    }
  });
}

function concurrent(roundTrips: readonly RoundTrip[]): Promise<Summary[]> {
  return interleaved(roundTrips, CONCURRENT_BLOCKS, async (roundTrip, samples) => {
    await Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        for (let index = 0; index < QUERIES_PER_CLIENT / CONCURRENT_BLOCKS; index += 1) {
          await timed(roundTrip, samples);
        }
      }),
    );
  });
}

const format = (milliseconds: number) => `${milliseconds.toFixed(3)} ms`;

function printRow(label: string, summary: Summary, baseline: Summary, queries: number) {
  const perSecond = Math.round((queries / summary.totalMs) * 1000);
  console.log(
    `${label.padEnd(44)} p50 ${format(summary.p50).padStart(10)} (${(summary.p50 / baseline.p50).toFixed(2)}x)` +
      `  p99 ${format(summary.p99).padStart(10)} (${(summary.p99 / baseline.p99).toFixed(2)}x)` +
      `  ${String(perSecond).padStart(6)} q/s`,
  );
}

const home = await mkdtemp(path.join(tmpdir(), 'hermes-bench-'));
const echoPath = path.join(home, 'echo.sock');
const echo = await startEchoServer(echoPath);
const started = await startControlServer({
  home,
  codeIdentity: () => ({ sha: 'bench', version: '0.0.0' }),
});
if (!started.started) throw started.error;
const server = started.server;
await writeRuntimeStatus(
  home,
  { gatewayState: 'running' },
  { pid: process.pid, argv: process.argv, startTime: null, home },
);
if ((await identifyGateway(home)) === null) throw new Error('identify failed before the bench');

try {
  console.log(
    `control-socket bench — node ${process.version}, ${SEQUENTIAL} sequential, ${CONCURRENT_CLIENTS}x${QUERIES_PER_CLIENT} concurrent`,
  );
  const configurations: readonly RoundTrip[] = [
    () => bareRoundTrip(echoPath),
    () => bareRoundTrip(server.bindPath),
    () => queryControlSocket(home, 'identify'),
  ];
  for (const roundTrip of configurations) {
    for (let index = 0; index < WARM_UP; index += 1) await roundTrip();
  }
  const labels = [
    'bare net echo (baseline)',
    'identify, bare client -> control server',
    'identify, queryControlSocket -> server',
  ];
  const sequentialSummaries = await sequential(configurations);
  const baselineSequential = sequentialSummaries[0] as Summary;
  console.log('\nsequential round trips (ratio against the bare echo)');
  sequentialSummaries.forEach((summary, index) => {
    printRow(labels[index] as string, summary, baselineSequential, SEQUENTIAL);
  });

  const concurrentSummaries = await concurrent(configurations);
  const baselineConcurrent = concurrentSummaries[0] as Summary;
  console.log('\nconcurrent clients (ratio against the bare echo)');
  concurrentSummaries.forEach((summary, index) => {
    printRow(
      labels[index] as string,
      summary,
      baselineConcurrent,
      CONCURRENT_CLIENTS * QUERIES_PER_CLIENT,
    );
  });
} finally {
  await server.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
  await rm(home, { recursive: true, force: true });
}
