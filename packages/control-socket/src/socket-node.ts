import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { link, lstat, readdir, readFile, rename, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { writeFileAtomic } from '@hermes/config';
import { SOCKET_FILE_NAME } from './constants.js';
import { errorCode } from './error-code.js';
import { ControlSocketError } from './errors.js';
import { withTakeoverToken, withTakeoverTokenSync } from './exclusive-file.js';

// The control socket's node on disk. Every change to the public socket path and to the pointer
// file — publishing a node, replacing a dead one, removing our own — happens under one takeover
// token per home (`<home>/gateway.sock.takeover`, see exclusive-file.ts). So while a process holds
// the token nobody else changes the node at the path or the pointer, and what it judged — "nobody
// answers there", "that node is still ours" — is still true when it acts on it. A free path is
// taken with link(2), which never replaces: a node put there by something that takes no token
// (a user, an unrelated program) is judged before it is replaced, never overwritten blind.

/** The inode of a socket node, to tell ours from a successor's at the same path. */
export interface SocketNodeIdentity {
  readonly dev: number;
  readonly ino: number;
}

/** Where the takeover token of the socket of `home` lives (whether it binds in the home or not). */
export function socketTokenTarget(home: string): string {
  return path.join(home, SOCKET_FILE_NAME);
}

function isSameNode(stats: { dev: number; ino: number }, identity: SocketNodeIdentity | null) {
  // Fail closed: a node we could not identify at bind time is never assumed to be ours.
  return identity !== null && stats.dev === identity.dev && stats.ino === identity.ino;
}

export async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

/** Resolves true if something accepts a connection on `socketPath` within `timeoutMs`. */
function somebodyAnswers(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    const finish = (answered: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(answered);
    };
    // A listener that does not accept in time is still a listener: fail closed, keep its file.
    const timer = setTimeout(() => finish(true), timeoutMs);
    probe.once('connect', () => finish(true));
    probe.once('error', () => finish(false));
  });
}

/** Throws `socket_in_use` when something accepts connections at `bindPath`. */
export async function refuseLiveListener(bindPath: string, timeoutMs: number): Promise<void> {
  if (await somebodyAnswers(bindPath, timeoutMs)) {
    throw new ControlSocketError({
      code: 'socket_in_use',
      message: `another process is answering on ${bindPath}`,
    });
  }
}

/** `<dir>/.gw-<8 hex>`: never longer than the public name (`gateway.sock`, `hermes-gw-….sock`). */
export function privateBindPath(bindPath: string): string {
  return path.join(path.dirname(bindPath), `.gw-${randomBytes(4).toString('hex')}`);
}

const PRIVATE_NAME = /^\.gw-[0-9a-f]{8}$/;
/** A private name lives for microseconds (bind, then link); one this old is a crash's leftover. */
const STALE_PRIVATE_NAME_MS = 60_000;

/**
 * Removes private socket names a process left when it died between bind and link (or between
 * link and removing the name): socket nodes named `.gw-<8 hex>` older than a minute. Best effort.
 * Checking the age and then removing is safe here without a token: each name is drawn at random
 * by the one start that binds it and lives for microseconds, so a node that is a minute old is a
 * dead start's, and no other process ever puts a node under that name.
 */
export async function sweepStalePrivateNames(directory: string): Promise<void> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const oldest = Date.now() - STALE_PRIVATE_NAME_MS;
  for (const name of names) {
    if (!PRIVATE_NAME.test(name)) continue;
    const file = path.join(directory, name);
    const stats = await lstat(file).catch(() => null);
    if (stats?.isSocket() && stats.mtimeMs < oldest)
      await rm(file, { force: true }).catch(() => {});
  }
}

/** link(2) of the private name onto the path: `linked`, `taken` (EEXIST) or `unsupported`. */
async function linkOnto(privatePath: string, bindPath: string) {
  try {
    await link(privatePath, bindPath);
  } catch (error) {
    return errorCode(error) === 'EEXIST' ? 'taken' : 'unsupported';
  }
  await rm(privatePath, { force: true });
  return 'linked';
}

export interface PublishInput {
  /** Where the socket is bound (a private name in the directory of `bindPath`). */
  readonly privatePath: string;
  readonly bindPath: string;
  /** Written with `bindPath` once the node is in place (a home too deep for the socket). */
  readonly pointerFile: string | null;
  readonly tokenTarget: string;
  /** How long a node already at the path has to accept a probe connection. */
  readonly timeoutMs: number;
}

/**
 * Puts the socket bound at `privatePath` under `bindPath`, then writes the pointer file, all under
 * the token. A live listener already at the path wins (`socket_in_use`); a dead node or a stray
 * file there is replaced with rename(2), which under the token is the very node judged dead.
 * Where a file system cannot hard-link, rename is used after the same check.
 */
export async function publishSocket(input: PublishInput): Promise<void> {
  const { privatePath, bindPath, pointerFile, tokenTarget, timeoutMs } = input;
  const outcome = await withTakeoverToken(tokenTarget, async () => {
    const linked = await linkOnto(privatePath, bindPath);
    if (linked !== 'linked') {
      if (linked === 'taken' || (await exists(bindPath))) {
        await refuseLiveListener(bindPath, timeoutMs);
      }
      try {
        await rename(privatePath, bindPath);
      } catch (error) {
        throw new ControlSocketError({
          code: 'bind_failed',
          message: `cannot listen on ${bindPath}: ${(error as Error).message}`,
          cause: error,
        });
      }
    }
    if (pointerFile === null) return;
    try {
      await writeFileAtomic(pointerFile, bindPath, { mode: 0o600 });
    } catch (error) {
      // Still under the token: the node at the path is the one just put there.
      await rm(bindPath, { force: true }).catch(() => {});
      throw error;
    }
  });
  if (!outcome.taken) {
    throw new ControlSocketError({
      code: 'socket_in_use',
      message: `another process kept the socket path ${bindPath} busy (its takeover token)`,
    });
  }
}

export interface RemoveInput {
  readonly bindPath: string;
  readonly pointerFile: string | null;
  /** The node this server bound; `null` (unknown) never matches. */
  readonly identity: SocketNodeIdentity | null;
  readonly tokenTarget: string;
}

/**
 * Removes the socket node and the pointer file only while the path is still the node we bound
 * (or nothing), under the token: a successor that bound the path since keeps both. The pointer
 * goes first, while our node still holds the path: until that node is gone nobody can publish
 * there, so nobody has written a pointer of their own. Best effort.
 */
export async function removeSocketFiles(input: RemoveInput): Promise<void> {
  const { bindPath, pointerFile, identity, tokenTarget } = input;
  await withTakeoverToken(tokenTarget, async () => {
    const stats = await lstat(bindPath).catch(() => null);
    if (stats !== null && !isSameNode(stats, identity)) return;
    if (pointerFile !== null) await removePointer(pointerFile, bindPath);
    if (stats !== null) await rm(bindPath, { force: true }).catch(() => {});
  }).catch(() => {});
}

/**
 * Synchronous `removeSocketFiles`, for `process.on('exit')`: it takes the token without waiting
 * and leaves the files when another process holds it (a node left behind is dead once this
 * process is gone, and the next start replaces it).
 */
export function removeSocketFilesSync(input: RemoveInput): void {
  const { bindPath, pointerFile, identity, tokenTarget } = input;
  try {
    withTakeoverTokenSync(tokenTarget, () => {
      let stats: { dev: number; ino: number } | null = null;
      try {
        stats = lstatSync(bindPath);
      } catch {
        // Already gone.
      }
      if (stats !== null && !isSameNode(stats, identity)) return;
      if (pointerFile !== null) removePointerSync(pointerFile, bindPath);
      if (stats !== null) rmSync(bindPath, { force: true });
    });
  } catch {
    // Best effort on the way out.
  }
}

async function removePointer(pointerFile: string, bindPath: string) {
  try {
    if ((await readFile(pointerFile, 'utf8')).trim() === bindPath) {
      await rm(pointerFile, { force: true });
    }
  } catch {
    // Already gone.
  }
}

function removePointerSync(pointerFile: string, bindPath: string) {
  try {
    if (readFileSync(pointerFile, 'utf8').trim() === bindPath) rmSync(pointerFile, { force: true });
  } catch {
    // Already gone.
  }
}
