import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import {
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { errorCode } from './error-code.js';
import { pidRecordTextIsStale } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';

/** A private name next to `target`, unique to this call. */
function siblingName(target: string, purpose: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}.${purpose}`;
  return path.join(path.dirname(target), `.${path.basename(target)}.${suffix}`);
}

/**
 * Creates `target` holding `content`, failing with `EEXIST` if it already exists. The content is
 * written and synced to a private temp file first and then hard-linked into place, so nobody can
 * ever observe the file empty or half-written (an empty PID file would look stale and be removed).
 */
export async function createFileExclusive(target: string, content: string): Promise<void> {
  const temp = siblingName(target, 'tmp');
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
}

/** How long a taker waits for another live taker of the same file before giving up (ms). */
export const TAKEOVER_WAIT_MS = 2000;
const TAKEOVER_POLL_MS = 5;
const OWNER_SUFFIX = '.owner';

/** The token a taker holds while it judges and removes `target`: the folder `<target>.takeover`. */
export function takeoverTokenPath(target: string): string {
  return `${target}.takeover`;
}

/** `{ pid, start_time }` of this process, written into the tokens it holds. */
interface OwnerRecord {
  readonly pid: number;
  readonly start_time?: number | null;
}

let ownRecord: OwnerRecord | undefined;

/**
 * This process's owner record, start time included. Read once; a synchronous taker (an exit hook)
 * uses it if an earlier asynchronous call has read it, else names the PID alone.
 */
async function ownOwnerRecord(): Promise<OwnerRecord> {
  if (ownRecord?.pid !== process.pid) {
    ownRecord = { pid: process.pid, start_time: await readProcessStartTime(process.pid) };
  }
  return ownRecord;
}

/** Reads this process's start time now, so a later synchronous take names it too. */
export async function prepareTakeoverTokens(): Promise<void> {
  await ownOwnerRecord();
}

function syncOwnerRecord(): OwnerRecord {
  return ownRecord?.pid === process.pid ? ownRecord : { pid: process.pid };
}

/**
 * Errors of the move that puts a token in place meaning the place is taken: a token folder with
 * an owner (`ENOTEMPTY`, `EEXIST`; `EPERM`/`EACCES` where a folder cannot replace a folder, as on
 * Windows), or a token file of the earlier single-file format (`ENOTDIR`).
 */
const TOKEN_BUSY_CODES = new Set(['ENOTEMPTY', 'EEXIST', 'EPERM', 'EACCES', 'ENOTDIR', 'EISDIR']);

/**
 * A token is a folder holding one owner file, `<pid>.<random>.owner`, whose name no other take
 * ever uses. It is assembled under a private name and moved into place with rename(2), which puts
 * a folder only where there is none or an empty one: so a token folder is empty only once its
 * owner file is gone (released, or cleared as dead) and it is nobody's. That gives every step a
 * removal that cannot hit anybody else's token:
 * - a holder releases by unlinking its own owner file, then removing the folder only if empty;
 * - a taker clears a dead holder by unlinking that holder's owner file *by its unique name* —
 *   wherever the token has gone since, the name can only ever denote the record it judged — and
 *   then the folder only if empty.
 * The earlier token format — a file at the same path, put back after a move aside — could be
 * moved aside while a live taker held it and then lost or put back after its holder released it.
 */
interface Staged {
  readonly folder: string;
  readonly ownerName: string;
}

function stageName(token: string): Staged {
  const nonce = randomBytes(6).toString('hex');
  return {
    folder: siblingName(token, 'staging'),
    ownerName: `${process.pid}.${nonce}${OWNER_SUFFIX}`,
  };
}

/** Releases a held token (see `Staged`): a taker that moved in since keeps its own. */
async function releaseToken(token: string, ownerName: string): Promise<void> {
  await unlink(path.join(token, ownerName)).catch(() => {});
  await rmdir(token).catch(() => {});
}

function releaseTokenSync(token: string, ownerName: string): void {
  try {
    unlinkSync(path.join(token, ownerName));
  } catch {
    // Cleared as dead by another taker: nothing of ours left in it.
  }
  try {
    rmdirSync(token);
  } catch {
    // Not empty (another taker moved in since) or already gone.
  }
}

/**
 * Clears the token at `token` if its holder is dead (or it is an empty, ownerless folder). True
 * when the token may be free now (try again at once), false when a live holder has it.
 */
async function clearDeadToken(token: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(token);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return true;
    if (errorCode(error) === 'ENOTDIR') return clearEarlierFormatToken(token);
    return false;
  }
  const owners = entries.filter((name) => name.endsWith(OWNER_SUFFIX));
  // Anything else in a token folder was put there by no taker: leave it, fail closed.
  if (owners.length !== entries.length) return false;
  for (const name of owners) {
    let text: string;
    try {
      text = await readFile(path.join(token, name), 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return true;
      return false;
    }
    if (!(await pidRecordTextIsStale(text))) return false;
    await unlink(path.join(token, name)).catch(() => {});
  }
  // Only an empty folder goes: never one another taker has moved in since.
  await rmdir(token).catch(() => {});
  return true;
}

/**
 * A token file of the earlier format (left by a taker of an earlier version that died holding
 * it). unlink(2) never removes a folder, so it cannot remove a token of this format that replaced
 * the file meanwhile.
 */
async function clearEarlierFormatToken(token: string): Promise<boolean> {
  const text = await readFile(token, 'utf8').catch(() => null);
  if (text === null || !(await pidRecordTextIsStale(text))) return false;
  await unlink(token).catch(() => {});
  return true;
}

/** What `withTakeoverToken` came to: `taken: false` when a live taker kept the token past the wait. */
export type TokenOutcome<T> =
  | { readonly taken: true; readonly value: T }
  | { readonly taken: false };

/**
 * Runs `work` holding the takeover token of `target`, waiting out a live holder (it holds the
 * token for the few milliseconds of one judgement) and clearing a token whose holder died.
 * `{ taken: false }` when a live holder kept it past `waitMs`.
 */
export async function withTakeoverToken<T>(
  target: string,
  work: () => Promise<T>,
  options: { readonly waitMs?: number } = {},
): Promise<TokenOutcome<T>> {
  const token = takeoverTokenPath(target);
  const staged = stageName(token);
  const owner = await ownOwnerRecord();
  await mkdir(staged.folder, { mode: 0o700 });
  try {
    await writeFile(path.join(staged.folder, staged.ownerName), JSON.stringify(owner), {
      mode: 0o600,
    });
    const deadline = performance.now() + (options.waitMs ?? TAKEOVER_WAIT_MS);
    for (;;) {
      try {
        await rename(staged.folder, token);
        break;
      } catch (error) {
        if (!TOKEN_BUSY_CODES.has(errorCode(error) ?? '')) throw error;
      }
      const cleared = await clearDeadToken(token);
      if (performance.now() >= deadline) return { taken: false };
      if (!cleared) await delay(TAKEOVER_POLL_MS);
    }
  } finally {
    // Gone once moved into place; still here when never taken.
    await rm(staged.folder, { recursive: true, force: true });
  }
  try {
    return { taken: true, value: await work() };
  } finally {
    await releaseToken(token, staged.ownerName);
  }
}

/**
 * Synchronous `withTakeoverToken` for `process.on('exit')`: one attempt, no waiting and no
 * clearing; `{ taken: false }` when any token is there (fail closed — what `work` would have
 * removed is then cleared by the next taker, as this process is about to be gone).
 */
export function withTakeoverTokenSync<T>(target: string, work: () => T): TokenOutcome<T> {
  const token = takeoverTokenPath(target);
  const staged = stageName(token);
  try {
    mkdirSync(staged.folder, { mode: 0o700 });
    writeFileSync(path.join(staged.folder, staged.ownerName), JSON.stringify(syncOwnerRecord()), {
      mode: 0o600,
    });
    renameSync(staged.folder, token);
  } catch {
    return { taken: false };
  } finally {
    rmSync(staged.folder, { recursive: true, force: true });
  }
  try {
    return { taken: true, value: work() };
  } finally {
    releaseTokenSync(token, staged.ownerName);
  }
}

/**
 * Removes `target` if `shouldRemove(text)` says so, judged on the file as it is at the moment of
 * removal, never on an earlier read. Every remover of these files holds the takeover token while
 * it reads, judges and removes, and nobody can create `target` while it exists (creation is
 * exclusive), so the file judged is the file removed. Without the token, two processes taking over
 * the same stale lock race (the slower deletes the fresh lock the faster just created and both
 * own it), and an owner releasing its file could delete a successor's. Resolves true when the path
 * is free (file removed, or already gone), false when the file stays — judged not to be removed,
 * or another live taker held the token past `waitMs` (fail closed: not removed).
 */
export async function removeStaleFile(
  target: string,
  shouldRemove: (text: string) => Promise<boolean> | boolean,
  options: { readonly waitMs?: number } = {},
): Promise<boolean> {
  const outcome = await withTakeoverToken(
    target,
    async () => {
      let text: string;
      try {
        text = await readFile(target, 'utf8');
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return true;
        // Unreadable (e.g. a root-owned leftover): judged on no content, as a reader would see it.
        text = '';
      }
      if (!(await shouldRemove(text))) return false;
      await rm(target, { force: true });
      return true;
    },
    options,
  );
  return outcome.taken && outcome.value;
}

/**
 * Synchronous `removeStaleFile` for `process.on('exit')` (see `withTakeoverTokenSync`): false
 * when the token was held or the file is kept.
 */
export function removeStaleFileSync(
  target: string,
  shouldRemove: (text: string) => boolean,
): boolean {
  const outcome = withTakeoverTokenSync(target, () => {
    let text: string;
    try {
      text = readFileSync(target, 'utf8');
    } catch (error) {
      return errorCode(error) === 'ENOENT';
    }
    if (!shouldRemove(text)) return false;
    rmSync(target, { force: true });
    return true;
  });
  return outcome.taken && outcome.value;
}
