/**
 * Waits for the first non-empty chunk of a body. Returns `null` when the body ends without a byte
 * (so an empty upload is refused before anything touches the disk); otherwise an iterable of
 * every chunk, that first one included. Leaving the iteration early (a `break` or a throw in the
 * consumer) returns the source's iterator, which cancels a web stream, so an oversized or refused
 * body is not read on.
 */
export async function nonEmptyBodyChunks(
  body: AsyncIterable<Uint8Array> | null,
): Promise<AsyncIterable<Uint8Array> | null> {
  if (body === null) return null;
  const iterator = body[Symbol.asyncIterator]();
  for (;;) {
    const step = await iterator.next();
    if (step.done === true) return null;
    if (step.value.byteLength > 0) return continueFrom(iterator, step.value);
  }
}

async function* continueFrom(
  iterator: AsyncIterator<Uint8Array>,
  first: Uint8Array,
): AsyncGenerator<Uint8Array, void, undefined> {
  let finished = false;
  try {
    yield first;
    for (;;) {
      const step = await iterator.next();
      if (step.done === true) {
        finished = true;
        return;
      }
      if (step.value.byteLength > 0) yield step.value;
    }
  } finally {
    // Reached on an early exit too: tell the source to stop instead of leaving it mid-body.
    if (!finished) {
      try {
        await iterator.return?.();
      } catch {
        // The source already failed; there is nothing left to stop.
      }
    }
  }
}

/**
 * Counts the chunks without keeping them and reports whether they hold more than `limit` bytes.
 * Stops (returning the source's iterator) at the chunk that passes the limit.
 */
export async function exceedsCap(
  chunks: AsyncIterable<Uint8Array>,
  limit: number,
): Promise<boolean> {
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > limit) return true;
  }
  return false;
}
