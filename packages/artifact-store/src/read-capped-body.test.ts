import { describe, expect, it } from 'vitest';
import { readCappedBody } from './read-capped-body.js';

const CHUNK_BYTES = 1024;

/** A body that never ends on its own and counts what was pulled from it. */
function endlessBody() {
  let pulledBytes = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulledBytes += CHUNK_BYTES;
        controller.enqueue(new Uint8Array(CHUNK_BYTES));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    pulledBytes: () => pulledBytes,
    cancelled: () => cancelled,
  };
}

function bodyOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
}

describe('readCappedBody', () => {
  it('stops reading an endless body just past the cap and cancels it', async () => {
    const body = endlessBody();
    const result = await readCappedBody(body.stream, 10 * CHUNK_BYTES);
    expect(result.exceeded).toBe(true);
    expect(body.cancelled()).toBe(true);
    expect(body.pulledBytes()).toBeLessThanOrEqual(12 * CHUNK_BYTES);
  });

  it('returns a body of exactly the cap', async () => {
    const result = await readCappedBody(bodyOf(['abc', 'de']), 5);
    expect(result).toMatchObject({ exceeded: false });
    expect(result.data.toString()).toBe('abcde');
  });

  it('flags a body one byte over the cap', async () => {
    expect((await readCappedBody(bodyOf(['abc', 'def']), 5)).exceeded).toBe(true);
  });

  it('treats a missing body as empty', async () => {
    const result = await readCappedBody(null, 5);
    expect(result.exceeded).toBe(false);
    expect(result.data.byteLength).toBe(0);
  });
});
