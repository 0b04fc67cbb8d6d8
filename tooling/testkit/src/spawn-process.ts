import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { onTestFinished } from 'vitest';

export interface SpawnProcessOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Wait for a stdout/stderr line matching this before resolving. */
  readonly readyLine?: RegExp | string;
  /** Wait until a TCP connection to `127.0.0.1:<readyPort>` succeeds before resolving. */
  readonly readyPort?: number;
  /** How long to wait for `readyLine` and `readyPort` (default 15 s each). */
  readonly readyTimeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL on cleanup (default 3 s). */
  readonly killGraceMs?: number;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SpawnedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout or stderr (past or future output). */
  waitForLine(pattern: RegExp | string, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves once a TCP connection to `host:port` succeeds; rejects if the process exits first. */
  waitForPort(port: number, options?: { host?: string; timeoutMs?: number }): Promise<void>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** Sends a signal to the process group. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after the grace period; resolves on exit. Idempotent. */
  stop(): Promise<ProcessExit>;
}

const live = new Set<SpawnedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const spawned of live) spawned.kill('SIGKILL');
  });
}

const PORT_POLL_MS = 50;

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (connected: boolean) => {
      socket.destroy();
      resolve(connected);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function toRegExp(pattern: RegExp | string): RegExp {
  return typeof pattern === 'string'
    ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    : pattern;
}

/**
 * Starts a real child process in its own process group, collects its output, optionally waits
 * for a readiness line and/or a listening port, and always cleans up: when the test finishes
 * (inside a test) or when the test process exits, the whole group is killed.
 */
export async function spawnProcess(options: SpawnProcessOptions): Promise<SpawnedProcess> {
  installExitHook();
  const child = spawn(options.command, [...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    notify();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    notify();
  });
  let exitInfo: ProcessExit | undefined;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
      notify();
    });
    child.once('error', (error) => {
      err += `\n[spawn error] ${error.message}\n`;
      exitInfo = { code: null, signal: null };
      resolve(exitInfo);
      notify();
    });
  });

  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (exitInfo || child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  };

  let stopping: Promise<ProcessExit> | undefined;
  const spawned: SpawnedProcess = {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill,
    waitForLine(pattern, timeoutMs = 15_000) {
      const regex = toRegExp(pattern);
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = out.match(regex) ?? err.match(regex);
          if (match) {
            cleanup();
            resolve(match);
          } else if (exitInfo) {
            cleanup();
            reject(
              new Error(
                `process exited (${JSON.stringify(exitInfo)}) before printing ${regex}\nstdout:\n${out}\nstderr:\n${err}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${regex}\nstdout:\n${out}\nstderr:\n${err}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async waitForPort(port, { host = '127.0.0.1', timeoutMs = 15_000 } = {}) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        if (await canConnect(host, port)) return;
        const output = `\nstdout:\n${out}\nstderr:\n${err}`;
        if (exitInfo) {
          throw new Error(
            `process exited (${JSON.stringify(exitInfo)}) before ${host}:${port} accepted connections${output}`,
          );
        }
        if (performance.now() >= deadline) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${host}:${port}${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, PORT_POLL_MS));
      }
    },
    stop() {
      stopping ??= (async () => {
        if (!exitInfo) {
          kill('SIGTERM');
          const timer = setTimeout(() => kill('SIGKILL'), options.killGraceMs ?? 3000);
          await exited;
          clearTimeout(timer);
        }
        live.delete(spawned);
        return exited;
      })();
      return stopping;
    },
  };
  live.add(spawned);
  void exited.then(() => live.delete(spawned));
  try {
    onTestFinished(async () => {
      await spawned.stop();
    });
  } catch {
    // Not inside a running test: the caller stops it.
  }
  try {
    if (options.readyLine !== undefined) {
      await spawned.waitForLine(options.readyLine, options.readyTimeoutMs ?? 15_000);
    }
    if (options.readyPort !== undefined) {
      await spawned.waitForPort(options.readyPort, { timeoutMs: options.readyTimeoutMs ?? 15_000 });
    }
  } catch (error) {
    await spawned.stop();
    throw error;
  }
  return spawned;
}

/**
 * True while `pid` names a running process. A zombie (exited, not yet reaped by its parent — common
 * for orphans in containers whose init does not reap) counts as not running.
 */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return process.platform !== 'linux';
  }
}
