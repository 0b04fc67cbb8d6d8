import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BrowserControlBroker } from '../broker.js';
import {
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  FRAME_HEARTBEAT,
  MAX_CONTROLLER_FRAME_BYTES,
} from '../constants.js';
import { type LoopbackGateway, startLoopbackGateway } from '../testing/loopback-gateway.js';

const API_KEY = 'test-api-key-0123456789';
const SESSION = 'session-limits';

let gateway: LoopbackGateway | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await gateway?.close();
  gateway = undefined;
});

async function start(): Promise<LoopbackGateway> {
  const flags = () => ({ enabled: true, developerMode: false });
  gateway = await startLoopbackGateway({
    broker: new BrowserControlBroker({ flags }),
    flags,
    apiKey: API_KEY,
    sessions: new Set([SESSION]),
  });
  return gateway;
}

async function registerTicket(server: LoopbackGateway): Promise<string> {
  const response = await fetch(`${server.baseUrl}${BROWSER_CONTROL_REGISTER_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      protocol_version: 1,
      session_id: SESSION,
      controller_id: 'ext-limits',
      browser_profile_id: 'chrome-default',
      capabilities: ['controller.noop'],
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { ticket: string }).ticket;
}

const ticketProtocols = (ticket: string) => [
  BROWSER_CONTROL_SUBPROTOCOL,
  `${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${ticket}`,
];

function openSocket(server: LoopbackGateway, ticket: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(
      `${server.wsUrl}${BROWSER_CONTROL_WS_PATH}`,
      ticketProtocols(ticket),
    );
    sockets.push(socket);
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`status ${response.statusCode}`));
      response.resume();
    });
    socket.once('error', reject);
  });
}

/** Sends a heartbeat frame (optionally padded to `totalBytes`) and waits for its echo. */
function heartbeat(socket: WebSocket, nonce: string, totalBytes?: number): Promise<void> {
  const frame = { method: FRAME_HEARTBEAT, params: { nonce, pad: '' } };
  if (totalBytes !== undefined) {
    frame.params.pad = 'x'.repeat(totalBytes - Buffer.byteLength(JSON.stringify(frame)));
  }
  const text = JSON.stringify(frame);
  if (totalBytes !== undefined) expect(Buffer.byteLength(text)).toBe(totalBytes);
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const reply = JSON.parse(data.toString()) as { params?: { nonce?: string } };
      if (reply.params?.nonce !== nonce) return;
      socket.off('message', onMessage);
      resolve();
    };
    socket.on('message', onMessage);
    socket.once('close', (code) => reject(new Error(`closed with ${code}`)));
    socket.send(text);
  });
}

/** A raw upgrade request; resolves with the HTTP status the server answered instead of 101. */
function rawUpgrade(
  server: LoopbackGateway,
  options: { method?: string; headers: Record<string, string> },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${server.baseUrl}${BROWSER_CONTROL_WS_PATH}`, {
      method: options.method ?? 'GET',
      headers: { connection: 'Upgrade', upgrade: 'websocket', ...options.headers },
    });
    outgoing.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    outgoing.once('upgrade', (_response, socket) => {
      socket.destroy();
      reject(new Error('unexpectedly upgraded'));
    });
    outgoing.once('error', reject);
    outgoing.end();
  });
}

describe('controller socket handshake', () => {
  it('leaves the ticket usable when ws refuses the handshake itself', async () => {
    const server = await start();
    const ticket = await registerTicket(server);
    const good = {
      'sec-websocket-protocol': ticketProtocols(ticket).join(', '),
      'sec-websocket-version': '13',
      'sec-websocket-key': Buffer.alloc(16, 7).toString('base64'),
    };
    expect(await rawUpgrade(server, { headers: { ...good, 'sec-websocket-version': '12' } })).toBe(
      400,
    );
    const { 'sec-websocket-key': _key, ...withoutKey } = good;
    expect(await rawUpgrade(server, { headers: withoutKey })).toBe(400);
    expect(await rawUpgrade(server, { method: 'POST', headers: good })).toBe(405);
    // None of the refused handshakes consumed the ticket: it still opens the controller socket.
    const socket = await openSocket(server, ticket);
    await heartbeat(socket, 'after-refusals');
    // …once: a ticket is still single-use.
    await expect(openSocket(server, ticket)).rejects.toThrow('status 401');
  });
});

describe('controller socket frame size', () => {
  it('accepts a frame of exactly the protocol limit and closes the socket with 1009 past it', async () => {
    const server = await start();
    const socket = await openSocket(server, await registerTicket(server));
    await heartbeat(socket, 'small');
    await heartbeat(socket, 'at-limit', MAX_CONTROLLER_FRAME_BYTES);
    // Past the limit: the socket closes with 1009 and nothing after the frame is answered.
    const outcome = new Promise<string>((resolve) => {
      socket.once('close', (code) => resolve(`closed ${code}`));
      socket.on('message', (data) => {
        if (data.toString().includes('after-over')) resolve('answered after the oversized frame');
      });
    });
    const over = {
      method: FRAME_HEARTBEAT,
      params: { nonce: 'over', pad: 'x'.repeat(MAX_CONTROLLER_FRAME_BYTES) },
    };
    socket.send(JSON.stringify(over));
    socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'after-over' } }));
    expect(await outcome).toBe('closed 1009');
  });
});
