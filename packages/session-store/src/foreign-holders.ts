import { readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

export interface ForeignHolder {
  /** −1 is the fail-closed sentinel: the scan could not prove the file is free. */
  readonly pid: number;
  readonly reason: string;
}

export interface ForeignHolderScanOptions {
  /** The database file; its `-wal` and `-shm` sidecars are checked too. */
  readonly databasePath: string;
  /** Root of the proc filesystem (tests point it elsewhere to exercise the fail-closed path). */
  readonly procRoot?: string;
  readonly selfPid?: number;
}

export type ForeignHolderScanner = (options: ForeignHolderScanOptions) => Promise<ForeignHolder[]>;

/**
 * Processes other than this one that hold state.db or its WAL sidecars open. Linux only (via
 * /proc/<pid>/fd); anywhere the answer cannot be proven — another platform, an unreadable
 * /proc — a sentinel holder is returned so that a rebuild is deferred rather than risked.
 * Threads of this process (the rebuild worker) share its pid and never count.
 */
export async function scanForeignHolders(
  options: ForeignHolderScanOptions,
): Promise<ForeignHolder[]> {
  const procRoot = options.procRoot ?? '/proc';
  const selfPid = options.selfPid ?? process.pid;
  if (process.platform !== 'linux' && options.procRoot === undefined) {
    return [{ pid: -1, reason: `no open-file scan on ${process.platform}` }];
  }
  let targets: Set<string>;
  try {
    const resolved = await realpath(options.databasePath);
    targets = new Set([resolved, `${resolved}-wal`, `${resolved}-shm`]);
  } catch (error) {
    return [
      { pid: -1, reason: `cannot resolve ${options.databasePath}: ${(error as Error).message}` },
    ];
  }
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch (error) {
    return [{ pid: -1, reason: `cannot list ${procRoot}: ${(error as Error).message}` }];
  }
  const holders: ForeignHolder[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === selfPid) continue;
    const fdDirectory = path.join(procRoot, entry, 'fd');
    let descriptors: string[];
    try {
      descriptors = await readdir(fdDirectory);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ESRCH') continue; // Exited during the scan.
      // Uninspectable: only a process that looks like Hermes counts as a holder.
      if (await looksLikeHermes(procRoot, entry))
        holders.push({ pid, reason: 'uninspectable Hermes process' });
      continue;
    }
    for (const descriptor of descriptors) {
      let target: string;
      try {
        target = await readlink(path.join(fdDirectory, descriptor));
      } catch {
        continue;
      }
      const cleaned = target.endsWith(' (deleted)')
        ? target.slice(0, -' (deleted)'.length)
        : target;
      if (targets.has(cleaned)) {
        holders.push({ pid, reason: `holds ${path.basename(cleaned)}` });
        break;
      }
    }
  }
  return holders;
}

async function looksLikeHermes(procRoot: string, pid: string): Promise<boolean> {
  try {
    const commandLine = (await readFile(path.join(procRoot, pid, 'cmdline'), 'utf8')).replace(
      /\0/g,
      ' ',
    );
    return /hermes/i.test(commandLine);
  } catch {
    return false;
  }
}

export function describeHolders(holders: readonly ForeignHolder[]): string {
  return holders.map((holder) => `pid ${holder.pid}: ${holder.reason}`).join(', ');
}
