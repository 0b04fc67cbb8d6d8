/**
 * A controller that floods heartbeats and never reads, in its own process (so that its work does
 * not load the process measuring the server). Usage:
 * `node --import tsx non-reading-flooder.ts <base URL> <ticket> <heartbeats> <unread ms>`.
 *
 * It upgrades with the ticket, waits for the echo of one heartbeat (so it is attached), prints
 * `attached` and stops reading. On SIGUSR2 it writes every heartbeat and disconnects (its FIN
 * follows the last frame); after `<unread ms>` it reads what the server sent until the server
 * closes, and prints `outcome {"echoes":…,"closeCode":…}`: the flood heartbeats the server
 * answered, and the code of the server's close frame, if it sent one.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import {
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  FRAME_HEARTBEAT,
} from '../../constants.js';

const [baseUrl = '', ticket = '', heartbeats = '0', unreadMilliseconds = '0'] =
  process.argv.slice(2);

/** A masked client text frame (the mask key is zero, so the payload goes out as it is). */
function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length >= 126) throw new Error('flood frames stay under 126 bytes');
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}

const heartbeat = (nonce: string) =>
  clientTextFrame(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce } }));

const flood = Buffer.concat(
  Array.from({ length: Number(heartbeats) }, (_, index) => heartbeat(`flood-${index}`)),
);

const { hostname, port } = new URL(baseUrl);
const socket = connect({ host: hostname, port: Number(port) });
await new Promise<void>((resolve, reject) => {
  socket.once('connect', resolve);
  socket.once('error', reject);
});
socket.write(
  [
    `GET ${BROWSER_CONTROL_WS_PATH} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    `Sec-WebSocket-Protocol: ${BROWSER_CONTROL_SUBPROTOCOL}, ${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${ticket}`,
    '',
    '',
  ].join('\r\n'),
);
await new Promise<void>((resolve, reject) => {
  let received = '';
  let probed = false;
  const onData = (chunk: Buffer) => {
    received += chunk.toString('latin1');
    if (!received.startsWith('HTTP/1.1 101')) {
      if (received.includes('\r\n')) reject(new Error(`upgrade refused: ${received}`));
      return;
    }
    if (received.includes('"nonce":"attached"')) {
      socket.off('data', onData);
      socket.pause();
      resolve();
    } else if (received.includes('\r\n\r\n') && !probed) {
      probed = true;
      socket.write(heartbeat('attached'));
    }
  };
  socket.on('data', onData);
  socket.once('error', reject);
});
process.stdout.write('attached\n');

await new Promise<void>((resolve) => process.once('SIGUSR2', () => resolve()));
socket.end(flood);
await new Promise((resolve) => setTimeout(resolve, Number(unreadMilliseconds)));

let pending: Buffer = Buffer.alloc(0);
let echoes = 0;
let closeCode: number | null = null;
await new Promise<void>((resolve) => {
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let offset = 0;
    while (pending.length - offset >= 2) {
      const opcode = (pending[offset] ?? 0) & 0x0f;
      let length = (pending[offset + 1] ?? 0) & 0x7f;
      let header = 2;
      if (length === 126) {
        if (pending.length - offset < 4) break;
        length = pending.readUInt16BE(offset + 2);
        header = 4;
      } else if (length === 127) {
        if (pending.length - offset < 10) break;
        length = Number(pending.readBigUInt64BE(offset + 2));
        header = 10;
      }
      if (pending.length - offset < header + length) break;
      const payload = pending.subarray(offset + header, offset + header + length);
      offset += header + length;
      if (opcode === 0x8 && payload.length >= 2) closeCode = payload.readUInt16BE(0);
      if (opcode === 0x1 && payload.includes('"nonce":"flood-')) echoes += 1;
    }
    pending = pending.subarray(offset);
  });
  socket.once('close', () => resolve());
  socket.once('error', () => resolve());
  socket.resume();
});
process.stdout.write(`outcome ${JSON.stringify({ echoes, closeCode })}\n`);
