import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_ASYNC_DIAGNOSTIC_TIMEOUT_S,
  SHUTDOWN_DIAGNOSTIC_LOG_FILE,
  SHUTDOWN_DIAGNOSTIC_PS_LINES,
} from './constants.js';
import { redactSecrets } from './redact-secrets.js';

export interface AsyncDiagnosticOptions {
  /** Hermes home: the log defaults to `<home>/logs/gateway-shutdown-diag.log`. */
  readonly home?: string;
  /** The log to append to (created 0600; an existing file is set to 0600). Overrides `home`. */
  readonly logFile?: string;
  /** The signal that started the stop, for the header (`SIGTERM`, `signal#N`, …). */
  readonly signal?: NodeJS.Signals | string;
  /** Wall-clock budget of the whole diagnostic in seconds (default 5). */
  readonly timeoutS?: number;
  /** The process whose tree `pstree` shows (default this process). */
  readonly pid?: number;
  /** Default `process.platform`; on `win32` nothing is spawned. */
  readonly platform?: NodeJS.Platform;
}

export interface AsyncDiagnostic {
  /** PID of the detached diagnostic process (its own session and process group). */
  readonly pid: number;
  readonly logFile: string;
  /**
   * Settles when the diagnostic process has exited (never rejects). Awaiting it does not keep this
   * process alive: the diagnostic is unref'd and finishes on its own.
   */
  readonly finished: Promise<void>;
}

const SIGNAL_NAME = /^(?:SIG[A-Z0-9]{1,12}|signal#\d{1,3}|UNKNOWN)$/;

/**
 * The diagnostic's program, run by a fresh `node` with no flags. Plain JavaScript (CommonJS) with
 * `redactSecrets` embedded from its compiled source, so the child masks secrets with the very
 * function the tests check. Synchronous on purpose: each step is bounded by what is left of the
 * budget and the process has nothing else to do.
 */
const DIAGNOSTIC_SCRIPT = String.raw`
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
${redactSecrets.toString()}
const env = process.env;
const deadline = Date.now() + Number(env.HERMES_DIAGNOSTIC_TIMEOUT_MS);
const write = (text) => fs.writeSync(1, redactSecrets(text));
const section = (title) => write('--- ' + title + ' ---\n');
function run(command, args, keep) {
  const left = deadline - Date.now();
  if (left <= 0) return { skipped: 'diagnostic budget spent' };
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: left, maxBuffer: 8 * 1024 * 1024 });
  if (result.error) return { skipped: result.error.code === 'ETIMEDOUT' ? 'timed out' : String(result.error.code || result.error.message) };
  const lines = (result.stdout || '').split('\n').filter((line) => line !== '');
  const text = keep === undefined ? lines : keep(lines);
  if (text.length === 0) return { skipped: ((result.stderr || '').trim().split('\n')[0] || 'no output (exit ' + result.status + ')') };
  return { text: text.join('\n') + '\n' };
}
function show(title, outcome) {
  section(title);
  write(outcome.text !== undefined ? outcome.text : '(unavailable: ' + outcome.skipped + ')\n');
}
write('=== gateway shutdown diagnostic pid=' + env.HERMES_DIAGNOSTIC_PID + ' signal=' + env.HERMES_DIAGNOSTIC_SIGNAL + ' at ' + new Date().toISOString() + ' ===\n');
const psLines = Number(env.HERMES_DIAGNOSTIC_PS_LINES);
// Kernel threads (no memory, a bracketed name) would fill the first lines on Linux and say nothing.
const kernelThread = /^\S+\s+\d+\s+\S+\s+\S+\s+0\s+0\s.*\s(?:\\_ )?\[[^\]]*\]$/;
const topOfTable = (lines) => lines.filter((line) => !kernelThread.test(line)).slice(0, psLines);
const retry = (first, again) => (first.text === undefined && first.skipped !== 'diagnostic budget spent' ? again() : first);
const ps = retry(run('ps', ['auxfww'], topOfTable), () => run('ps', ['auxww'], topOfTable));
show('ps auxf (top ' + psLines + ' lines, kernel threads left out)', ps);
const tree = retry(run('pstree', ['-aplT', env.HERMES_DIAGNOSTIC_PID]), () => run('pstree', ['-apl', env.HERMES_DIAGNOSTIC_PID]));
show('pstree ' + env.HERMES_DIAGNOSTIC_PID, tree);
let load;
try {
  load = fs.readFileSync('/proc/loadavg', 'utf8');
} catch {
  load = os.loadavg().map((value) => value.toFixed(2)).join(' ') + ' (os.loadavg)\n';
}
show('loadavg', { text: load });
show('dmesg (last 20 lines)', run('dmesg', ['-T'], (lines) => lines.slice(-20)));
show('journal (last 30 lines)', run('journalctl', ['-n', '30', '--no-pager', '-q']));
write('=== end of diagnostic ===\n');
`;

/**
 * Spawns a detached, time-boxed diagnostic that appends what the machine looked like when the
 * gateway was asked to stop to `logs/gateway-shutdown-diag.log`: the process table (`ps auxf`, top
 * 60 lines), the gateway's process tree (`pstree`), the load average and recent kernel and journal
 * lines. Call it from a signal handler: it returns at once and the diagnostic outlives the gateway
 * (its own session), so a stop that ends in SIGKILL still leaves the picture behind.
 *
 * No secrets: the log is created 0600; everything written to it passes through
 * {@link redactSecrets} (other processes' command lines — this gateway's own included — often carry
 * keys and tokens); the child's command line is a constant (`node -e <loader>`) and the few values it
 * needs reach it through a minimal environment that holds nothing of this process's own (no keys,
 * no tokens). Never throws; returns `undefined` on Windows or when the log cannot be opened.
 */
export function spawnAsyncDiagnostic(
  options: AsyncDiagnosticOptions = {},
): AsyncDiagnostic | undefined {
  if ((options.platform ?? process.platform) === 'win32') return undefined;
  const logFile =
    options.logFile ??
    (options.home === undefined
      ? undefined
      : path.join(options.home, SHUTDOWN_DIAGNOSTIC_LOG_FILE));
  if (logFile === undefined) return undefined;
  const timeoutS =
    options.timeoutS !== undefined && Number.isFinite(options.timeoutS) && options.timeoutS > 0
      ? options.timeoutS
      : DEFAULT_ASYNC_DIAGNOSTIC_TIMEOUT_S;
  const pid = options.pid ?? process.pid;
  const signal =
    options.signal !== undefined && SIGNAL_NAME.test(options.signal) ? options.signal : 'UNKNOWN';
  let descriptor: number | undefined;
  let child: ChildProcess;
  try {
    mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
    descriptor = openSync(logFile, 'a', 0o600);
    // The open mode applies to a new file only, and only through the umask: set it outright.
    fchmodSync(descriptor, 0o600);
    child = spawn(
      process.execPath,
      ['-e', 'new Function(process.env.HERMES_DIAGNOSTIC_SCRIPT)()'],
      {
        detached: true,
        stdio: ['ignore', descriptor, descriptor],
        env: {
          PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
          LANG: 'C',
          HERMES_DIAGNOSTIC_SCRIPT: DIAGNOSTIC_SCRIPT,
          HERMES_DIAGNOSTIC_PID: String(pid),
          HERMES_DIAGNOSTIC_SIGNAL: signal,
          HERMES_DIAGNOSTIC_TIMEOUT_MS: String(Math.round(timeoutS * 1000)),
          HERMES_DIAGNOSTIC_PS_LINES: String(SHUTDOWN_DIAGNOSTIC_PS_LINES),
        },
      },
    );
  } catch {
    return undefined;
  } finally {
    // The child holds its own copy of the descriptor.
    if (descriptor !== undefined) closeSync(descriptor);
  }
  const childPid = child.pid;
  if (childPid === undefined) {
    child.on('error', () => undefined);
    return undefined;
  }
  const finished = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  child.unref();
  return { pid: childPid, logFile, finished };
}
