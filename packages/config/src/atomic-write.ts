import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** File mode for a newly written file. Default 0o600: config and state files hold private data. */
  readonly mode?: number;
}

function tempPathFor(target: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  return path.join(path.dirname(target), `.${path.basename(target)}.${suffix}`);
}

/**
 * Writes `data` to `target` so that readers see either the old file or the whole new one:
 * temp file in the same folder, fsync, rename. A failure removes the temp file and rethrows.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

/** Synchronous twin of `writeFileAtomic`, for exit paths and code that must not yield. */
export function writeFileAtomicSync(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): void {
  const temp = tempPathFor(target);
  try {
    const fd = openSync(temp, 'wx', options.mode ?? 0o600);
    try {
      const buffer = typeof data === 'string' ? Buffer.from(data) : data;
      let offset = 0;
      while (offset < buffer.byteLength) {
        offset += writeSync(fd, buffer, offset, buffer.byteLength - offset);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
