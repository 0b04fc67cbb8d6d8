import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/**
 * Bytes per chunk of a streamed download. Every chunk is a fresh buffer (the consumer may hold it
 * by reference until the socket has sent it), so the size trades per-chunk overhead (a thread-pool
 * read, a hash update, a socket write and a drain per chunk) against memory: measured through the
 * routes, a 10 MiB download took ~55 ms in 512 KiB chunks, ~65-75 ms in 256 KiB and ~80 ms in
 * 64 KiB ones, and 1 MiB chunks gained nothing more. glibc serves a fresh process's first
 * allocations of this size with `mmap` (first touches fault) and raises its threshold once one is
 * freed, so after the first few megabytes the chunks come from recycled heap memory.
 */
export const VERIFIED_STREAM_CHUNK_BYTES = 512 * 1024;

/** Chunks a verified stream reads ahead of its consumer. */
export const VERIFIED_STREAM_READ_AHEAD_CHUNKS = 2;

/**
 * Reads `length` bytes at `position` into `target`, looping over short reads. Returns how many
 * bytes arrived: fewer than `length` only when the file ended first.
 */
export async function readFullyAt(
  handle: FileHandle,
  options: { target: Uint8Array; length: number; position: number },
): Promise<number> {
  let filled = 0;
  while (filled < options.length) {
    const { bytesRead } = await handle.read(
      options.target,
      filled,
      options.length - filled,
      options.position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

export interface HashOpenFileOptions {
  readonly handle: FileHandle;
  /** Bytes to hash from the start of the file. */
  readonly sizeBytes: number;
  /**
   * Two buffers of one size, owned by this call until it settles: the thread pool reads into one
   * while the loop hashes the other. Passing the same pair again and again means their pages
   * are touched once, not on every call.
   */
  readonly scratch: readonly [Uint8Array, Uint8Array];
}

/**
 * SHA-256 (hex) of the first `sizeBytes` of an open file, or `null` when the file holds fewer.
 * Nothing is kept: the bytes pass through the two scratch buffers and are gone.
 */
export async function hashOpenFile(options: HashOpenFileOptions): Promise<string | null> {
  const { handle, sizeBytes, scratch } = options;
  const sliceBytes = Math.min(scratch[0].byteLength, scratch[1].byteLength);
  if (sliceBytes <= 0) throw new RangeError('scratch buffers must not be empty');
  const hash = createHash('sha256');
  const readSlice = (index: number, position: number) => {
    const length = Math.min(sliceBytes, sizeBytes - position);
    return readFullyAt(handle, { target: scratch[index % 2]!, length, position }).then(
      (filled) => ({ filled, length }),
    );
  };
  let index = 0;
  let position = 0;
  let pending = sizeBytes > 0 ? readSlice(0, 0) : null;
  while (pending !== null) {
    const { filled, length } = await pending;
    if (filled < length) return null;
    const current = scratch[index % 2]!;
    position += length;
    index += 1;
    // The next slice goes into the other buffer, so hashing this one overlaps the read.
    pending = position < sizeBytes ? readSlice(index, position) : null;
    hash.update(current.subarray(0, length));
  }
  return hash.digest('hex');
}

export interface VerifiedFileStreamOptions {
  /** Owned by the stream from now on: closed when it ends, fails or is cancelled. */
  readonly handle: FileHandle;
  readonly sizeBytes: number;
  /** Whether the SHA-256 (hex) of everything read is the expected one; compare in constant time. */
  readonly matches: (sha256: string) => boolean;
  /** The error the stream fails with when the bytes read are not the expected ones. */
  readonly mismatch: () => Error;
  /** Default `VERIFIED_STREAM_CHUNK_BYTES`. */
  readonly chunkBytes?: number;
  /**
   * Milliseconds the stream waits for its consumer to take the next chunk; past that it fails
   * with `stalled()` and closes the handle. Unset, 0 or not finite: it waits forever.
   */
  readonly idleTimeoutMs?: number;
  /** The error the stream fails with when its consumer stalls. */
  readonly stalled?: () => Error;
}

/**
 * Streams the first `sizeBytes` of an open file in small chunks and hashes them on the way.
 * The last chunk is held back until the digest of the whole matches: when it does not (or the
 * file turns out shorter), the stream errors instead of closing, so a consumer can never take
 * the bytes as complete; an HTTP response carrying it is torn down short of its
 * `Content-Length`. The file handle is closed on the end, on an error, on cancellation and when
 * the consumer leaves chunks untaken for `idleTimeoutMs`.
 */
export function createVerifiedFileStream(
  options: VerifiedFileStreamOptions,
): ReadableStream<Uint8Array> {
  const { handle, sizeBytes } = options;
  const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? VERIFIED_STREAM_CHUNK_BYTES));
  const hash = createHash('sha256');
  let position = 0;
  let released = false;
  const idleTimeoutMs = options.idleTimeoutMs ?? 0;
  let idleTimer: NodeJS.Timeout | undefined;
  const release = async () => {
    if (released) return;
    released = true;
    clearTimeout(idleTimer);
    try {
      // Waits for a read still in flight, so the descriptor is never closed under it.
      await handle.close();
    } catch {
      // Closing fails only for a handle that is already closed; nothing is left to release.
    }
  };

  // Armed whenever chunks wait for the consumer; a pull (the consumer took one) disarms it.
  const armIdleTimer = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (!(idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs))) return;
    idleTimer = setTimeout(() => {
      if (released) return;
      void release();
      controller.error(
        options.stalled?.() ?? new Error(`stream consumer idle for ${idleTimeoutMs} ms`),
      );
    }, idleTimeoutMs);
    // A stalled download must not keep the process alive.
    idleTimer.unref();
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        clearTimeout(idleTimer);
        try {
          const length = Math.min(chunkBytes, sizeBytes - position);
          // A fresh chunk each time: the consumer may still hold earlier ones by reference.
          const chunk = Buffer.allocUnsafeSlow(length);
          const filled =
            length > 0 ? await readFullyAt(handle, { target: chunk, length, position }) : 0;
          // Cancelled while the read was in flight: the consumer is gone.
          if (released) return;
          if (filled < length) {
            await release();
            controller.error(options.mismatch());
            return;
          }
          hash.update(chunk);
          position += length;
          if (position < sizeBytes) {
            controller.enqueue(chunk);
            armIdleTimer(controller);
            return;
          }
          await release();
          if (!options.matches(hash.digest('hex'))) {
            controller.error(options.mismatch());
            return;
          }
          if (length > 0) controller.enqueue(chunk);
          controller.close();
        } catch (error) {
          await release();
          controller.error(error);
        }
      },
      cancel: release,
    },
    // Read-ahead: the next chunks are read from the page cache while the consumer sends these.
    { highWaterMark: VERIFIED_STREAM_READ_AHEAD_CHUNKS },
  );
}
