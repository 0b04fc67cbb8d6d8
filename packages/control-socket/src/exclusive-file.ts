import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

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

/**
 * Removes `target` if the file actually removed is stale by `isStale(text)`, judged on what was
 * removed rather than on an earlier read. Without this, two processes taking over the same stale
 * file race: the slower one deletes the fresh file the faster one just created, and both believe
 * they own it. The file is moved aside atomically first, so only one taker gets each file; a
 * fresh file moved aside by mistake is linked straight back. Resolves true when the path is free
 * (stale file removed, or already gone), false when a live owner's file was put back.
 */
export async function removeStaleFile(
  target: string,
  isStale: (text: string) => Promise<boolean>,
): Promise<boolean> {
  const aside = siblingName(target, 'stale');
  try {
    await rename(target, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
  try {
    const text = await readFile(aside, 'utf8').catch(() => '');
    if (await isStale(text)) return true;
    // EEXIST: another file took the path in the meantime; it was created exclusively, so it stands.
    await link(aside, target).catch(() => {});
    return false;
  } finally {
    await rm(aside, { force: true });
  }
}
