import { execFileSync } from 'node:child_process';
import { chmod, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  MAX_RESPONSE_LINE_BYTES,
  SOCKET_FILE_NAME,
  SOCKET_POINTER_FILE_NAME,
} from './constants.js';
import { identifyGateway, queryControlSocket, queryGatewayStatus } from './control-client.js';
import type { RejectedSocket } from './socket-path.js';
import { misbehavingServer } from './test-socket-helpers.js';

function replyWith(line: string) {
  return (socket: net.Socket) => socket.once('data', () => socket.end(line));
}

describe('queryControlSocket', () => {
  it('returns null at once when the home has no socket', async () => {
    const home = await tempHome();
    const started = performance.now();
    expect(await queryControlSocket(home.path, 'identify', { timeoutMs: 5000 })).toBeNull();
    expect(await identifyGateway(home.path)).toBeNull();
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('refuses a home that is not an absolute path instead of resolving it against the cwd', async () => {
    const home = await tempHome();
    await misbehavingServer(
      home.path,
      replyWith('{"ok":true,"protocol":1,"result":{"pid":1},"id":1}\n'),
    );
    // The absolute home answers, so the relative spelling of the same folder would too.
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ pid: 1 });
    const relativeHome = path.relative(process.cwd(), home.path);
    expect(path.isAbsolute(relativeHome)).toBe(false);
    expect(await queryControlSocket(relativeHome, 'identify')).toBeNull();
    expect(await queryControlSocket('', 'identify')).toBeNull();
  });

  it('returns null quickly for a socket file left by a crashed gateway', async () => {
    const home = await tempHome();
    const socketPath = path.join(home.path, SOCKET_FILE_NAME);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    await chmod(socketPath, 0o600);
    await rename(socketPath, `${socketPath}.aside`);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rename(`${socketPath}.aside`, socketPath);
    const started = performance.now();
    expect(await queryControlSocket(home.path, 'identify', { timeoutMs: 5000 })).toBeNull();
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('returns null for a pointer file that points nowhere', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, SOCKET_POINTER_FILE_NAME), '/tmp/hermes-gw-gone.sock\n');
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
  });

  it('gives up at its deadline when the server accepts but never answers', async () => {
    const home = await tempHome();
    await misbehavingServer(home.path, () => {});
    const started = performance.now();
    expect(await queryControlSocket(home.path, 'identify', { timeoutMs: 200 })).toBeNull();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(3000);
  });

  it('returns null for garbage, ok false, and results that are not objects', async () => {
    for (const line of [
      'garbage\n',
      '{"ok":false,"error":"unknown verb: \'identify\'","protocol":1}\n',
      '{"ok":true,"protocol":1,"result":[1,2]}\n',
      '{"ok":true,"protocol":1,"result":"text"}\n',
      '{"ok":true,"protocol":1}\n',
      '{"ok":true,"protocol":2,"result":{"pid":1}}\n',
      '{"ok":"true","protocol":1,"result":{"pid":1}}\n',
      '{"protocol":1,"result":{"pid":1}}\n',
      '[{"ok":true,"protocol":1,"result":{"pid":1}}]\n',
    ]) {
      const home = await tempHome();
      await misbehavingServer(home.path, replyWith(line));
      expect(await queryControlSocket(home.path, 'identify')).toBeNull();
    }
  });

  it('reassembles a reply that arrives in pieces, even one split inside a character', async () => {
    const home = await tempHome();
    const line = Buffer.from('{"ok":true,"protocol":1,"result":{"name":"Zoë"}}\n');
    const split = line.indexOf('ë') + 1;
    await misbehavingServer(home.path, (socket) =>
      socket.once('data', () => {
        socket.write(line.subarray(0, split));
        setTimeout(() => socket.end(line.subarray(split)), 20);
      }),
    );
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ name: 'Zoë' });
  });

  it('returns null for a reply longer than 512 KiB instead of buffering it', async () => {
    const home = await tempHome();
    const blob = 'x'.repeat(MAX_RESPONSE_LINE_BYTES + 10);
    await misbehavingServer(
      home.path,
      replyWith(`{"ok":true,"protocol":1,"result":{"blob":"${blob}"}}\n`),
    );
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
  });

  it('returns the result of a well-formed reply and validates identify and status shapes', async () => {
    const home = await tempHome();
    await misbehavingServer(
      home.path,
      replyWith('{"ok":true,"protocol":1,"result":{"pid":"not a number"},"id":1}\n'),
    );
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ pid: 'not a number' });
    expect(await identifyGateway(home.path)).toBeNull();
    expect(await queryGatewayStatus(home.path)).toBeNull();
  });

  it('never connects to a socket that group or others may use, so no payload reaches it', async () => {
    const home = await tempHome();
    let receivedBytes = 0;
    let connections = 0;
    const socketPath = await misbehavingServer(home.path, (socket) => {
      connections += 1;
      socket.on('data', (chunk: Buffer) => {
        receivedBytes += chunk.byteLength;
        socket.end('{"ok":true,"protocol":1,"result":{"pid":1}}\n');
      });
    });
    await chmod(socketPath, 0o666);
    const rejected: RejectedSocket[] = [];
    const onRejected = (item: RejectedSocket) => rejected.push(item);
    expect(await queryControlSocket(home.path, 'identify', { onRejected })).toBeNull();
    expect(
      await queryControlSocket(home.path, 'send', { payload: { text: 'secret' }, onRejected }),
    ).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections).toBe(0);
    expect(receivedBytes).toBe(0);
    expect(rejected.map((item) => item.reason)).toEqual([
      `Ignoring control socket ${socketPath}: mode 666 allows group/other access`,
      `Ignoring control socket ${socketPath}: mode 666 allows group/other access`,
    ]);
    await chmod(socketPath, 0o600);
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ pid: 1 });
    expect(connections).toBe(1);
  });

  it('falls through an untrusted direct socket to the pointer file and checks its target too', async () => {
    const home = await tempHome();
    const elsewhere = await tempHome();
    const direct = await misbehavingServer(
      home.path,
      replyWith('{"ok":true,"protocol":1,"result":{"from":"direct"}}\n'),
    );
    await chmod(direct, 0o660);
    const target = await misbehavingServer(
      elsewhere.path,
      replyWith('{"ok":true,"protocol":1,"result":{"from":"pointer"}}\n'),
    );
    await writeFile(path.join(home.path, SOCKET_POINTER_FILE_NAME), `${target}\n`);
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ from: 'pointer' });
    await chmod(target, 0o606);
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
  });

  it('keeps its deadline while the pointer file cannot be read', async () => {
    const home = await tempHome();
    // Reading a FIFO that no one writes blocks, as a read on a stalled file system would.
    const pointer = path.join(home.path, SOCKET_POINTER_FILE_NAME);
    execFileSync('mkfifo', [pointer]);
    // Opening the write end releases the thread-pool thread still blocked on the read.
    onTestFinished(() => writeFile(pointer, ''));
    const started = performance.now();
    expect(await queryControlSocket(home.path, 'identify', { timeoutMs: 200 })).toBeNull();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(3000);
  });

  it('never throws, whatever the home', async () => {
    expect(await queryControlSocket('\0bad', 'identify')).toBeNull();
    expect(await queryControlSocket('', 'identify', { timeoutMs: 100 })).toBeNull();
  });
});
