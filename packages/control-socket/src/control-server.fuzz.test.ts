import { readdir } from 'node:fs/promises';
import net from 'node:net';
import { seededRandom, tempHome } from '@hermes/testkit';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_LINE_BYTES } from './constants.js';
import { identifyGateway } from './control-client.js';
import { startControlServer } from './control-server.js';
import { ControlErrorReplySchema } from './wire-schema.js';

const MALFORMED_REQUESTS = 10_000;
const BATCH_SIZE = 200;
const IDLE_CONNECTIONS = 200;
const READ_TIMEOUT_MS = 300;

type Ending = 'newline' | 'half-close' | 'abort' | 'never-terminated';

interface FuzzCase {
  readonly bytes: Buffer;
  readonly ending: Ending;
}

function makeCase(index: number, random: () => number): FuzzCase {
  const randomBytes = (length: number) =>
    Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
  if (index % 50 === 0) {
    return {
      bytes: Buffer.alloc(MAX_REQUEST_LINE_BYTES + 1 + (index % 7), 0x61),
      ending: 'newline',
    };
  }
  if (index % 100 === 1) return { bytes: Buffer.from('{"verb":"iden'), ending: 'never-terminated' };
  const texts = [
    '{"verb":',
    '{"verb":"identify"',
    '[1,2,3]',
    'null',
    '"identify"',
    '{"verb":{"nested":[1,2]}}',
    '{"verb":"identify","protocol":99}',
    '{"verb":"no-such-verb","id":{"x":1}}',
    '{"verb":"identify","payload":"nope"}',
    '\u0000\u0001\u0002',
  ];
  const kind = index % 4;
  const bytes =
    kind === 0
      ? randomBytes(1 + Math.floor(random() * 200))
      : Buffer.from(texts[Math.floor(random() * texts.length)] as string);
  const endings: Ending[] = ['newline', 'newline', 'half-close', 'abort'];
  return { bytes, ending: endings[Math.floor(random() * endings.length)] as Ending };
}

interface FuzzOutcome {
  readonly received: string;
  readonly closedByServer: boolean;
}

function sendCase(socketPath: string, fuzzCase: FuzzCase): Promise<FuzzOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const received: Buffer[] = [];
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(received).toString('utf8'), closedByServer });
    };
    const timer = setTimeout(() => finish(false), 10_000);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.once('connect', () => {
      switch (fuzzCase.ending) {
        case 'newline':
          socket.write(Buffer.concat([fuzzCase.bytes, Buffer.from('\n')]));
          break;
        case 'half-close':
          socket.end(fuzzCase.bytes);
          break;
        case 'abort':
          socket.write(fuzzCase.bytes, () => finish(true));
          break;
        case 'never-terminated':
          socket.write(fuzzCase.bytes);
          break;
      }
    });
  });
}

async function openFileDescriptors(): Promise<number> {
  return (await readdir('/proc/self/fd')).length;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}

describe.runIf(process.platform === 'linux')('control server under malformed traffic', () => {
  it('survives 10,000 malformed requests and 200 idle connections, then answers identify with no leaked descriptors', async () => {
    const home = await tempHome();
    const started = await startControlServer({ home: home.path, readTimeoutMs: READ_TIMEOUT_MS });
    if (!started.started) throw started.error;
    const server = started.server;
    try {
      expect(await identifyGateway(home.path)).not.toBeNull();
      const baseline = await openFileDescriptors();
      const random = seededRandom(20_261_202);
      const replies: string[] = [];
      let notClosedByServer = 0;
      const lingering: Promise<FuzzOutcome>[] = [];
      for (let first = 0; first < MALFORMED_REQUESTS; first += BATCH_SIZE) {
        const cases = Array.from({ length: BATCH_SIZE }, (_, offset) =>
          makeCase(first + offset, random),
        );
        // Unterminated lines wait for the server's read deadline; they run alongside the next
        // batches instead of stalling each batch for that long.
        for (const item of cases.filter((entry) => entry.ending === 'never-terminated')) {
          lingering.push(sendCase(server.bindPath, item));
        }
        const prompt = cases.filter((entry) => entry.ending !== 'never-terminated');
        const outcomes = await Promise.all(prompt.map((item) => sendCase(server.bindPath, item)));
        for (const outcome of outcomes) {
          if (!outcome.closedByServer) notClosedByServer += 1;
          if (outcome.received !== '') replies.push(outcome.received);
        }
      }
      for (const outcome of await Promise.all(lingering)) {
        if (!outcome.closedByServer) notClosedByServer += 1;
        if (outcome.received !== '') replies.push(outcome.received);
      }
      expect(lingering.length).toBeGreaterThan(0);
      expect(notClosedByServer).toBe(0);
      expect(replies.length).toBeGreaterThan(MALFORMED_REQUESTS / 4);
      for (const reply of replies) {
        expect(reply.endsWith('\n')).toBe(true);
        expect(v.is(ControlErrorReplySchema, JSON.parse(reply))).toBe(true);
      }

      const idle = await Promise.all(
        Array.from({ length: IDLE_CONNECTIONS }, () =>
          sendCase(server.bindPath, { bytes: Buffer.alloc(0), ending: 'never-terminated' }),
        ),
      );
      expect(idle.every((outcome) => outcome.closedByServer && outcome.received === '')).toBe(true);

      const identity = await identifyGateway(home.path, { timeoutMs: 2000 });
      expect(identity?.pid).toBe(process.pid);
      expect(await waitFor(async () => server.openConnections === 0, 2000)).toBe(true);
      expect(await waitFor(async () => (await openFileDescriptors()) <= baseline, 2000)).toBe(true);
    } finally {
      await server.close();
    }
  }, 60_000);
});
