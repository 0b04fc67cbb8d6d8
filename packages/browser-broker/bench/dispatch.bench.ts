/**
 * Dispatch round trips over a real loopback WebSocket with the reference client, against a bare
 * `ws` echo of the same frames measured in the same run. Target: broker p50 ≤ 2× the bare echo.
 *
 *   pnpm --filter @hermes/browser-broker bench
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { BrowserControllerClient } from '../src/client/index.js';
import { BrowserControlBroker, createScope } from '../src/index.js';
import { startLoopbackGateway } from '../src/testing/loopback-gateway.js';

const WARMUP = 500;
const SEQUENTIAL = 3_000;
const CONCURRENT_TOTAL = 6_000;
const IN_FLIGHT = 32;

interface Figures {
  p50: number;
  p99: number;
  perSecond: number;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Runs `total` calls of `once` with `inFlight` workers; returns latency percentiles and rate. */
async function measure(
  once: () => Promise<unknown>,
  total: number,
  inFlight: number,
): Promise<Figures> {
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  const worker = async () => {
    while (issued < total) {
      issued += 1;
      const begin = performance.now();
      await once();
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = performance.now() - started;
  latencies.sort((left, right) => left - right);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    perSecond: (total / elapsed) * 1000,
  };
}

/** The baseline: the same command/result frames over a bare ws pair, no broker, no validation. */
async function startBareEcho() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const peer = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  peer.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    peer.send(
      JSON.stringify({
        method: 'browser.controller.result',
        params: { command_id: frame.params.command_id, ok: true, result: { pong: true } },
      }),
    );
  });
  const socket = await accepted;
  const waiting = new Map<string, () => void>();
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    waiting.get(frame.params.command_id)?.();
    waiting.delete(frame.params.command_id);
  });
  const roundTrip = () =>
    new Promise<void>((resolve) => {
      const commandId = randomBytes(16).toString('hex');
      waiting.set(commandId, resolve);
      socket.send(
        JSON.stringify({
          method: 'browser.controller.command',
          params: {
            command_id: commandId,
            action: 'controller.noop',
            arguments: {},
            controller_id: 'bench',
            browser_profile_id: 'bench',
            tool_call_id: null,
          },
        }),
      );
    });
  return {
    roundTrip,
    async close() {
      peer.terminate();
      socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startBrokerPath() {
  const flags = () => ({ enabled: true, developerMode: false });
  const broker = new BrowserControlBroker({ flags });
  const gateway = await startLoopbackGateway({
    broker,
    flags,
    apiKey: 'bench-key',
    sessions: new Set(['bench-session']),
  });
  const client = new BrowserControllerClient({
    baseUrl: gateway.baseUrl,
    apiKey: 'bench-key',
    sessionId: 'bench-session',
    controllerId: 'bench',
    browserProfileId: 'bench',
    capabilities: ['controller.noop'],
    handlers: { 'controller.noop': () => ({ pong: true }) },
  });
  await client.connect();
  const wire = client.registration?.scope;
  const scope = createScope({
    principalId: wire?.principal_id,
    profileId: wire?.profile_id,
    sessionId: wire?.session_id,
    controllerId: wire?.controller_id,
    browserProfileId: wire?.browser_profile_id,
    transportFamily: wire?.transport_family,
    capabilities: wire?.capabilities,
  });
  return {
    roundTrip: () => broker.dispatch({ scope, action: 'controller.noop', arguments: {} }),
    async close() {
      await client.close();
      await gateway.close();
    },
  };
}

function row(name: string, figures: Figures): string {
  return `${name.padEnd(34)} p50 ${figures.p50.toFixed(3).padStart(8)} ms   p99 ${figures.p99
    .toFixed(3)
    .padStart(8)} ms   ${Math.round(figures.perSecond).toString().padStart(7)} commands/s`;
}

const bare = await startBareEcho();
const brokered = await startBrokerPath();
await measure(bare.roundTrip, WARMUP, 1);
await measure(brokered.roundTrip, WARMUP, 1);

const bareSequential = await measure(bare.roundTrip, SEQUENTIAL, 1);
const brokerSequential = await measure(brokered.roundTrip, SEQUENTIAL, 1);
const bareConcurrent = await measure(bare.roundTrip, CONCURRENT_TOTAL, IN_FLIGHT);
const brokerConcurrent = await measure(brokered.roundTrip, CONCURRENT_TOTAL, IN_FLIGHT);

console.log(
  `node ${process.version}, ${SEQUENTIAL} sequential / ${CONCURRENT_TOTAL} at ${IN_FLIGHT} in flight\n`,
);
console.log(row('bare ws echo, 1 in flight', bareSequential));
console.log(row('broker + client, 1 in flight', brokerSequential));
console.log(row(`bare ws echo, ${IN_FLIGHT} in flight`, bareConcurrent));
console.log(row(`broker + client, ${IN_FLIGHT} in flight`, brokerConcurrent));
const ratio = brokerSequential.p50 / bareSequential.p50;
console.log(`\np50 ratio (1 in flight): ${ratio.toFixed(2)}× the bare echo (target ≤ 2×)`);
console.log(
  `throughput ratio (${IN_FLIGHT} in flight): ${(brokerConcurrent.perSecond / bareConcurrent.perSecond).toFixed(2)}× the bare echo`,
);

await brokered.close();
await bare.close();
