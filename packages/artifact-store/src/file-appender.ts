import type { FileHandle } from 'node:fs/promises';

/** Queued bytes past which `append()` waits for the disk before taking more. */
export const DEFAULT_APPENDER_HIGH_WATER_BYTES = 1024 * 1024;

export interface FileAppenderOptions {
  /** Queued bytes past which `append()` waits for the writes in flight. Default 1 MiB. */
  readonly highWaterBytes?: number;
}

/** Drops the first `count` bytes of a list of chunks (what a short `writev` already wrote). */
function dropWritten(chunks: readonly Uint8Array[], count: number): Uint8Array[] {
  const remaining: Uint8Array[] = [];
  let skip = count;
  for (const chunk of chunks) {
    if (skip >= chunk.byteLength) {
      skip -= chunk.byteLength;
      continue;
    }
    remaining.push(skip === 0 ? chunk : chunk.subarray(skip));
    skip = 0;
  }
  return remaining;
}

/**
 * Appends chunks to an open file while the caller keeps reading its source: at most one write is
 * in flight, and whatever arrives meanwhile goes out in the next `writev` as one batch. So a body
 * streamed from a socket reaches the disk without ever being gathered into one large buffer, and
 * the network and the disk work at the same time.
 *
 * Chunks are kept by reference until written; the caller must not reuse them.
 */
export class FileAppender {
  readonly #handle: FileHandle;
  readonly #highWaterBytes: number;
  #queue: Uint8Array[] = [];
  /** Queued plus in flight: what backpressure is measured against. */
  #unwrittenBytes = 0;
  #position = 0;
  #writing: Promise<void> | null = null;
  #failure: { readonly error: unknown } | null = null;

  constructor(handle: FileHandle, options: FileAppenderOptions = {}) {
    this.#handle = handle;
    this.#highWaterBytes = Math.max(1, options.highWaterBytes ?? DEFAULT_APPENDER_HIGH_WATER_BYTES);
  }

  /**
   * Queues `chunk`. Resolves at once while little is queued, or after the writes in flight land
   * when the queue is past its high-water mark (backpressure). Rejects with an earlier write's
   * failure.
   */
  async append(chunk: Uint8Array): Promise<void> {
    this.#throwIfFailed();
    if (chunk.byteLength === 0) return;
    this.#queue.push(chunk);
    this.#unwrittenBytes += chunk.byteLength;
    this.#writing ??= this.#drain();
    if (this.#unwrittenBytes >= this.#highWaterBytes) await this.#writing;
    this.#throwIfFailed();
  }

  /** Waits until every appended byte is written; rejects with a write failure. */
  async flush(): Promise<void> {
    while (this.#writing !== null) await this.#writing;
    this.#throwIfFailed();
  }

  /** Waits for the write in flight without reporting failures: call before closing the file. */
  async settle(): Promise<void> {
    while (this.#writing !== null) await this.#writing;
  }

  #throwIfFailed(): void {
    if (this.#failure !== null) throw this.#failure.error;
  }

  /** Never rejects: a failure is kept and reported by the next `append()` or `flush()`. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        let batch = this.#queue;
        this.#queue = [];
        while (batch.length > 0) {
          const { bytesWritten } = await this.#handle.writev(batch, this.#position);
          if (bytesWritten === 0) throw new Error('the file accepted no bytes');
          this.#position += bytesWritten;
          this.#unwrittenBytes -= bytesWritten;
          batch = dropWritten(batch, bytesWritten);
        }
      }
    } catch (error) {
      this.#failure = { error };
      this.#queue = [];
      this.#unwrittenBytes = 0;
    } finally {
      this.#writing = null;
    }
  }
}
