import { randomBytes } from 'node:crypto';
import { link, open, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Creates `target` holding `content`, failing with `EEXIST` if it already exists. The content is
 * written and synced to a private temp file first and then hard-linked into place, so nobody can
 * ever observe the file empty or half-written (an empty PID file would look stale and be removed).
 */
export async function createFileExclusive(target: string, content: string): Promise<void> {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${suffix}`);
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
