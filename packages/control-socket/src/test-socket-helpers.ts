import { chmod } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { SOCKET_FILE_NAME } from './constants.js';

export interface RawExchange {
  /** Everything the server sent before closing. */
  readonly received: string;
  /** True when the server closed the connection (false: we gave up at the deadline). */
  readonly closedByServer: boolean;
}

export interface RawExchangeOptions {
  /** Written in order, each as its own write. */
  readonly chunks: readonly (string | Uint8Array)[];
  /** Half-close after writing (default false). */
  readonly endAfterWrite?: boolean;
  readonly deadlineMs?: number;
}

/** Test helper: talks to a socket byte by byte, as a misbehaving client would. */
export function rawExchange(socketPath: string, options: RawExchangeOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const received: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(received).toString('utf8'), closedByServer });
    };
    const timer = setTimeout(() => finish(false), options.deadlineMs ?? 5000);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.once('connect', async () => {
      for (const chunk of options.chunks) {
        socket.write(chunk);
        await new Promise((next) => setTimeout(next, 5));
      }
      if (options.endAfterWrite) socket.end();
    });
  });
}

/** A private socket in `home` whose server answers every connection with `respond`. */
export async function misbehavingServer(home: string, respond: (socket: net.Socket) => void) {
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
