import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
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

/** The token a taker holds while it judges and removes `target`: `<target>.takeover`. */
export function takeoverTokenPath(target: string): string {
  return `${target}.takeover`;
}

/**
 * Moves `file` aside and removes it if what was moved is stale by `isStale`; a file that is not
 * stale is linked straight back (unless another file took the path meanwhile: it was created
 * exclusively, so it stands). Only one of several racing callers gets each file. Used for the
 * takeover token alone: between the move and the link-back a third process could create the path,
 * which is harmless for a token nobody holds (its holder died) but not for a lock.
 */
async function removeAsideIfStale(
  file: string,
  isStale: (text: string) => Promise<boolean>,
): Promise<void> {
  const aside = siblingName(file, 'stale');
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const text = await readFile(aside, 'utf8').catch(() => '');
    if (!(await isStale(text))) await link(aside, file).catch(() => {});
  } finally {
    await rm(aside, { force: true });
  }
}

/**
 * Takes the takeover token of `target`, waiting out a live taker (it holds the token for the few
 * milliseconds of one judgement) and clearing a token whose holder died mid-takeover. False when a
 * live taker kept it past `waitMs`.
 */
async function takeToken(token: string, waitMs: number): Promise<boolean> {
  const content = JSON.stringify({
    pid: process.pid,
    start_time: await readProcessStartTime(process.pid),
  });
  const deadline = performance.now() + waitMs;
  for (;;) {
    try {
      await createFileExclusive(token, content);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(token, 'utf8').catch(() => null);
    if (text !== null && (await pidRecordTextIsStale(text))) {
      await removeAsideIfStale(token, pidRecordTextIsStale);
      continue;
    }
    if (performance.now() >= deadline) return false;
    await delay(TAKEOVER_POLL_MS);
  }
}

/**
 * Removes `target` if it is stale by `isStale(text)`, judged on the file as it is at the moment of
 * removal, never on an earlier read. Takers serialise on an exclusive `<target>.takeover` token:
 * while one holds it nobody else removes `target`, and nobody can create `target` while it exists,
 * so the file judged is the file removed. Without the token, two processes taking over the same
 * stale lock race: the slower deletes the fresh lock the faster just created and both own it.
 * Resolves true when the path is free (stale file removed, or already gone), false when the file
 * is not stale — or another live taker held the token past `waitMs` (fail closed: not removed).
 */
export async function removeStaleFile(
  target: string,
  isStale: (text: string) => Promise<boolean>,
  options: { readonly waitMs?: number } = {},
): Promise<boolean> {
  const token = takeoverTokenPath(target);
  if (!(await takeToken(token, options.waitMs ?? TAKEOVER_WAIT_MS))) return false;
  try {
    let text: string;
    try {
      text = await readFile(target, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
      // Unreadable (e.g. a root-owned leftover): judged on no content, as a reader would see it.
      text = '';
    }
    if (!(await isStale(text))) return false;
    await rm(target, { force: true });
    return true;
  } finally {
    await rm(token, { force: true });
  }
}
