export interface CappedBody {
  /** The bytes read; complete only when `exceeded` is false. */
  readonly data: Buffer;
  /** True when the stream held more than `limit` bytes; reading stopped there. */
  readonly exceeded: boolean;
}

/**
 * Reads a request body stream but never more than `limit + 1` bytes: as soon as the count passes
 * `limit` the stream is cancelled, so an oversized upload costs at most one extra chunk of memory
 * however large the client claims or sends.
 */
export async function readCappedBody(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<CappedBody> {
  if (body === null) return { data: Buffer.alloc(0), exceeded: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        return { data: Buffer.alloc(0), exceeded: true };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return { data: Buffer.concat(chunks, total), exceeded: false };
}
