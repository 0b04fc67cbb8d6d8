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

/** A private socket in `home` whose server answers every connection with `respond`. */
async function misbehavingServer(home: string, respond: (socket: net.Socket) => void) {
  const socketPath = path.join(home, SOCKET_FILE_NAME);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    respond(socket);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, 0o600);
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return socketPath;
}

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
    ]) {
      const home = await tempHome();
      await misbehavingServer(home.path, replyWith(line));
      expect(await queryControlSocket(home.path, 'identify')).toBeNull();
    }
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

  it('never accepts an answer from, nor sends a payload to, a socket that group or others may use', async () => {
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
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    receivedBytes = 0;
    expect(await queryControlSocket(home.path, 'send', { payload: { text: 'secret' } })).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receivedBytes).toBe(0);
    await chmod(socketPath, 0o600);
    expect(await queryControlSocket(home.path, 'identify')).toEqual({ pid: 1 });
    expect(connections).toBeGreaterThanOrEqual(2);
  });

  it('never throws, whatever the home', async () => {
    expect(await queryControlSocket('\0bad', 'identify')).toBeNull();
    expect(await queryControlSocket('', 'identify', { timeoutMs: 100 })).toBeNull();
  });
});
