import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { errorCode } from './error-code.js';
import { splitWindowsCommandLine } from './gateway-command-line.js';

/** Fields of `/proc/<pid>/stat` after the `(comm)` field, which may itself hold spaces and `)`. */
function statFieldsAfterName(stat: string): string[] {
  return stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
}

/** The state letter and start time (field 22) of a Linux process, or null when unreadable. */
async function readLinuxStat(pid: number): Promise<{ state: string; startTime: number } | null> {
  try {
    const fields = statFieldsAfterName(await readFile(`/proc/${pid}/stat`, 'utf8'));
    // Field 3 (state) is index 0 here, so field 22 (starttime) is index 19.
    const startTime = Number(fields[19]);
    return { state: fields[0] ?? '', startTime: Number.isSafeInteger(startTime) ? startTime : -1 };
  } catch {
    return null;
  }
}

function readPsStartTime(pid: number): Promise<number | null> {
  return new Promise((resolve) => {
    execFile('ps', ['-o', 'lstart=', '-p', String(pid)], { timeout: 2000 }, (error, stdout) => {
      if (error) return resolve(null);
      const started = Date.parse(stdout.trim());
      // Centiseconds, as the reference does off Linux; one fingerprint kind per host.
      resolve(Number.isFinite(started) ? Math.round(started / 10) : null);
    });
  });
}

/**
 * A fingerprint of when `pid` started, so a recycled PID is not mistaken for the process that
 * wrote a record: on Linux the clock ticks since boot from `/proc/<pid>/stat`, elsewhere the
 * creation time in centiseconds from `ps`. `null` when it cannot be read.
 */
export async function readProcessStartTime(
  pid: number,
  platform: NodeJS.Platform = process.platform,
): Promise<number | null> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  if (platform === 'linux') {
    const stat = await readLinuxStat(pid);
    return stat && stat.startTime >= 0 ? stat.startTime : null;
  }
  if (platform === 'win32') return null;
  return readPsStartTime(pid);
}

/**
 * True while `pid` is a running process. `EPERM` means it exists under another user; a Linux
 * zombie (exited, not yet reaped) counts as dead.
 */
export async function isProcessAlive(
  pid: number,
  platform: NodeJS.Platform = process.platform,
): Promise<boolean> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (errorCode(error) !== 'EPERM') return false;
  }
  if (platform !== 'linux') return true;
  const stat = await readLinuxStat(pid);
  if (stat === null) return false;
  return stat.state !== 'Z' && stat.state !== 'X';
}

/** Both fingerprints known and different: the PID now belongs to another process. */
export function startTimesConflict(
  recorded: number | null | undefined,
  live: number | null | undefined,
): boolean {
  return typeof recorded === 'number' && typeof live === 'number' && recorded !== live;
}

/** `pid` is alive and, when a fingerprint was recorded, it is still the same process. */
export async function isRecordedProcessLive(
  pid: number,
  recordedStartTime: number | null | undefined,
): Promise<boolean> {
  if (!(await isProcessAlive(pid))) return false;
  if (typeof recordedStartTime !== 'number') return true;
  return !startTimesConflict(recordedStartTime, await readProcessStartTime(pid));
}

/** How long a `ps` / PowerShell lookup of another process may take before it counts as unknown. */
const PROCESS_LOOKUP_TIMEOUT_MS = 2000;

function execText(command: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { timeout: PROCESS_LOOKUP_TIMEOUT_MS, windowsHide: true },
      (error, stdout) => resolve(error ? null : stdout),
    );
  });
}

/**
 * The command line `pid` runs, as arguments: on Linux `/proc/<pid>/cmdline` (exact arguments); on
 * other POSIX systems `ps -o args=`, split on whitespace (`ps` does not quote); on Windows the
 * process's `CommandLine` through PowerShell. `[]` for a process without one (a kernel thread),
 * `null` when it cannot be read (gone, hidden, no `ps`). Never blocks the event loop.
 */
export async function readProcessCommandLine(
  pid: number,
  platform: NodeJS.Platform = process.platform,
): Promise<string[] | null> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  if (platform === 'linux') {
    let raw: Buffer;
    try {
      raw = await readFile(`/proc/${pid}/cmdline`);
    } catch {
      return null;
    }
    const args = raw.toString('utf8').split('\0');
    if (args.at(-1) === '') args.pop();
    return args;
  }
  if (platform === 'win32') {
    const query = `(Get-CimInstance Win32_Process -Filter 'ProcessId=${pid}').CommandLine`;
    const output = await execText('powershell.exe', [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      query,
    ]);
    const line = output?.trim();
    return line ? splitWindowsCommandLine(line) : null;
  }
  const output = await execText('ps', ['-o', 'args=', '-p', String(pid)]);
  const line = output?.trim();
  return line ? line.split(/\s+/) : null;
}
