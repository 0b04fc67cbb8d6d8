import { chmod, mkdir, readdir, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeFileAtomic } from '@hermes/config';
import {
  DEFAULT_HEARTBEAT_INTERVAL_S,
  HEARTBEAT_FILE,
  HEARTBEAT_INTERVAL_FLOOR_S,
  LOOP_TICK_BYTE,
  LOOP_TICK_SOCKET_PREFIX,
  LOOP_TICK_SOCKET_SUFFIX,
  messages,
} from './constants.js';
import { SupervisorError } from './errors.js';

/** Unix socket paths longer than this do not fit `sun_path` on every platform. */
const MAX_SOCKET_PATH_BYTES = 100;

export interface HeartbeatRecord {
  readonly pid: number;
  readonly updated_at: string;
  readonly monotonic: number;
  readonly start_time?: number;
  readonly mem?: { readonly rss: number };
  readonly loop_tick_socket: boolean;
  readonly loop_tick_tcp_port: number | null;
}

export interface LoopHeartbeatOptions {
  /** The process's Hermes home (identity files live under the process home, never an override). */
  readonly home: string;
  /** Seconds between writes (default 30, floor 1). */
  readonly intervalS?: number;
  /** Start-time fingerprint of this process, published for the probe's identity checks. */
  readonly startTime?: number;
  /** Serve the witness over TCP on 127.0.0.1 instead of a Unix socket (default: only on Windows). */
  readonly useTcpWitness?: boolean;
  /** Where warnings go (default stderr). */
  readonly warn?: (message: string) => void;
}

export interface LoopHeartbeat {
  readonly heartbeatFile: string;
  /** The witness's Unix socket path, or `undefined` when it is TCP or disabled. */
  readonly witnessPath: string | undefined;
  readonly witnessTcpPort: number | null;
  /** Resolves after the next completed write (tests and shutdown ordering). */
  nextWrite(): Promise<void>;
  /** Stops writing, closes and unlinks the witness. */
  stop(): Promise<void>;
}

export function heartbeatFilePath(home: string): string {
  return path.join(home, HEARTBEAT_FILE);
}

export function loopTickSocketPath(home: string, pid: number): string {
  return path.join(
    path.dirname(heartbeatFilePath(home)),
    `${LOOP_TICK_SOCKET_PREFIX}${pid}${LOOP_TICK_SOCKET_SUFFIX}`,
  );
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function unlinkStaleWitnesses(directory: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(LOOP_TICK_SOCKET_PREFIX) || !name.endsWith(LOOP_TICK_SOCKET_SUFFIX))
      continue;
    const pid = Number(name.slice(LOOP_TICK_SOCKET_PREFIX.length, -LOOP_TICK_SOCKET_SUFFIX.length));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (pid === process.pid || !isPidAlive(pid)) {
      await unlink(path.join(directory, name)).catch(() => undefined);
    }
  }
}

function listen(
  server: net.Server,
  target: string | { port: 0; host: '127.0.0.1' },
): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });
}

/**
 * The loop-tick witness: a server served by the event loop itself that writes one byte to every
 * connection. An off-loop heartbeat write proves nothing about the loop; this answer does.
 */
async function startWitness(options: {
  directory: string;
  useTcp: boolean;
  warn: (message: string) => void;
}): Promise<{
  server: net.Server | undefined;
  socketPath: string | undefined;
  port: number | null;
}> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(LOOP_TICK_BYTE);
  });
  server.unref();
  try {
    if (options.useTcp) {
      await listen(server, { port: 0, host: '127.0.0.1' });
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : null;
      return { server, socketPath: undefined, port };
    }
    const socketPath = path.join(
      options.directory,
      `${LOOP_TICK_SOCKET_PREFIX}${process.pid}${LOOP_TICK_SOCKET_SUFFIX}`,
    );
    if (Buffer.byteLength(socketPath, 'utf8') > MAX_SOCKET_PATH_BYTES) {
      throw new Error(`socket path too long: ${socketPath}`);
    }
    await listen(server, socketPath);
    await chmod(socketPath, 0o600);
    return { server, socketPath, port: null };
  } catch {
    options.warn(messages.witnessUnavailable);
    server.close();
    return { server: undefined, socketPath: undefined, port: null };
  }
}

/** setTimeout's longest delay; Node turns anything longer (and NaN) into 1 ms. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * The interval in ms: the floor (1 s) lifts a small positive value; a value that is not a finite
 * positive number of seconds, or is too long for a timer, is refused — each would have become a
 * 1 ms timer, a tight loop of synchronous-fsync writes.
 */
function heartbeatIntervalMs(intervalS: number | undefined): number {
  const seconds = intervalS ?? DEFAULT_HEARTBEAT_INTERVAL_S;
  const milliseconds = Math.max(HEARTBEAT_INTERVAL_FLOOR_S, seconds) * 1000;
  if (typeof seconds !== 'number' || !(seconds > 0) || !(milliseconds <= MAX_TIMER_DELAY_MS)) {
    throw new SupervisorError({
      code: 'invalid_heartbeat_options',
      message: `heartbeat option intervalS must be a finite number of seconds > 0 and ≤ ${Math.floor(MAX_TIMER_DELAY_MS / 1000)}, got ${String(intervalS)}`,
    });
  }
  return milliseconds;
}

/**
 * Starts the heartbeat: writes `state/gateway.heartbeat` at once and then every interval, each write
 * off the event loop (libuv thread pool) but awaited, one at a time — an inline fsync can stall for
 * seconds, and a fire-and-forget write would keep the file fresh while the loop is wedged. The
 * witness is armed (awaited) before the first write publishes it.
 */
export async function startLoopHeartbeat(options: LoopHeartbeatOptions): Promise<LoopHeartbeat> {
  const intervalMs = heartbeatIntervalMs(options.intervalS);
  const warn = options.warn ?? ((message: string) => process.stderr.write(`${message}\n`));
  const heartbeatFile = heartbeatFilePath(options.home);
  const directory = path.dirname(heartbeatFile);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const useTcp = options.useTcpWitness ?? process.platform === 'win32';
  if (!useTcp) await unlinkStaleWitnesses(directory);
  const witness = await startWitness({ directory, useTcp, warn });

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let writeWaiters: (() => void)[] = [];
  let inFlight: Promise<void> | undefined;

  const write = async () => {
    const record: HeartbeatRecord = {
      pid: process.pid,
      updated_at: new Date().toISOString(),
      monotonic: performance.now() / 1000,
      ...(options.startTime === undefined ? {} : { start_time: options.startTime }),
      mem: { rss: process.memoryUsage.rss() },
      loop_tick_socket: witness.server !== undefined,
      loop_tick_tcp_port: witness.port,
    };
    try {
      await writeFileAtomic(heartbeatFile, JSON.stringify(record));
    } catch (error) {
      warn(`Heartbeat write failed: ${(error as Error).message}`);
    }
    const waiters = writeWaiters;
    writeWaiters = [];
    for (const waiter of waiters) waiter();
  };

  const tick = async () => {
    if (stopped) return;
    inFlight = write();
    await inFlight;
    inFlight = undefined;
    if (stopped) return;
    timer = setTimeout(() => void tick(), intervalMs);
    timer.unref();
  };
  await tick();

  return {
    heartbeatFile,
    witnessPath: witness.socketPath,
    witnessTcpPort: witness.port,
    nextWrite() {
      return new Promise((resolve) => writeWaiters.push(resolve));
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await inFlight;
      const waiters = writeWaiters;
      writeWaiters = [];
      for (const waiter of waiters) waiter();
      if (witness.server !== undefined) {
        await new Promise<void>((resolve) => witness.server?.close(() => resolve()));
      }
      if (witness.socketPath !== undefined) await unlink(witness.socketPath).catch(() => undefined);
    },
  };
}
