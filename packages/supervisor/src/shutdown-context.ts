import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const TEXT_LIMIT = 300;
const TAKEOVER_MARKER = '.gateway-takeover.json';
const PLANNED_STOP_MARKER = '.gateway-planned-stop.json';

export interface ProcessSummary {
  readonly pid: number;
  readonly name: string | null;
  readonly state: string | null;
  readonly ppid: number | null;
  readonly uid: number | null;
  readonly cmdline: string | null;
}

export interface ShutdownContext {
  readonly ts: string;
  readonly ts_monotonic: number;
  readonly signal: string;
  readonly signal_num: number | null;
  readonly pid: number;
  readonly ppid: number;
  readonly self: ProcessSummary;
  readonly parent: ProcessSummary;
  readonly systemd_invocation_id: string | null;
  readonly systemd_journal_stream: string | null;
  readonly under_systemd: boolean;
  readonly loadavg_1m: number | null;
  readonly tracer_pid: number | null;
  readonly tracer: ProcessSummary | null;
  readonly takeover_marker: string | null;
  readonly takeover_marker_for_self: boolean;
  readonly planned_stop_marker: string | null;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function statusField(status: string | null, field: string): string | null {
  if (status === null) return null;
  const match = new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(status);
  return match?.[1]?.trim() ?? null;
}

function summarise(pid: number): ProcessSummary {
  const status = readText(`/proc/${pid}/status`);
  const cmdline = readText(`/proc/${pid}/cmdline`);
  const ppid = Number(statusField(status, 'PPid'));
  const uid = Number(statusField(status, 'Uid')?.split(/\s+/)[0]);
  return {
    pid,
    name: statusField(status, 'Name'),
    state: statusField(status, 'State'),
    ppid: Number.isInteger(ppid) && status !== null ? ppid : null,
    uid: Number.isInteger(uid) && status !== null ? uid : null,
    cmdline: cmdline === null ? null : cmdline.replaceAll('\0', ' ').trim().slice(0, TEXT_LIMIT),
  };
}

function signalName(signal: NodeJS.Signals | number | undefined): {
  name: string;
  number: number | null;
} {
  if (signal === undefined) return { name: 'UNKNOWN', number: null };
  const known = os.constants.signals as Record<string, number>;
  if (typeof signal === 'string') return { name: signal, number: known[signal] ?? null };
  const match = Object.entries(known).find(([, value]) => value === signal);
  const named = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
  return {
    name: match !== undefined && named.includes(match[0]) ? match[0] : `signal#${signal}`,
    number: signal,
  };
}

/**
 * Who asked us to stop, and in what surroundings — captured in a few milliseconds from `/proc` and
 * the environment, without external commands. Never throws; unreadable parts are `null`.
 */
export function snapshotShutdownContext(options: {
  readonly home: string;
  readonly signal?: NodeJS.Signals | number;
  readonly env?: NodeJS.ProcessEnv;
}): ShutdownContext {
  const env = options.env ?? process.env;
  const signal = signalName(options.signal);
  const tracerPid = Number(statusField(readText('/proc/self/status'), 'TracerPid'));
  const takeover = readText(path.join(options.home, TAKEOVER_MARKER));
  let takeoverForSelf = false;
  if (takeover !== null) {
    try {
      takeoverForSelf =
        (JSON.parse(takeover) as { target_pid?: unknown }).target_pid === process.pid;
    } catch {
      takeoverForSelf = false;
    }
  }
  const load = os.loadavg()[0];
  return {
    ts: new Date().toISOString(),
    ts_monotonic: performance.now() / 1000,
    signal: signal.name,
    signal_num: signal.number,
    pid: process.pid,
    ppid: process.ppid,
    self: summarise(process.pid),
    parent: summarise(process.ppid),
    systemd_invocation_id: env.INVOCATION_ID ?? null,
    systemd_journal_stream: env.JOURNAL_STREAM ?? null,
    under_systemd: env.INVOCATION_ID !== undefined || process.ppid === 1,
    loadavg_1m:
      load !== undefined && Number.isFinite(load) && process.platform !== 'win32' ? load : null,
    tracer_pid: Number.isInteger(tracerPid) && tracerPid > 0 ? tracerPid : null,
    tracer: Number.isInteger(tracerPid) && tracerPid > 0 ? summarise(tracerPid) : null,
    takeover_marker: takeover?.slice(0, TEXT_LIMIT) ?? null,
    takeover_marker_for_self: takeoverForSelf,
    planned_stop_marker:
      readText(path.join(options.home, PLANNED_STOP_MARKER))?.slice(0, TEXT_LIMIT) ?? null,
  };
}

/** One log line: `signal=... under_systemd=yes|no parent_pid=... parent_name=... loadavg_1m=... …`. */
export function formatShutdownContext(context: ShutdownContext): string {
  const parts = [
    `signal=${context.signal}`,
    `under_systemd=${context.under_systemd ? 'yes' : 'no'}`,
    `parent_pid=${context.ppid}`,
    `parent_name=${context.parent.name ?? 'unknown'}`,
    `loadavg_1m=${context.loadavg_1m === null ? 'unknown' : context.loadavg_1m.toFixed(2)}`,
  ];
  if (context.takeover_marker !== null) {
    parts.push(`takeover_marker_present=${context.takeover_marker_for_self ? 'self' : 'other'}`);
  }
  if (context.planned_stop_marker !== null) parts.push('planned_stop_marker_present=yes');
  if (context.tracer_pid !== null) parts.push(`tracer_pid=${context.tracer_pid}`);
  parts.push(`parent_cmdline='${context.parent.cmdline ?? ''}'`);
  return parts.join(' ');
}
