import { createHash, randomBytes } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  createVerifiedFileStream,
  hashOpenFile,
  readFullyAt,
  VERIFIED_STREAM_CHUNK_BYTES,
  VERIFIED_STREAM_READ_AHEAD_CHUNKS,
} from './verified-file-stream.js';

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

async function fileWith(data: Uint8Array) {
  const home = await tempHome('hermes-verified-stream-');
  const filePath = path.join(home.path, 'artifact.bin');
  await writeFile(filePath, data);
  return filePath;
}

class MismatchForTest extends Error {}
class StalledForTest extends Error {}

function streamOf(
  handle: Awaited<ReturnType<typeof open>>,
  options: { sizeBytes: number; sha256: string; chunkBytes?: number; idleTimeoutMs?: number },
) {
  return createVerifiedFileStream({
    handle,
    sizeBytes: options.sizeBytes,
    matches: (digest) => digest === options.sha256,
    mismatch: () => new MismatchForTest('bytes changed'),
    ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    stalled: () => new StalledForTest('consumer stalled'),
  });
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** 5000 random bytes in a file, streamed honestly (right size and digest) in 1000-byte chunks. */
async function fiveChunkStream(options: { idleTimeoutMs?: number } = {}) {
  const data = randomBytes(5000);
  const handle = await open(await fileWith(data), 'r');
  const stream = streamOf(handle, {
    sizeBytes: data.byteLength,
    sha256: sha256(data),
    chunkBytes: 1000,
    ...options,
  });
  return { data, handle, stream };
}

/** Reads a stream to its end or its error, keeping what arrived before an error. */
async function drain(stream: ReadableStream<Uint8Array>) {
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
    return { data: Buffer.concat(chunks), chunks, error: null };
  } catch (error) {
    return { data: Buffer.concat(chunks), chunks, error };
  }
}

describe('readFullyAt', () => {
  it('fills the requested range and reports a short count at the end of the file', async () => {
    const data = randomBytes(5000);
    const handle = await open(await fileWith(data), 'r');
    try {
      const target = Buffer.alloc(3000);
      expect(await readFullyAt(handle, { target, length: 3000, position: 1000 })).toBe(3000);
      expect(target.equals(data.subarray(1000, 4000))).toBe(true);
      expect(await readFullyAt(handle, { target, length: 3000, position: 4000 })).toBe(1000);
    } finally {
      await handle.close();
    }
  });
});

describe('hashOpenFile', () => {
  it('hashes a file across many slices of two small scratch buffers', async () => {
    const data = randomBytes(10_007);
    const handle = await open(await fileWith(data), 'r');
    try {
      const scratch = [Buffer.alloc(1000), Buffer.alloc(1000)] as const;
      expect(await hashOpenFile({ handle, sizeBytes: data.byteLength, scratch })).toBe(
        sha256(data),
      );
      expect(await hashOpenFile({ handle, sizeBytes: 0, scratch })).toBe(sha256(Buffer.alloc(0)));
    } finally {
      await handle.close();
    }
  });

  it('returns null when the file holds fewer bytes than asked for', async () => {
    const data = randomBytes(2500);
    const handle = await open(await fileWith(data), 'r');
    try {
      const scratch = [Buffer.alloc(1024), Buffer.alloc(1024)] as const;
      expect(await hashOpenFile({ handle, sizeBytes: 2501, scratch })).toBeNull();
    } finally {
      await handle.close();
    }
  });
});

describe('createVerifiedFileStream', () => {
  it('streams exactly the verified bytes in chunks of at most the chunk size, then closes the file', async () => {
    const data = randomBytes(3 * VERIFIED_STREAM_CHUNK_BYTES + 123);
    const handle = await open(await fileWith(data), 'r');
    const result = await drain(
      streamOf(handle, { sizeBytes: data.byteLength, sha256: sha256(data) }),
    );

    expect(result.error).toBeNull();
    expect(result.data.equals(data)).toBe(true);
    expect(result.chunks).toHaveLength(4);
    for (const chunk of result.chunks) {
      expect(chunk.byteLength).toBeLessThanOrEqual(VERIFIED_STREAM_CHUNK_BYTES);
    }
    // A closed FileHandle reports fd -1.
    expect(handle.fd).toBe(-1);
  });

  it('closes cleanly with no chunk for an empty file', async () => {
    const handle = await open(await fileWith(Buffer.alloc(0)), 'r');
    const result = await drain(streamOf(handle, { sizeBytes: 0, sha256: sha256(Buffer.alloc(0)) }));
    expect(result.error).toBeNull();
    expect(result.chunks).toHaveLength(0);
    expect(handle.fd).toBe(-1);
  });

  it('errors instead of closing, and withholds the last chunk, when the bytes do not match', async () => {
    const data = randomBytes(2500);
    const handle = await open(await fileWith(data), 'r');
    const result = await drain(
      streamOf(handle, {
        sizeBytes: data.byteLength,
        sha256: sha256(randomBytes(8)),
        chunkBytes: 1000,
      }),
    );

    expect(result.error).toBeInstanceOf(MismatchForTest);
    // The first two chunks went out; the last one, which completes the digest, never does.
    expect(result.data.equals(data.subarray(0, 2000))).toBe(true);
    expect(handle.fd).toBe(-1);
  });

  it('errors when the file is changed through another descriptor while it streams', async () => {
    // Far more chunks than the stream reads ahead, so the tail is read after the change.
    const chunkBytes = 1000;
    const data = randomBytes(VERIFIED_STREAM_READ_AHEAD_CHUNKS * chunkBytes * 5);
    const filePath = await fileWith(data);
    const handle = await open(filePath, 'r');
    const stream = streamOf(handle, {
      sizeBytes: data.byteLength,
      sha256: sha256(data),
      chunkBytes,
    });
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);

    const writer = await open(filePath, 'r+');
    await writer.write(Buffer.alloc(500, 0x41), 0, 500, data.byteLength - 500);
    await writer.close();

    let failure: unknown = null;
    try {
      for (;;) {
        const step = await reader.read();
        if (step.done) break;
      }
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(MismatchForTest);
    expect(handle.fd).toBe(-1);
  });

  it('errors when the file turns out shorter than its recorded size', async () => {
    const data = randomBytes(1500);
    const handle = await open(await fileWith(data), 'r');
    const result = await drain(
      streamOf(handle, { sizeBytes: 2000, sha256: sha256(data), chunkBytes: 1000 }),
    );
    expect(result.error).toBeInstanceOf(MismatchForTest);
    expect(result.data.byteLength).toBe(1000);
    expect(handle.fd).toBe(-1);
  });

  it('closes the file when the consumer cancels midway', async () => {
    const { handle, stream } = await fiveChunkStream();
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    expect(handle.fd).toBe(-1);
  });

  it('abandons the download and closes the file when the consumer stops taking chunks', async () => {
    const { handle, stream } = await fiveChunkStream({ idleTimeoutMs: 50 });
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    // The consumer goes quiet with chunks still queued: the descriptor must not wait for it.
    const deadline = performance.now() + 5000;
    while (handle.fd !== -1 && performance.now() < deadline) await sleep(10);
    expect(handle.fd).toBe(-1);
    await expect(reader.read()).rejects.toBeInstanceOf(StalledForTest);
  });

  it('keeps a slow consumer that takes each chunk within the idle timeout', async () => {
    const { data, handle, stream } = await fiveChunkStream({ idleTimeoutMs: 2000 });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      await sleep(30);
    }
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
    expect(handle.fd).toBe(-1);
  });

  it('waits for its consumer indefinitely when no idle timeout is set', async () => {
    const { handle, stream } = await fiveChunkStream();
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await sleep(150);
    expect(handle.fd).not.toBe(-1);
    const rest: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      rest.push(next.value);
    }
    expect(rest.reduce((total, chunk) => total + chunk.byteLength, 0)).toBe(4000);
  });
});
