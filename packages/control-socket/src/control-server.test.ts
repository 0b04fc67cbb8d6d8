import { statSync } from 'node:fs';
import { access, chmod, mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getProcessHermesHome } from '@hermes/config';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  CONTROL_PROTOCOL_VERSION,
  DEFAULT_CONTROL_TIMEOUT_MS,
  MAX_REQUEST_LINE_BYTES,
  SERVER_LISTENING_LOG,
  SERVER_START_FAILED_LOG,
  SOCKET_FILE_NAME,
  SOCKET_POINTER_FILE_NAME,
} from './constants.js';
import { identifyGateway, queryControlSocket } from './control-client.js';
import { type ControlServerOptions, startControlServer } from './control-server.js';
import { ControlSocketError } from './errors.js';
import { canonicalHomePath, homeHash } from './home-hash.js';
import type { ControlSocketLogger } from './logger.js';
import { pidFilePath } from './pid-file.js';
import { runtimeLockPath } from './runtime-lock.js';
import { writeRuntimeStatus } from './runtime-status.js';
import { SUPERVISOR_KINDS } from './supervisor.js';
import { rawExchange } from './test-socket-helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function startServer(options: ControlServerOptions) {
  const started = await startControlServer(options);
  if (!started.started) throw started.error;
  onTestFinished(() => started.server.close());
  return started.server;
}

/**
 * Leaves a socket node at `socketPath` that nobody listens on, as a crashed process would. libuv
 * unlinks a socket when its server closes, so the node is moved aside while the server closes.
 */
async function leaveDeadSocket(socketPath: string): Promise<void> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, 0o600);
  const aside = `${socketPath}.aside`;
  await rename(socketPath, aside);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rename(aside, socketPath);
}

async function fileExists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

interface TrickleOutcome {
  readonly received: string;
  /** Milliseconds from connect until the server closed the connection (null: it never did). */
  readonly closedAfterMs: number | null;
}

/**
 * A slow client: sends `text` one byte every `intervalMs` and reports when the server closed the
 * connection. Gives up (closedAfterMs null) after `giveUpMs`.
 */
function trickle(
  socketPath: string,
  text: string,
  options: { readonly intervalMs: number; readonly giveUpMs: number },
): Promise<TrickleOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const received: Buffer[] = [];
    let connectedAt = performance.now();
    let sent = 0;
    let ticker: NodeJS.Timeout | undefined;
    const finish = (closedByServer: boolean) => {
      clearInterval(ticker);
      clearTimeout(giveUp);
      const closedAfterMs = closedByServer ? performance.now() - connectedAt : null;
      socket.destroy();
      resolve({ received: Buffer.concat(received).toString('utf8'), closedAfterMs });
    };
    const giveUp = setTimeout(() => finish(false), options.giveUpMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.once('close', () => finish(true));
    socket.on('error', () => {});
    socket.once('connect', () => {
      connectedAt = performance.now();
      ticker = setInterval(() => {
        if (sent < text.length && socket.writable) socket.write(text[sent++] as string);
      }, options.intervalMs);
    });
  });
}

/** Resolves once `condition` holds, polling; rejects after `withinMs`. */
async function eventually(condition: () => boolean, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not true within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function recordingLogger() {
  const lines: string[] = [];
  const logger: ControlSocketLogger = {
    info: (message) => lines.push(`info ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    debug: (message) => lines.push(`debug ${message}`),
  };
  return { lines, logger };
}

describe('startControlServer', () => {
  it('is already mode 0600 the moment it starts listening', async () => {
    const home = await tempHome();
    let modeAtListening = -1;
    const server = await startServer({
      home: home.path,
      onListening: (bindPath) => {
        modeAtListening = statSync(bindPath).mode & 0o777;
      },
    });
    expect(modeAtListening).toBe(0o600);
    expect(statSync(server.bindPath).mode & 0o777).toBe(0o600);
    expect(server.bindPath).toBe(path.join(home.path, SOCKET_FILE_NAME));
  });

  it('leaves the process umask as it found it', async () => {
    const home = await tempHome();
    const before = process.umask();
    await startServer({ home: home.path });
    expect(process.umask()).toBe(before);
  });

  it('returns the handlers’ objects verbatim for identify and status over a real socket', async () => {
    const home = await tempHome();
    const identity = { pid: 4242, kind: 'hermes-gateway', nested: { a: [1, 'two'] } };
    const status = { gateway_state: 'running', active_agents: 3 };
    const { lines, logger } = recordingLogger();
    const server = await startServer({
      home: home.path,
      logger,
      handlers: { identify: () => identity, status: async () => status },
    });
    expect(await queryControlSocket(home.path, 'identify')).toEqual(identity);
    expect(await queryControlSocket(home.path, 'status')).toEqual(status);
    expect(lines).toContain(`info ${SERVER_LISTENING_LOG}${server.bindPath}`);
  });

  it('answers verbs the gateway registers after start', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    expect(await queryControlSocket(home.path, 'pause-for-update')).toBeNull();
    server.registry.register('pause-for-update', () => ({ pausing: true, pid: process.pid }));
    expect(await queryControlSocket(home.path, 'pause-for-update')).toEqual({
      pausing: true,
      pid: process.pid,
    });
  });

  it('gives payload to handlers that read it', async () => {
    const home = await tempHome();
    await startServer({ home: home.path, handlers: { echo: (request) => request.payload } });
    expect(await queryControlSocket(home.path, 'echo', { payload: { x: 1 } })).toEqual({ x: 1 });
  });

  it('answers a raw garbage line with ok false and protocol 1', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    const exchange = await rawExchange(server.bindPath, { chunks: ['this is not json\n'] });
    expect(exchange.closedByServer).toBe(true);
    const body = JSON.parse(exchange.received) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: false, protocol: CONTROL_PROTOCOL_VERSION });
    expect(String(body.error)).toMatch(/^SyntaxError: /);
  });

  it('reassembles a fragmented request line and answers only the first line', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path, handlers: { ping: () => ({ pong: 1 }) } });
    const exchange = await rawExchange(server.bindPath, {
      chunks: ['{"ve', 'rb":"pi', 'ng","id":1}\n{"verb":"ping","id":2}\n'],
    });
    expect(exchange.received.trimEnd().split('\n')).toEqual([
      JSON.stringify({ ok: true, protocol: 1, result: { pong: 1 }, id: 1 }),
    ]);
  });

  it('closes the connection as soon as its one reply is written, without waiting for the client', async () => {
    const home = await tempHome();
    // A read deadline far beyond the exchange's own, so only reply-then-close can end it in time.
    const server = await startServer({ home: home.path, readTimeoutMs: 60_000 });
    const exchange = await rawExchange(server.bindPath, {
      chunks: ['{"verb":"identify","id":5}\n'],
      deadlineMs: 5000,
    });
    expect(exchange.closedByServer).toBe(true);
    expect(exchange.received.endsWith('\n')).toBe(true);
    expect(exchange.received.split('\n')).toHaveLength(2);
    expect(JSON.parse(exchange.received)).toMatchObject({ ok: true, protocol: 1, id: 5 });
  });

  it('answers an unterminated line when the client half-closes', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path, handlers: { ping: () => ({ pong: 1 }) } });
    const exchange = await rawExchange(server.bindPath, {
      chunks: ['{"verb":"ping"}'],
      endAfterWrite: true,
    });
    expect(JSON.parse(exchange.received)).toEqual({ ok: true, protocol: 1, result: { pong: 1 } });
  });

  it('closes without a reply on an empty line, an oversize line, or an idle client', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path, readTimeoutMs: 150 });
    const empty = await rawExchange(server.bindPath, { chunks: ['\n'] });
    const oversize = await rawExchange(server.bindPath, {
      chunks: ['x'.repeat(MAX_REQUEST_LINE_BYTES + 1)],
    });
    const idle = await rawExchange(server.bindPath, { chunks: [] });
    for (const exchange of [empty, oversize, idle]) {
      expect(exchange).toEqual({ received: '', closedByServer: true });
    }
  });

  it('cuts a client trickling one byte every 400 ms at the read deadline, counted from accept', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    // 20 bytes at 400 ms each would complete the line after 8 s; an idle timeout never fires.
    const outcome = await trickle(server.bindPath, '{"verb":"identify"}\n', {
      intervalMs: 400,
      giveUpMs: 12_000,
    });
    expect(outcome.received).toBe('');
    expect(outcome.closedAfterMs).not.toBeNull();
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(DEFAULT_CONTROL_TIMEOUT_MS - 50);
    expect(outcome.closedAfterMs).toBeLessThan(DEFAULT_CONTROL_TIMEOUT_MS + 2500);
  }, 20_000);

  it('holds no descriptor of 200 slow clients past the read deadline', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    const clients = Array.from({ length: 200 }, () =>
      trickle(server.bindPath, '{"verb":"identify"}\n', { intervalMs: 400, giveUpMs: 12_000 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(server.openConnections).toBe(200);
    const outcomes = await Promise.all(clients);
    expect(outcomes.filter((outcome) => outcome.received !== '')).toEqual([]);
    const closedAfter = outcomes.map(
      (outcome) => outcome.closedAfterMs ?? Number.POSITIVE_INFINITY,
    );
    expect(Math.max(...closedAfter)).toBeLessThan(DEFAULT_CONTROL_TIMEOUT_MS + 2500);
    // The server's own close events follow the destroy that the clients just saw.
    await eventually(() => server.openConnections === 0, 500);
    expect(await identifyGateway(home.path)).toMatchObject({ pid: process.pid });
  }, 20_000);

  it('answers a handler that never settles with a timeout error at its deadline and frees the connection', async () => {
    const home = await tempHome();
    let aborted: unknown = null;
    const server = await startServer({
      home: home.path,
      handlerTimeoutMs: 300,
      handlers: {
        stuck: (_request, context) => {
          context?.signal.addEventListener('abort', () => {
            aborted = context.signal.reason;
          });
          return new Promise(() => {});
        },
      },
    });
    const started = performance.now();
    const exchange = await rawExchange(server.bindPath, {
      chunks: ['{"verb":"stuck","id":9}\n'],
      deadlineMs: 5000,
    });
    expect(exchange.closedByServer).toBe(true);
    expect(JSON.parse(exchange.received)).toEqual({
      ok: false,
      error: "TimeoutError: verb 'stuck' did not answer within 300 ms",
      protocol: 1,
      id: 9,
    });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(aborted).toMatchObject({ name: 'TimeoutError' });
    await eventually(() => server.openConnections === 0, 500);
  });

  it('tells a running handler when the server closes under it', async () => {
    const home = await tempHome();
    let signalled!: () => void;
    const abortSeen = new Promise<void>((resolve) => {
      signalled = resolve;
    });
    const server = await startServer({
      home: home.path,
      handlers: {
        wait: (_request, context) => {
          context?.signal.addEventListener('abort', () => signalled());
          return new Promise(() => {});
        },
      },
    });
    const exchange = rawExchange(server.bindPath, { chunks: ['{"verb":"wait"}\n'] });
    await eventually(() => server.openConnections === 1, 2000);
    await server.close();
    await abortSeen;
    expect(await exchange).toEqual({ received: '', closedByServer: true });
  });

  it('answers a request line of exactly 64 KiB', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path, handlers: { ping: () => ({ pong: 1 }) } });
    const frame = '{"verb":"ping","id":1,"pad":""}';
    const line = frame.replace(
      '"pad":""',
      `"pad":"${'p'.repeat(MAX_REQUEST_LINE_BYTES - frame.length)}"`,
    );
    expect(Buffer.byteLength(line)).toBe(MAX_REQUEST_LINE_BYTES);
    const exchange = await rawExchange(server.bindPath, { chunks: [`${line}\n`] });
    expect(JSON.parse(exchange.received)).toEqual({
      ok: true,
      protocol: 1,
      result: { pong: 1 },
      id: 1,
    });
  });

  it('keeps answering identify while a slow verb is still running', async () => {
    const home = await tempHome();
    let releaseSlow = () => {};
    const slowGate = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    await startServer({
      home: home.path,
      handlers: {
        slow: async () => {
          await slowGate;
          return { done: true };
        },
      },
    });
    const slow = queryControlSocket(home.path, 'slow', { timeoutMs: 5000 });
    expect(await identifyGateway(home.path)).not.toBeNull();
    releaseSlow();
    expect(await slow).toEqual({ done: true });
  });

  it('removes its socket on close, after which queries return null', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    await server.close();
    expect(await fileExists(server.bindPath)).toBe(false);
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
    expect(server.openConnections).toBe(0);
  });

  it('removes private socket names a crashed start left in the home, older than a minute only', async () => {
    const home = await tempHome();
    const stale = path.join(home.path, '.gw-0badc0de');
    const fresh = path.join(home.path, '.gw-0ddba11a');
    const notOurs = path.join(home.path, '.gw-notours1');
    await leaveDeadSocket(stale);
    await leaveDeadSocket(fresh);
    await leaveDeadSocket(notOurs);
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(stale, twoMinutesAgo, twoMinutesAgo);
    await utimes(notOurs, twoMinutesAgo, twoMinutesAgo);
    const server = await startServer({ home: home.path });
    expect(await fileExists(stale)).toBe(false);
    // A start under way in another process may be between its bind and link right now.
    expect(await fileExists(fresh)).toBe(true);
    expect(await fileExists(notOurs)).toBe(true);
    expect(await identifyGateway(home.path)).not.toBeNull();
    expect(path.basename(server.bindPath)).toBe('gateway.sock');
  });

  it('cleans up on exit only the socket node it bound', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    server.cleanupFilesSync();
    expect(await fileExists(server.bindPath)).toBe(false);

    const other = await tempHome();
    const second = await startServer({ home: other.path });
    await rm(second.bindPath);
    await writeFile(second.bindPath, 'someone else');
    second.cleanupFilesSync();
    expect(await readFile(second.bindPath, 'utf8')).toBe('someone else');
  });

  it('closing an old server leaves the socket of a successor process that has since bound the same path', async () => {
    const home = await tempHome();
    const old = await startServer({ home: home.path });
    // The successor found the path free (the old node was removed: a takeover, a cleanup).
    await rm(old.bindPath);
    const successor = await spawnProcess({
      command: process.execPath,
      args: [
        '--conditions=@hermes/source',
        '--import',
        'tsx',
        path.join(here, 'test-fixtures', 'exit-after-start.ts'),
        home.path,
      ],
      cwd: path.resolve(here, '..'),
      readyLine: /holding=\{.*\}/,
    });
    onTestFinished(async () => {
      successor.kill('SIGUSR2');
      await successor.exited;
    });
    expect((await identifyGateway(home.path))?.pid).toBe(successor.pid);
    await old.close();
    old.cleanupFilesSync();
    expect(statSync(old.bindPath).isSocket()).toBe(true);
    expect((await identifyGateway(home.path))?.pid).toBe(successor.pid);
  });

  it('closing an old server in the same process leaves a successor server on the same path reachable, then the successor removes its own socket', async () => {
    const home = await tempHome();
    const old = await startServer({ home: home.path, handlers: { who: () => ({ n: 1 }) } });
    await rm(old.bindPath);
    const successor = await startServer({ home: home.path, handlers: { who: () => ({ n: 2 }) } });
    await old.close();
    expect(await queryControlSocket(home.path, 'who')).toEqual({ n: 2 });
    await successor.close();
    expect(await fileExists(successor.bindPath)).toBe(false);
  });

  it('closing an old server leaves the pointer file and socket of a successor for the same deep home', async () => {
    const root = await tempHome();
    const home = path.join(root.path, 'd'.repeat(60), 'e'.repeat(60));
    await mkdir(home, { recursive: true });
    const old = await startServer({ home, handlers: { who: () => ({ n: 1 }) } });
    await rm(old.bindPath);
    const successor = await startServer({ home, handlers: { who: () => ({ n: 2 }) } });
    expect(successor.bindPath).toBe(old.bindPath);
    await old.close();
    expect(await queryControlSocket(home, 'who')).toEqual({ n: 2 });
    await successor.close();
    expect(await fileExists(path.join(home, SOCKET_POINTER_FILE_NAME))).toBe(false);
    expect(await fileExists(successor.bindPath)).toBe(false);
  });

  it('leaves no private bind name behind in the socket directory', async () => {
    const home = await tempHome();
    const server = await startServer({ home: home.path });
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(home.path)).filter((name) => name !== 'gateway.sock')).toEqual([]);
    await server.close();
    expect(await readdir(home.path)).toEqual([]);
  });

  it('replaces a file planted at the bind path', async () => {
    const home = await tempHome();
    const bindPath = path.join(home.path, SOCKET_FILE_NAME);
    await writeFile(bindPath, 'planted');
    await startServer({ home: home.path });
    expect(statSync(bindPath).isSocket()).toBe(true);
    expect(await identifyGateway(home.path)).not.toBeNull();
  });

  it('replaces a dead socket left behind by a crashed process', async () => {
    const home = await tempHome();
    const bindPath = path.join(home.path, SOCKET_FILE_NAME);
    await leaveDeadSocket(bindPath);
    expect(statSync(bindPath).isSocket()).toBe(true);
    expect(await queryControlSocket(home.path, 'identify')).toBeNull();
    await startServer({ home: home.path });
    expect(await identifyGateway(home.path)).not.toBeNull();
  });

  it('refuses to take over a socket that another live server answers on', async () => {
    const home = await tempHome();
    const first = await startServer({ home: home.path, handlers: { who: () => ({ n: 1 }) } });
    const { lines, logger } = recordingLogger();
    const second = await startControlServer({ home: home.path, logger });
    expect(second.started).toBe(false);
    if (!second.started) {
      expect(ControlSocketError.isInstance(second.error) && second.error.code).toBe(
        'socket_in_use',
      );
    }
    expect(lines.some((line) => line.startsWith(`warn ${SERVER_START_FAILED_LOG}`))).toBe(true);
    expect(await queryControlSocket(home.path, 'who')).toEqual({ n: 1 });
    expect(statSync(first.bindPath).isSocket()).toBe(true);
  });

  it('reports a bind failure instead of throwing into the caller', async () => {
    const home = await tempHome();
    const missing = path.join(home.path, 'no', 'such', 'dir');
    const result = await startControlServer({ home: missing });
    expect(result.started).toBe(false);
    if (!result.started) {
      expect(result.bindPath).toBe(path.join(missing, SOCKET_FILE_NAME));
      expect(result.error.message).toMatch(/cannot listen/);
    }
  });

  it('reports a pointer file it cannot write and leaves no socket behind', async () => {
    const root = await tempHome();
    const home = path.join(root.path, 'd'.repeat(60), 'e'.repeat(60));
    // A directory where the pointer file belongs: the atomic rename onto it must fail.
    await mkdir(path.join(home, SOCKET_POINTER_FILE_NAME), { recursive: true });
    const { lines, logger } = recordingLogger();
    const result = await startControlServer({ home, logger });
    expect(result.started).toBe(false);
    if (result.started) return;
    expect(result.bindPath).not.toBeNull();
    expect(await fileExists(result.bindPath as string)).toBe(false);
    expect(lines.some((line) => line.startsWith(`warn ${SERVER_START_FAILED_LOG}`))).toBe(true);
  });

  it('serves a deep home through the pointer file and removes both on close', async () => {
    const root = await tempHome();
    const home = path.join(root.path, 'd'.repeat(60), 'e'.repeat(60));
    await mkdir(home, { recursive: true });
    const server = await startServer({ home, handlers: { identify: () => ({ deep: true }) } });
    const pointer = path.join(home, SOCKET_POINTER_FILE_NAME);
    expect(server.pointerFile).toBe(pointer);
    expect(Buffer.byteLength(server.bindPath)).toBeLessThanOrEqual(100);
    expect((await readFile(pointer, 'utf8')).trim()).toBe(server.bindPath);
    expect(statSync(server.bindPath).mode & 0o777).toBe(0o600);
    expect(await queryControlSocket(home, 'identify')).toEqual({ deep: true });
    await server.close();
    expect(await fileExists(pointer)).toBe(false);
    expect(await fileExists(server.bindPath)).toBe(false);
    expect(await queryControlSocket(home, 'identify')).toBeNull();
  });
});

describe('a HERMES_HOME written with ~', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is one home for the server, the client and the socket hash', async () => {
    const user = await tempHome();
    const home = path.join(user.path, 'gw');
    await mkdir(home);
    vi.stubEnv('HOME', user.path);
    vi.stubEnv('HERMES_HOME', '~/gw');
    // Every default: the server binds in the process home as @hermes/config resolves it.
    const server = await startServer({});
    expect(server.bindPath).toBe(path.join(home, SOCKET_FILE_NAME));
    expect(await identifyGateway(getProcessHermesHome())).toMatchObject({
      pid: process.pid,
      hermes_home: await canonicalHomePath(home),
    });
    // The hash that names a deep home's fallback socket agrees whichever spelling is used.
    expect(await canonicalHomePath('~/gw')).toBe(await canonicalHomePath(getProcessHermesHome()));
    expect(await homeHash('~/gw')).toBe(await homeHash(home));
  });
});

describe('built-in verbs over the socket', () => {
  it('identify names this process, its home and a known supervisor kind', async () => {
    const home = await tempHome();
    await startServer({
      home: home.path,
      codeIdentity: () => ({ sha: 'abc123', version: '1.2.3' }),
    });
    const identity = await identifyGateway(home.path);
    expect(identity).not.toBeNull();
    expect(identity?.protocol).toBe(1);
    expect(identity?.pid).toBe(process.pid);
    expect(identity?.kind).toBe('hermes-gateway');
    expect(identity).toHaveProperty('start_time');
    expect(identity?.hermes_home).toBe(home.path);
    expect(SUPERVISOR_KINDS).toContain(identity?.supervisor);
    expect(identity?.code_sha).toBe('abc123');
    expect(identity?.code_version).toBe('1.2.3');
  });

  it('status answers the runtime-status file read fresh, plus answered_at and answering_pid', async () => {
    const home = await tempHome();
    await startServer({ home: home.path });
    const writer = { pid: process.pid, argv: ['node'], startTime: null, home: home.path };
    await writeRuntimeStatus(home.path, { gatewayState: 'running', activeAgents: 2 }, writer);
    const first = await queryControlSocket(home.path, 'status');
    expect(first).toMatchObject({
      gateway_state: 'running',
      active_agents: 2,
      protocol: 1,
      answering_pid: process.pid,
    });
    expect(Math.abs(Number(first?.answered_at) - Date.now() / 1000)).toBeLessThan(60);
    await writeRuntimeStatus(home.path, { gatewayState: 'draining' }, writer);
    expect((await queryControlSocket(home.path, 'status'))?.gateway_state).toBe('draining');
  });
});

describe('exit hooks', () => {
  it('remove the socket, pointer, PID file and lock when the gateway exits without closing', async () => {
    const root = await tempHome();
    const home = path.join(root.path, 'd'.repeat(60), 'e'.repeat(60));
    await mkdir(home, { recursive: true });
    const fixture = path.join(here, 'test-fixtures', 'exit-after-start.ts');
    const gateway = await spawnProcess({
      command: process.execPath,
      args: ['--conditions=@hermes/source', '--import', 'tsx', fixture, home],
      cwd: path.resolve(here, '..'),
      readyLine: /holding=\{.*\}/,
    });
    const holding = JSON.parse(gateway.stdout().match(/holding=(\{.*\})/)?.[1] ?? '{}') as {
      claimed: boolean;
      bindPath: string;
      pointerFile: string;
    };
    expect(holding.claimed).toBe(true);
    expect(holding.pointerFile).toBe(path.join(home, SOCKET_POINTER_FILE_NAME));
    expect((await identifyGateway(home))?.pid).toBe(gateway.pid);
    const files = [holding.bindPath, holding.pointerFile, pidFilePath(home), runtimeLockPath(home)];
    for (const file of files) expect(await fileExists(file)).toBe(true);

    gateway.kill('SIGUSR2');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    for (const file of files) expect(await fileExists(file)).toBe(false);
  });
});

describe('startControlServer off the main thread', () => {
  it('refuses to start in a worker thread, where the umask cannot be set', async () => {
    const home = await tempHome();
    const { Worker } = await import('node:worker_threads');
    const fixture = path.join(
      path.dirname(fileURLToPath(import.meta.url)),
      'test-fixtures',
      'start-in-worker.ts',
    );
    // Workers on Node 20 ignore `--import` loaders, so the worker registers tsx itself.
    const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(fixture).href)}); });`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: { home: home.path },
      execArgv: ['--conditions=@hermes/source'],
    });
    const outcome = await new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(outcome).toEqual({ started: false, code: 'not_main_thread' });
    expect(await fileExists(path.join(home.path, SOCKET_FILE_NAME))).toBe(false);
  });
});
