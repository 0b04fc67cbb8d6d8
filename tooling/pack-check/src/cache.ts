import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const sha256 = (data: string | Uint8Array): string =>
  createHash('sha256').update(data).digest('hex');

/**
 * The check's working folder: tarballs, the scratch project and cached results. It lives outside
 * every workspace (Node and TypeScript would otherwise find the workspace's `node_modules` while
 * walking up from the scratch project) and is shared by every clone on the machine: everything in
 * it is keyed by content, and one run at a time holds the lock.
 */
export function defaultCacheDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HERMES_PACK_CHECK_CACHE) return path.resolve(env.HERMES_PACK_CHECK_CACHE);
  const base = env.XDG_CACHE_HOME
    ? path.resolve(env.XDG_CACHE_HOME)
    : path.join(homedir(), '.cache');
  return path.join(base, 'hermes-ts', 'pack-check');
}

/** The first ancestor of `directory` that holds a `node_modules` folder, if any. */
export function ancestorNodeModules(directory: string): string | undefined {
  let current = path.dirname(path.resolve(directory));
  for (;;) {
    const candidate = path.join(current, 'node_modules');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  // rename is atomic: a reader sees the old file or the new one, never half of one.
  renameSync(temporary, file);
}

function readOwner(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One check at a time per cache folder (a developer's run and CI's may share a machine). The lock
 * is a directory (mkdir is atomic) holding the owner's PID; a dead owner's lock is taken over.
 */
export async function acquireLock(
  directory: string,
  { timeoutMs = 10 * 60_000, onWait }: { timeoutMs?: number; onWait?: (pid: number) => void } = {},
): Promise<() => void> {
  mkdirSync(directory, { recursive: true });
  const lock = path.join(directory, 'lock');
  const ownerFile = path.join(lock, 'pid');
  const deadline = performance.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(ownerFile, String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(ownerFile);
    const orphaned = owner === undefined && ageMs(lock) > 30_000; // died between mkdir and write
    if (orphaned || (owner !== undefined && !processIsAlive(owner))) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (performance.now() > deadline) {
      throw new Error(`another package check (pid ${owner}) has held ${lock} for too long`);
    }
    if (!announced && owner !== undefined) {
      onWait?.(owner);
      announced = true;
    }
    await sleep(500);
  }
}
