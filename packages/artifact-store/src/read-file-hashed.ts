import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

/** Bytes per read: each read is hashed while the next one is in flight. */
export const READ_SLICE_BYTES = 1024 * 1024;

export interface HashedFile {
  /** Exactly the bytes that were hashed: send these, never a second read of the file. */
  readonly data: Buffer<ArrayBuffer>;
  readonly sha256: string;
}

/**
 * Reads a file of a known size into one buffer and hashes it on the way in: the hash of slice N
 * runs on the loop while the thread pool reads slice N + 1, so reading and verifying cost about
 * one pass, and no slice of hashing holds the loop for long.
 *
 * Returns `null` when the file's size is not `expectedBytes` (it was changed behind the store's
 * back): nothing of another size can match the recorded checksum, so it is not read at all.
 * Rejects as `open` does when the file is missing.
 */
export async function readFileHashed(
  filePath: string,
  expectedBytes: number,
): Promise<HashedFile | null> {
  const handle = await open(filePath, 'r');
  try {
    const { size } = await handle.stat();
    if (size !== expectedBytes) return null;
    const data = Buffer.allocUnsafe(size) as Buffer<ArrayBuffer>;
    const hash = createHash('sha256');
    const readAt = (offset: number) =>
      handle.read(data, offset, Math.min(READ_SLICE_BYTES, size - offset), offset);
    let offset = 0;
    let pending = size > 0 ? readAt(0) : null;
    while (pending !== null) {
      const { bytesRead } = await pending;
      // The file shrank after the size check: it is no longer the stored artifact.
      if (bytesRead === 0) return null;
      const start = offset;
      offset += bytesRead;
      pending = offset < size ? readAt(offset) : null;
      hash.update(data.subarray(start, offset));
    }
    return { data, sha256: hash.digest('hex') };
  } finally {
    await handle.close();
  }
}
