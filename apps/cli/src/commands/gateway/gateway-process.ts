import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  DEFAULT_RESTART_DRAIN_TIMEOUT_S,
  loadConfig,
  resolveRestartDrainTimeout,
} from '@hermes/config';
import {
  getRunningPid,
  type IdentifyResult,
  identifyGateway,
  isProcessAlive,
  pidFilePath,
  readPidRecord,
} from '@hermes/control-socket';
import type { CommandOptions } from '../../context.js';
import { CliError } from '../../errors.js';

/** The gateway's entry script (`hermes-gateway` of `@hermes/gateway`). */
export function gatewayBinPath(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve('@hermes/gateway/package.json');
  } catch (error) {
    throw new CliError({
      code: 'gateway_not_installed',
      message: 'the gateway (@hermes/gateway) is not installed next to this hermes',
      hint: 'Install it: npm install -g @hermes/gateway',
      cause: error,
    });
  }
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: Record<string, string> };
  const relative = bin?.['hermes-gateway'] ?? 'dist/bin.js';
  return path.join(path.dirname(manifest), relative);
}

/** `--port`, `--host`, `--log-level`, `--drain-timeout` as the gateway takes them. */
export function gatewayArgs(options: CommandOptions): string[] {
  const args: string[] = [];
  if (typeof options.port === 'number') args.push('--port', String(options.port));
  if (typeof options.host === 'string') args.push('--host', options.host);
  if (typeof options.logLevel === 'string') args.push('--log-level', options.logLevel);
  if (typeof options.drainTimeout === 'number')
    args.push('--drain-timeout', String(options.drainTimeout));
  return args;
}

/** A running gateway of a home, and how we know. */
export interface RunningGateway {
  readonly pid: number;
  readonly startTime: number | null;
  /** `socket`: it answered `identify`; `files`: only its PID record / runtime status say so. */
  readonly source: 'socket' | 'files';
  readonly identity: IdentifyResult | null;
  /** The command line it was started with (from its PID record), when known. */
  readonly argv: readonly string[] | null;
}

/** The gateway running for `home`: its socket first, then the runtime files. */
export async function findRunningGateway(home: string): Promise<RunningGateway | null> {
  const identity = await identifyGateway(home, { timeoutMs: 2000 });
  const record = await readPidRecord(pidFilePath(home)).catch(() => null);
  if (identity) {
    return {
      pid: identity.pid,
      startTime: identity.start_time,
      source: 'socket',
      identity,
      argv: record?.pid === identity.pid ? (record.argv ?? null) : null,
    };
  }
  const pid = await getRunningPid(home).catch(() => null);
  if (pid === null) return null;
  return {
    pid,
    startTime: record?.pid === pid ? (record.start_time ?? null) : null,
    source: 'files',
    identity: null,
    argv: record?.pid === pid ? (record.argv ?? null) : null,
  };
}

/** The gateway arguments a running gateway was started with (after its entry script). */
export function argsOf(argv: readonly string[] | null): string[] | null {
  if (!argv) return null;
  const index = argv.findIndex((word) =>
    /hermes-gateway(?:\.[cm]?js)?$|gateway[\\/]dist[\\/]bin\.js$/.test(word),
  );
  return index < 0 ? null : argv.slice(index + 1);
}

/** The drain budget a gateway stops with: its `--drain-timeout`, else `restart_drain_timeout`, else the default. */
export async function drainSecondsFor(
  home: string,
  argv: readonly string[] | null,
): Promise<number> {
  const args = argsOf(argv) ?? [];
  const flag = args.indexOf('--drain-timeout');
  if (flag >= 0) {
    const value = Number(args[flag + 1]);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  try {
    // The gateway drains with the same knob, resolved by the same function.
    return resolveRestartDrainTimeout(loadConfig({ home }).raw);
  } catch {
    return DEFAULT_RESTART_DRAIN_TIMEOUT_S;
  }
}

/** Resolves true once `pid` has exited, false at the deadline. */
export async function waitForExit(pid: number, timeoutMs: number, pollMs = 100): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (!(await isProcessAlive(pid))) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
