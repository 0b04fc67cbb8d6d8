import { describe, expect, it } from 'vitest';
import { exceedsCap, nonEmptyBodyChunks } from './body-chunks.js';

const CHUNK_BYTES = 1024;

function bodyOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
}

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
  return { stream, pulledBytes: () => pulledBytes, cancelled: () => cancelled };
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += new TextDecoder().decode(chunk);
  return text;
}

describe('nonEmptyBodyChunks', () => {
  it('reports a missing body and a body of only empty chunks as empty', async () => {
    expect(await nonEmptyBodyChunks(null)).toBeNull();
    expect(await nonEmptyBodyChunks(bodyOf([]))).toBeNull();
    expect(await nonEmptyBodyChunks(bodyOf(['', '']))).toBeNull();
  });

  it('yields every byte, the peeked first chunk included, skipping empty chunks', async () => {
    const chunks = await nonEmptyBodyChunks(bodyOf(['', 'ab', '', 'cd', 'e']));
    expect(chunks).not.toBeNull();
    expect(await collect(chunks!)).toBe('abcde');
  });

  it('cancels the stream when the consumer stops early', async () => {
    const body = endlessBody();
    const chunks = await nonEmptyBodyChunks(body.stream);
    for await (const _chunk of chunks!) break;
    expect(body.cancelled()).toBe(true);
    expect(body.pulledBytes()).toBeLessThanOrEqual(3 * CHUNK_BYTES);
  });
});

describe('exceedsCap', () => {
  it('tells a body over the cap from one at the cap', async () => {
    expect(await exceedsCap((await nonEmptyBodyChunks(bodyOf(['abc', 'de'])))!, 5)).toBe(false);
    expect(await exceedsCap((await nonEmptyBodyChunks(bodyOf(['abc', 'def'])))!, 5)).toBe(true);
  });

  it('stops an endless body just past the cap and cancels it', async () => {
    const body = endlessBody();
    expect(await exceedsCap((await nonEmptyBodyChunks(body.stream))!, 10 * CHUNK_BYTES)).toBe(true);
    expect(body.cancelled()).toBe(true);
    expect(body.pulledBytes()).toBeLessThanOrEqual(13 * CHUNK_BYTES);
  });
});
