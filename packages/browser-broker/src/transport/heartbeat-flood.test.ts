import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SpawnedProcess, spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  FRAME_HEARTBEAT,
} from '../constants.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageRoot = path.resolve(here, '..', '..');
const API_KEY = 'flood-test-key-0123456789';
const FLOODER_SESSION = 'session-flooder';
const PROBE_SESSION = 'session-probe';
const FLOOD_HEARTBEATS = 100_000;
/** The bound: another controller is answered within this, throughout. */
const ANSWER_BOUND_MILLISECONDS = 100;
/** The flooder stays disconnected and unread this long before it looks at the server's answers. */
const UNREAD_MILLISECONDS = 2_000;
/** Probing continues this long after the server tore the flooder down. */
const AFTER_TEARDOWN_MILLISECONDS = 1_000;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function spawnFixture(name: string, args: string[], readyLine: RegExp | string) {
  return spawnProcess({
    command: process.execPath,
    args: [
      '--conditions=@hermes/source',
      '--import',
      'tsx',
      path.join(here, 'test-fixtures', name),
      ...args,
    ],
    cwd: packageRoot,
    readyLine,
  });
}

async function registerTicket(baseUrl: string, sessionId: string): Promise<string> {
  const response = await fetch(`${baseUrl}${BROWSER_CONTROL_REGISTER_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      protocol_version: 1,
      session_id: sessionId,
      controller_id: `ext-${sessionId}`,
      browser_profile_id: 'chrome-default',
      capabilities: ['controller.noop'],
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { ticket: string }).ticket;
}

async function openProbe(baseUrl: string): Promise<WebSocket> {
  const ticket = await registerTicket(baseUrl, PROBE_SESSION);
  const socket = new WebSocket(`${baseUrl.replace('http', 'ws')}${BROWSER_CONTROL_WS_PATH}`, [
    BROWSER_CONTROL_SUBPROTOCOL,
    `${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${ticket}`,
  ]);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/**
 * Heartbeat round trips on a well-behaved controller, back to back, until stopped. A round trip
 * still unanswered when probing stops counts with the time it has waited so far.
 */
function probeContinuously(socket: WebSocket) {
  const roundTrips: number[] = [];
  let stopped = false;
  let sequence = 0;
  let inFlightSince: number | undefined;
  const oneRoundTrip = () =>
    new Promise<void>((resolve) => {
      sequence += 1;
      const nonce = `probe-${sequence}`;
      const sentAt = performance.now();
      inFlightSince = sentAt;
      const onMessage = (data: Buffer) => {
        if (!data.toString().includes(`"${nonce}"`)) return;
        socket.off('message', onMessage);
        inFlightSince = undefined;
        roundTrips.push(performance.now() - sentAt);
        resolve();
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce } }));
    });
  const loop = (async () => {
    while (!stopped) {
      await oneRoundTrip();
      await sleep(5);
    }
  })();
  return {
    roundTrips,
    async stop() {
      stopped = true;
      await Promise.race([loop, sleep(1_000)]);
      if (inFlightSince !== undefined) roundTrips.push(performance.now() - inFlightSince);
    },
  };
}

describe('a heartbeat flood from a controller that does not read', () => {
  // Three processes, as in production: the broker's gateway, the flooding controller, and this
  // one, which does nothing but probe with a second controller (so its own work cannot inflate
  // what it measures).
  it('leaves the broker process answering another controller within 100 ms throughout', {
    timeout: 60_000,
  }, async () => {
    const gateway: SpawnedProcess = await spawnFixture(
      'loopback-gateway-process.ts',
      [API_KEY, FLOODER_SESSION, PROBE_SESSION],
      /listening http:\S+/,
    );
    const baseUrl = (await gateway.waitForLine(/listening (http:\S+)/))[1] ?? '';
    const flooder = await spawnFixture(
      'non-reading-flooder.ts',
      [
        baseUrl,
        await registerTicket(baseUrl, FLOODER_SESSION),
        String(FLOOD_HEARTBEATS),
        String(UNREAD_MILLISECONDS),
      ],
      'attached',
    );
    const probeSocket = await openProbe(baseUrl);

    const probe = probeContinuously(probeSocket);
    await sleep(200);
    const floodStartedAt = performance.now();
    // The flooder writes every heartbeat and disconnects (its FIN follows the last frame)
    // without reading: the server has to read and handle every frame, the last ones with the
    // peer already gone. After UNREAD_MILLISECONDS the flooder reads what it was sent: an echo
    // per heartbeat the server answered, or the close frame of a server that refused it.
    flooder.kill('SIGUSR2');
    const [outcomeLine, tornDown] = await Promise.all([
      flooder.waitForLine(/outcome (\{.*\})/, 40_000).catch(() => undefined),
      // The server's teardown of the flooder runs after the last frame it read was handled.
      gateway.waitForLine('closed 1', 40_000).then(
        () => true,
        () => false,
      ),
    ]);
    const tornDownMilliseconds = performance.now() - floodStartedAt;
    await sleep(AFTER_TEARDOWN_MILLISECONDS);
    await probe.stop();
    probeSocket.terminate();

    const outcome = JSON.parse(outcomeLine?.[1] ?? '{}') as {
      echoes?: number;
      closeCode?: number | null;
    };
    const probedMilliseconds = performance.now() - floodStartedAt;
    const slowest = Math.max(...probe.roundTrips);
    const summary = [
      `${probe.roundTrips.length} round trips over ${probedMilliseconds.toFixed(0)} ms`,
      `slowest ${slowest.toFixed(1)} ms`,
      `flooder ${tornDown ? 'torn down' : 'NOT torn down'} after ${tornDownMilliseconds.toFixed(0)} ms`,
      `${outcome.echoes ?? '?'} echoes, close code ${outcome.closeCode ?? 'none'}`,
    ].join(', ');
    expect(tornDown, summary).toBe(true);
    // Probes ran back to back the whole time, so no window longer than the bound went unprobed.
    expect(probe.roundTrips.length, summary).toBeGreaterThan(
      probedMilliseconds / (ANSWER_BOUND_MILLISECONDS + 10),
    );
    expect(slowest, summary).toBeLessThan(ANSWER_BOUND_MILLISECONDS);
    // The flood was really handled, not dropped: the server answered it (the frames it reads
    // after the flooder's FIN get no answer, the peer being gone, hence not quite all), or
    // refused the flooder (1008).
    expect(
      (outcome.echoes ?? 0) >= FLOOD_HEARTBEATS * 0.9 || outcome.closeCode === 1008,
      summary,
    ).toBe(true);
  });
});
