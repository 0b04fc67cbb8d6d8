import { readFileSync } from 'node:fs';

/** Identifies a process across pid reuse: the pid plus its kernel start time (Linux ticks). */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTicks: string | null;
}

/** Field 22 of /proc/<pid>/stat; null where /proc is unavailable. */
export function readProcessStartTicks(pid: number, procRoot = '/proc'): string | null {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function readProcessState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

let cachedSelf: ProcessIdentity | undefined;

export function currentProcessIdentity(): ProcessIdentity {
  cachedSelf ??= { pid: process.pid, startTicks: readProcessStartTicks(process.pid) };
  return cachedSelf;
}

/**
 * False only when the process is provably gone: signal 0 fails with ESRCH, it is a zombie, or its
 * start time differs from the recorded one (the pid was reused). EPERM means it exists.
 */
export function isProcessAlive(identity: { pid: number; startTicks?: string | null }): boolean {
  if (!Number.isInteger(identity.pid) || identity.pid <= 0) return false;
  try {
    process.kill(identity.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = readProcessState(identity.pid);
  if (state === 'Z' || state === 'X') return false;
  if (identity.startTicks) {
    const ticks = readProcessStartTicks(identity.pid);
    if (ticks !== null && ticks !== identity.startTicks) return false;
  }
  return true;
}
