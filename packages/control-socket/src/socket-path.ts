import { lstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  FALLBACK_SOCKET_PREFIX,
  MAX_SOCKET_PATH_BYTES,
  SOCKET_FILE_NAME,
  SOCKET_POINTER_FILE_NAME,
  WINDOWS_PIPE_PREFIX,
} from './constants.js';
import { homeHash } from './home-hash.js';

export interface SocketPathOptions {
  /** Defaults to `process.platform`. */
  readonly platform?: NodeJS.Platform;
  /** The OS temp folder; defaults to `os.tmpdir()`. */
  readonly temporaryDirectory?: string;
}

export interface ServerSocketLocation {
  /** Where the server binds: a socket path, or a named pipe on Windows. */
  readonly bindPath: string;
  /** `<home>/gateway.sock.path` when the socket lives outside the home, else `null`. */
  readonly pointerFile: string | null;
}

/** True when `candidate` fits in `sun_path` with margin (measured in UTF-8 bytes). */
export function fitsSocketPathLimit(candidate: string): boolean {
  return Buffer.byteLength(candidate, 'utf8') <= MAX_SOCKET_PATH_BYTES;
}

/** `\\.\pipe\hermes-gateway-<hash16>`: stable per home, distinct between homes. */
export async function windowsPipeName(home: string): Promise<string> {
  return `${WINDOWS_PIPE_PREFIX}${await homeHash(home, 'win32')}`;
}

/**
 * Where the server for `home` binds. The home itself when `<home>/gateway.sock` fits the limit;
 * otherwise `hermes-gw-<hash16>.sock` in the temp folder, or in `/tmp` when the temp folder is
 * itself too deep, with a pointer file in the home so clients can find it. When nothing fits, the
 * temp-folder candidate is returned anyway and the bind fails (non-fatally).
 */
export async function resolveServerSocketPath(
  home: string,
  options: SocketPathOptions = {},
): Promise<ServerSocketLocation> {
  const platform = options.platform ?? process.platform;
  if (platform === 'win32') return { bindPath: await windowsPipeName(home), pointerFile: null };
  const direct = directSocketPath(home);
  if (fitsSocketPathLimit(direct)) return { bindPath: direct, pointerFile: null };
  const fileName = `${FALLBACK_SOCKET_PREFIX}${await homeHash(home, platform)}.sock`;
  const candidates = [path.join(options.temporaryDirectory ?? tmpdir(), fileName)];
  candidates.push(path.posix.join('/tmp', fileName));
  const bindPath = candidates.find(fitsSocketPathLimit) ?? (candidates[0] as string);
  return { bindPath, pointerFile: path.join(home, SOCKET_POINTER_FILE_NAME) };
}

/** Why a candidate socket was refused; reported through `onRejected`. */
export interface RejectedSocket {
  readonly path: string;
  readonly reason: string;
}

export interface ClientSocketPathOptions extends SocketPathOptions {
  /** Told about socket files that exist but cannot be trusted. */
  readonly onRejected?: (rejected: RejectedSocket) => void;
}

/**
 * A socket node we may talk to: owned by our effective uid and closed to group and others. The
 * `/tmp` fallback name is guessable, so another local user could pre-bind it; this refuses that.
 * Anything that cannot be checked (missing, unreadable, a bad path) is not trusted.
 *
 * Synchronous on purpose, and only for a path the caller is about to `connect()` to: libuv's
 * `uv_pipe_connect` already resolves that same path with a blocking `connect(2)` on the loop
 * thread, so an `lstat(2)` of it just before adds no new way to stall the loop (a file system
 * that hangs the one hangs the other). The asynchronous `lstat` it replaces cost a thread-pool
 * round trip, as much as the whole exchange with the gateway.
 */
export function isTrustedSocket(
  candidate: string,
  onRejected?: (rejected: RejectedSocket) => void,
): boolean {
  let stats: ReturnType<typeof lstatSync>;
  try {
    // `throwIfNoEntry: false` answers the common "no gateway here" case without building an error.
    stats = lstatSync(candidate, { throwIfNoEntry: false });
  } catch {
    return false;
  }
  if (stats === undefined || !stats.isSocket()) return false;
  const effectiveUid = process.geteuid?.();
  if (effectiveUid !== undefined && stats.uid !== effectiveUid) {
    onRejected?.({
      path: candidate,
      reason: `Ignoring control socket ${candidate}: owned by uid ${stats.uid}, not ${effectiveUid}`,
    });
    return false;
  }
  if ((stats.mode & 0o077) !== 0) {
    onRejected?.({
      path: candidate,
      reason: `Ignoring control socket ${candidate}: mode ${(stats.mode & 0o777).toString(8)} allows group/other access`,
    });
    return false;
  }
  return true;
}

// The last home asked about and its socket path: a client polling one gateway asks for the same
// home every time, and the join is a measurable part of a query.
let lastDirectHome: string | undefined;
let lastDirectPath = '';

/** `<home>/gateway.sock`, where a gateway with a short enough home listens. */
export function directSocketPath(home: string): string {
  if (home !== lastDirectHome) {
    lastDirectPath = path.join(home, SOCKET_FILE_NAME);
    lastDirectHome = home;
  }
  return lastDirectPath;
}

/** The trusted target named by `<home>/gateway.sock.path`, or `null`. Never throws. */
export async function resolvePointerTarget(
  home: string,
  options: ClientSocketPathOptions = {},
): Promise<string | null> {
  let pointed: string;
  try {
    pointed = await readFile(path.join(home, SOCKET_POINTER_FILE_NAME), 'utf8');
  } catch {
    return null;
  }
  const target = pointed.replace(/^\uFEFF/, '').trim();
  if (target === '' || !path.isAbsolute(target)) return null;
  return isTrustedSocket(target, options.onRejected) ? target : null;
}

/**
 * Where a client for `home` connects, or `null` when no trustworthy socket exists: the direct
 * `<home>/gateway.sock` wins, else the pointer file's target. Any read error ⇒ `null`.
 */
export async function resolveClientSocketPath(
  home: string,
  options: ClientSocketPathOptions = {},
): Promise<string | null> {
  const platform = options.platform ?? process.platform;
  if (platform === 'win32') return windowsPipeName(home);
  try {
    const direct = directSocketPath(home);
    if (isTrustedSocket(direct, options.onRejected)) return direct;
    return await resolvePointerTarget(home, options);
  } catch {
    return null;
  }
}
