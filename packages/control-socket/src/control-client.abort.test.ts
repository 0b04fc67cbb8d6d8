import { createHook } from 'node:async_hooks';
import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SOCKET_POINTER_FILE_NAME } from './constants.js';
import { identifyGateway, queryControlSocket } from './control-client.js';
import { misbehavingServer } from './test-socket-helpers.js';

/**
 * A private socket in `home` whose server accepts connections and never answers. `accepted`
 * resolves with the server side of the n-th connection (0-based).
 */
async function silentServer(home: string) {
  const sockets: net.Socket[] = [];
  const waiters: Array<(socket: net.Socket) => void> = [];
  const socketPath = await misbehavingServer(home, (socket) => {
    sockets.push(socket);
    for (const waiter of waiters.splice(0)) waiter(socket);
  });
  return {
    socketPath,
    get connections() {
      return sockets.length;
    },
    accepted(index: number): Promise<net.Socket> {
      return new Promise((resolve) => {
        const check = () => {
          const socket = sockets[index];
          if (socket !== undefined) resolve(socket);
          else waiters.push(check);
        };
        check();
      });
    },
  };
}

function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.closed) resolve();
    else socket.once('close', () => resolve());
  });
}

/**
 * Runs `start` and records the async resources it creates synchronously (the query's deadline
 * timer, its socket and connect request: everything before its first await). `released()`
 * resolves once every one of them has been destroyed — a timer cleared, a handle closed.
 */
function trackResources<T>(start: () => T): { value: T; released: () => Promise<void> } {
  const alive = new Map<number, string>();
  let onChange = () => {};
  let collecting = true;
  const hook = createHook({
    init(asyncId, type) {
      if (collecting && type !== 'PROMISE') alive.set(asyncId, type);
    },
    destroy(asyncId) {
      if (alive.delete(asyncId)) onChange();
    },
  }).enable();
  onTestFinished(() => {
    hook.disable();
  });
  let value: T;
  try {
    value = start();
  } finally {
    collecting = false;
  }
  return {
    value,
    released: () =>
      new Promise<void>((resolve) => {
        onChange = () => {
          if (alive.size === 0) resolve();
        };
        onChange();
      }),
  };
}

describe('queryControlSocket with an AbortSignal', () => {
  it('rejects with an AbortError as soon as its signal aborts, drops the connection and leaves no timer or listener', async () => {
    const home = await tempHome();
    const server = await silentServer(home.path);
    const controller = new AbortController();
    // A deadline far off, so that nothing but the abort can settle the query or release its
    // timer within the test's time.
    const { value: query, released } = trackResources(() =>
      queryControlSocket(home.path, 'identify', { timeoutMs: 60_000, signal: controller.signal }),
    );
    const outcome = query.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    const serverSide = await server.accepted(0);
    const abortedAt = performance.now();
    controller.abort();
    const settled = await outcome;
    expect(settled).toEqual({ error: controller.signal.reason });
    expect(controller.signal.reason).toMatchObject({ name: 'AbortError' });
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    // The server sees the client go; the client's socket, connect request and timer are gone.
    await closed(serverSide);
    await released();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the reason the caller aborted with, through identifyGateway too', async () => {
    const home = await tempHome();
    const server = await silentServer(home.path);
    const controller = new AbortController();
    const query = identifyGateway(home.path, { signal: controller.signal });
    await server.accepted(0);
    const reason = new Error('gateway shutting down');
    controller.abort(reason);
    await expect(query).rejects.toBe(reason);
  });

  it('rejects an already-aborted signal without connecting', async () => {
    const home = await tempHome();
    const server = await silentServer(home.path);
    const reason = new Error('already stopped');
    await expect(
      queryControlSocket(home.path, 'identify', { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    // The server accepts in arrival order: once a later connection is accepted, an earlier one
    // would have been too.
    const sentinel = net.connect(server.socketPath);
    onTestFinished(() => {
      sentinel.destroy();
    });
    await server.accepted(0);
    expect(server.connections).toBe(1);
  });

  it('keeps its timeout and removes its listener when the signal never aborts', async () => {
    const home = await tempHome();
    await silentServer(home.path);
    const controller = new AbortController();
    const started = performance.now();
    expect(
      await queryControlSocket(home.path, 'identify', {
        timeoutMs: 200,
        signal: controller.signal,
      }),
    ).toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    // And through a pointer file (which points nowhere).
    const pointed = await tempHome();
    await writeFile(
      path.join(pointed.path, SOCKET_POINTER_FILE_NAME),
      '/tmp/hermes-gw-gone.sock\n',
    );
    expect(
      await queryControlSocket(pointed.path, 'identify', { signal: controller.signal }),
    ).toBeNull();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // Aborting after the query settled changes nothing (no late rejection, nothing to drop).
    controller.abort();
  });

  it('rejects at once while it waits on a pointer file that cannot be read', async () => {
    const home = await tempHome();
    // Reading a FIFO that no one writes blocks, as a read on a stalled file system would.
    const pointer = path.join(home.path, SOCKET_POINTER_FILE_NAME);
    execFileSync('mkfifo', [pointer]);
    // Opening the write end releases the thread-pool thread still blocked on the read.
    onTestFinished(() => writeFile(pointer, ''));
    const controller = new AbortController();
    const query = queryControlSocket(home.path, 'identify', { signal: controller.signal });
    const abortedAt = performance.now();
    controller.abort();
    await expect(query).rejects.toBe(controller.signal.reason);
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
