import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it, vi } from 'vitest';
import { ArtifactStore, type ArtifactStoreOptions } from './artifact-store.js';
import {
  DEFAULT_ARTIFACT_TTL_SECONDS,
  DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS,
  DEFAULT_MAX_ARTIFACT_BYTES,
} from './constants.js';
import { normalizeContentType } from './content-type.js';
import {
  ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE,
  ArtifactChecksumMismatch,
  ArtifactDownloadStalled,
  ArtifactError,
  ArtifactExpired,
  ArtifactMimeRejected,
  ArtifactNotFound,
  ArtifactScopeMismatch,
  ArtifactTooLarge,
  ArtifactTraversal,
} from './errors.js';

const scope = { principalId: 'principal:default:aaaa', transportFamily: 'local-api' };
const bytes = Buffer.from('hello artifact');

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

async function openStore(options: Partial<ArtifactStoreOptions> = {}) {
  const home = await tempHome('hermes-artifacts-');
  const root = path.join(home.path, 'artifacts', 'browser-control');
  const store = await ArtifactStore.open({ root, ...options });
  return { store, root };
}

function manualClock(start = 1_000) {
  let current = start;
  return {
    now: () => current,
    advanceSeconds(seconds: number) {
      current += seconds * 1000;
    },
  };
}

async function storeSample(store: ArtifactStore, data: Uint8Array = bytes) {
  return store.store({ data, filename: 'shot.png', contentType: 'image/png', scope });
}

describe('ArtifactStore construction', () => {
  it('creates the root and applies the reference defaults', async () => {
    const { store, root } = await openStore();
    const rootDetails = await stat(root);
    expect(rootDetails.isDirectory()).toBe(true);
    // Only the gateway's user may list or read the artifacts.
    expect(rootDetails.mode & 0o777).toBe(0o700);
    // The reference's values, spelled out so a changed constant cannot pass unnoticed.
    expect(store.ttlSeconds).toBe(DEFAULT_ARTIFACT_TTL_SECONDS);
    expect(DEFAULT_ARTIFACT_TTL_SECONDS).toBe(300);
    expect(store.maxBytes).toBe(DEFAULT_MAX_ARTIFACT_BYTES);
    expect(DEFAULT_MAX_ARTIFACT_BYTES).toBe(10_485_760);
    expect(store.downloadIdleTimeoutSeconds).toBe(DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS);
    expect(DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS).toBe(120);
    expect(store.count()).toBe(0);
  });

  it('clamps the TTL to at least one second and the size limit to at least one byte', async () => {
    const { store } = await openStore({
      ttlSeconds: 0.01,
      maxBytes: 0,
      downloadIdleTimeoutSeconds: 0,
    });
    expect(store.ttlSeconds).toBe(1);
    expect(store.maxBytes).toBe(1);
    expect(store.downloadIdleTimeoutSeconds).toBe(1);
  });

  it('sweeps the orphans of a previous process but keeps unrelated files', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    const orphanTemp = path.join(root, `${'b'.repeat(32)}.tmp`);
    await writeFile(orphanTemp, 'half written');
    await writeFile(path.join(root, 'README'), 'keep me');
    await writeFile(path.join(root, 'notes.txt'), 'keep me too');
    await mkdir(path.join(root, 'c'.repeat(32)));

    const reopened = await ArtifactStore.open({ root });

    expect((await readdir(root)).sort()).toEqual(['README', 'c'.repeat(32), 'notes.txt']);
    expect(() => reopened.validate(receipt.artifactId, scope)).toThrow(ArtifactNotFound);
  });
});

describe('ArtifactStore.store', () => {
  it('rejects an oversize payload before touching the disk', async () => {
    const { store, root } = await openStore({ maxBytes: 8 });
    await expect(storeSample(store, Buffer.alloc(9))).rejects.toBeInstanceOf(ArtifactTooLarge);
    expect(await readdir(root)).toEqual([]);
    expect(store.count()).toBe(0);
  });

  it('rejects a content type outside the allowlist before touching the disk', async () => {
    const { store, root } = await openStore();
    const attempt = store.store({
      data: bytes,
      filename: 'x.html',
      contentType: 'text/html',
      scope,
    });
    await expect(attempt).rejects.toBeInstanceOf(ArtifactMimeRejected);
    await expect(attempt).rejects.toThrow('allowlist');
    expect(await readdir(root)).toEqual([]);
  });

  it('accepts exactly the reference allowlist of content types, parameters and case aside', async () => {
    const { store } = await openStore();
    const accepted = [
      'application/json',
      'application/pdf',
      'image/gif',
      'image/jpeg',
      'image/png',
      'image/webp',
      'text/plain',
    ];
    expect([...store.allowedContentTypes].sort()).toEqual(accepted);
    for (const contentType of [...accepted, 'TEXT/Plain; charset=utf-8']) {
      const receipt = await store.store({ data: bytes, filename: 'x', contentType, scope });
      expect(receipt.contentType).toBe(normalizeContentType(contentType));
    }
    for (const contentType of [
      'text/html',
      'image/svg+xml',
      'application/octet-stream',
      'application/javascript',
      'text/plain-x',
      '',
    ]) {
      await expect(
        store.store({ data: bytes, filename: 'x', contentType, scope }),
      ).rejects.toBeInstanceOf(ArtifactMimeRejected);
    }
  });

  it('checks the size before the content type', async () => {
    const { store } = await openStore({ maxBytes: 1 });
    const attempt = store.store({ data: bytes, filename: 'x', contentType: 'text/html', scope });
    await expect(attempt).rejects.toBeInstanceOf(ArtifactTooLarge);
  });

  it('refuses a scope without a principal before touching the disk', async () => {
    const { store, root } = await openStore();
    const attempt = store.store({
      data: bytes,
      filename: 'x.png',
      contentType: 'image/png',
      scope: { transportFamily: 'local-api' },
    });
    await expect(attempt).rejects.toThrow(ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE);
    expect(await readdir(root)).toEqual([]);
  });

  it('returns a receipt with the normalised type, sanitised name, checksum and TTL', async () => {
    const { store, root } = await openStore({ now: () => 1_700_000_000_000 });
    const receipt = await store.store({
      data: bytes,
      filename: ' ../shot\n.png ',
      contentType: 'Image/PNG; charset=binary',
      scope,
    });
    expect(receipt.artifactId).toMatch(/^[0-9a-f]{32}$/);
    expect(receipt.contentType).toBe('image/png');
    expect(receipt.filename).toBe('.._shot.png');
    expect(receipt.sha256).toBe(sha256(bytes));
    expect(receipt.sizeBytes).toBe(bytes.byteLength);
    expect(receipt.createdAt).toBe(1_700_000_000);
    expect(receipt.expiresAt).toBe(1_700_000_000 + DEFAULT_ARTIFACT_TTL_SECONDS);
    expect(await readdir(root)).toEqual([receipt.artifactId]);
    expect((await stat(path.join(root, receipt.artifactId))).mode & 0o777).toBe(0o600);
  });

  it('fails without a receipt or leftover when the write fails', async () => {
    const { store, root } = await openStore();
    await rm(root, { recursive: true });
    await expect(storeSample(store)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(store.count()).toBe(0);
    await mkdir(root);
    expect(await readdir(root)).toEqual([]);
  });

  it('keeps every one of 12 concurrent uploads loadable', async () => {
    const { store } = await openStore();
    const payloads = Array.from({ length: 12 }, (_, index) => Buffer.from(`payload ${index}`));
    const receipts = await Promise.all(payloads.map((payload) => storeSample(store, payload)));
    expect(new Set(receipts.map((receipt) => receipt.artifactId)).size).toBe(12);
    const loaded = await Promise.all(
      receipts.map((receipt) => store.load(receipt.artifactId, scope)),
    );
    expect(loaded.map((artifact) => artifact.data.toString())).toEqual(
      payloads.map((payload) => payload.toString()),
    );
  });

  it('keeps the event loop turning while it writes and reads', async () => {
    const { store } = await openStore();
    let turns = 0;
    let running = true;
    const spin = () => {
      turns += 1;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const receipt = await storeSample(store, Buffer.alloc(4 * 1024 * 1024, 7));
    const turnsDuringStore = turns;
    await store.load(receipt.artifactId, scope);
    running = false;
    expect(turnsDuringStore).toBeGreaterThanOrEqual(2);
    expect(turns).toBeGreaterThan(turnsDuringStore);
  });
});

/** A chunked source that records how much of it was pulled and whether it was left early. */
function chunkSource(chunks: readonly Uint8Array[], options: { failAfter?: number } = {}) {
  const state = { pulledChunks: 0, leftEarly: false };
  async function* generate(): AsyncGenerator<Uint8Array, void, undefined> {
    let finished = false;
    try {
      for (const chunk of chunks) {
        if (options.failAfter !== undefined && state.pulledChunks >= options.failAfter) {
          throw new Error('the sender went away');
        }
        state.pulledChunks += 1;
        yield chunk;
      }
      finished = true;
    } finally {
      if (!finished) state.leftEarly = true;
    }
  }
  return { body: generate(), state };
}

function streamSample(
  store: ArtifactStore,
  body: AsyncIterable<Uint8Array>,
  extra: { contentType?: string; declaredBytes?: number } = {},
) {
  return store.storeStream({
    body,
    filename: 'streamed.png',
    contentType: extra.contentType ?? 'image/png',
    scope,
    ...(extra.declaredBytes === undefined ? {} : { declaredBytes: extra.declaredBytes }),
  });
}

describe('ArtifactStore.storeStream', () => {
  it('hashes and writes a chunked payload, then loads exactly those bytes once', async () => {
    const { store, root } = await openStore();
    const chunks = Array.from({ length: 64 }, (_, index) => randomBytes(16 * 1024 + index));
    const whole = Buffer.concat(chunks);
    const receipt = await streamSample(store, chunkSource(chunks).body);
    expect(receipt).toMatchObject({ sizeBytes: whole.byteLength, sha256: sha256(whole) });
    expect(await readdir(root)).toEqual([receipt.artifactId]);
    expect((await stat(path.join(root, receipt.artifactId))).mode & 0o777).toBe(0o600);
    expect((await store.load(receipt.artifactId, scope)).data.equals(whole)).toBe(true);
    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(ArtifactNotFound);
  });

  it('accepts a payload of exactly the limit', async () => {
    const { store } = await openStore({ maxBytes: 10 });
    const receipt = await streamSample(store, chunkSource([Buffer.alloc(6), Buffer.alloc(4)]).body);
    expect(receipt.sizeBytes).toBe(10);
  });

  it('stops at the chunk that passes the limit and leaves neither file nor receipt', async () => {
    const { store, root } = await openStore({ maxBytes: 10 });
    const source = chunkSource(Array.from({ length: 100 }, () => Buffer.alloc(4)));
    await expect(streamSample(store, source.body)).rejects.toBeInstanceOf(ArtifactTooLarge);
    expect(source.state.pulledChunks).toBe(3);
    expect(source.state.leftEarly).toBe(true);
    expect(await readdir(root)).toEqual([]);
    expect(store.count()).toBe(0);
  });

  it('checks the declared size, then the type, before reading or touching the disk', async () => {
    const { store, root } = await openStore({ maxBytes: 10 });
    const oversize = chunkSource([Buffer.alloc(4)]);
    await expect(
      streamSample(store, oversize.body, { declaredBytes: 11, contentType: 'text/html' }),
    ).rejects.toBeInstanceOf(ArtifactTooLarge);
    const refused = chunkSource([Buffer.alloc(4)]);
    await expect(
      streamSample(store, refused.body, { contentType: 'text/html' }),
    ).rejects.toBeInstanceOf(ArtifactMimeRejected);
    expect(oversize.state.pulledChunks + refused.state.pulledChunks).toBe(0);
    expect(await readdir(root)).toEqual([]);
  });

  it('removes the temp file and rethrows when the source fails midway', async () => {
    const { store, root } = await openStore();
    const source = chunkSource([Buffer.alloc(1024), Buffer.alloc(1024), Buffer.alloc(1024)], {
      failAfter: 2,
    });
    await expect(streamSample(store, source.body)).rejects.toThrow('the sender went away');
    expect(await readdir(root)).toEqual([]);
    expect(store.count()).toBe(0);
  });

  it('keeps the event loop turning while it streams a large payload in', async () => {
    const { store } = await openStore();
    let turns = 0;
    let running = true;
    const spin = () => {
      turns += 1;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const chunks = Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024, 5));
    const receipt = await streamSample(store, chunkSource(chunks).body);
    running = false;
    expect(receipt.sizeBytes).toBe(4 * 1024 * 1024);
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('fails without a receipt or leftover when the write fails', async () => {
    const { store, root } = await openStore();
    await rm(root, { recursive: true });
    await expect(streamSample(store, chunkSource([bytes]).body)).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(store.count()).toBe(0);
  });
});

describe('ArtifactStore.validate and load', () => {
  it('validates without consuming, then loads once with the verified bytes', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);

    expect(store.validate(receipt.artifactId, scope)).toEqual(receipt);
    expect(store.validate(receipt.artifactId, scope)).toEqual(receipt);
    const loaded = await store.load(receipt.artifactId, scope);

    expect(loaded.data.equals(bytes)).toBe(true);
    expect(sha256(loaded.data)).toBe(receipt.sha256);
    expect(store.count()).toBe(0);
    expect(await readdir(root)).toEqual([]);
    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(ArtifactNotFound);
  });

  it('lets a session-bearing scope of the same principal and family use an upload', async () => {
    const { store } = await openStore();
    const receipt = await storeSample(store);
    const controllerScope = { ...scope, sessionId: 'session-7', profileId: 'default' };
    expect(store.validate(receipt.artifactId, controllerScope).artifactId).toBe(receipt.artifactId);
  });

  it('refuses another principal or another transport family without consuming', async () => {
    const { store } = await openStore();
    const receipt = await storeSample(store);
    const otherPrincipal = { principalId: 'principal:default:bbbb', transportFamily: 'local-api' };
    const otherFamily = { principalId: scope.principalId, transportFamily: 'remote-api' };

    expect(() => store.validate(receipt.artifactId, otherPrincipal)).toThrow(ArtifactScopeMismatch);
    await expect(store.load(receipt.artifactId, otherFamily)).rejects.toThrow('different scope');
    expect(() => store.validate(receipt.artifactId, {})).toThrow(
      ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE,
    );
    expect((await store.load(receipt.artifactId, scope)).data.equals(bytes)).toBe(true);
  });

  it.each([['../escape'], ['not-hex!'], [''], ['ABCDEF0123456789ABCDEF0123456789']])(
    'refuses the traversal id %j',
    async (artifactId) => {
      const { store } = await openStore();
      expect(() => store.validate(artifactId, scope)).toThrow(ArtifactTraversal);
      await expect(store.load(artifactId, scope)).rejects.toBeInstanceOf(ArtifactTraversal);
      await expect(store.load(artifactId, scope)).rejects.toThrow('invalid');
    },
  );

  it('reports an unknown id as not found', async () => {
    const { store } = await openStore();
    expect(() => store.validate('a'.repeat(32), scope)).toThrow('unknown artifact');
  });

  it('refuses a tampered file without consuming the artifact', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    const filePath = path.join(root, receipt.artifactId);
    await writeFile(filePath, 'tampered bytes');

    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactChecksumMismatch,
    );
    expect(store.count()).toBe(1);

    await writeFile(filePath, bytes);
    expect((await store.load(receipt.artifactId, scope)).data.equals(bytes)).toBe(true);
  });

  it('refuses a file that changed size without consuming the artifact', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    const filePath = path.join(root, receipt.artifactId);
    await writeFile(filePath, Buffer.concat([bytes, Buffer.from('+appended')]));
    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactChecksumMismatch,
    );
    await writeFile(filePath, bytes.subarray(1));
    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactChecksumMismatch,
    );
    expect(store.count()).toBe(1);
    expect(store.validate(receipt.artifactId, scope).artifactId).toBe(receipt.artifactId);
  });

  it('reports a receipt whose file vanished as gone and drops it', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    await rm(path.join(root, receipt.artifactId));
    await expect(store.load(receipt.artifactId, scope)).rejects.toThrow('is gone');
    expect(store.count()).toBe(0);
  });

  it('lets exactly one of several concurrent loads of one id win', async () => {
    const { store } = await openStore();
    const receipt = await storeSample(store);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () => store.load(receipt.artifactId, scope)),
    );
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(5);
    for (const loser of losers) {
      expect((loser as PromiseRejectedResult).reason).toBeInstanceOf(ArtifactNotFound);
    }
  });

  it('expires on the store clock, discards the file, and then forgets the id', async () => {
    const clock = manualClock();
    const { store, root } = await openStore({ ttlSeconds: 5, now: clock.now });
    const receipt = await storeSample(store);

    clock.advanceSeconds(4.9);
    expect(store.validate(receipt.artifactId, scope).artifactId).toBe(receipt.artifactId);

    clock.advanceSeconds(0.1);
    await expect(store.load(receipt.artifactId, scope)).rejects.toBeInstanceOf(ArtifactExpired);
    expect(store.count()).toBe(0);
    await expect.poll(() => readdir(root)).toEqual([]);
    expect(() => store.validate(receipt.artifactId, scope)).toThrow(ArtifactNotFound);
  });

  it('judges expiry on the wall clock by default, at the expires_at its receipt shows', async () => {
    // Only Date is faked: the store's default clock is the wall clock, as in the reference.
    vi.useFakeTimers({ toFake: ['Date'], now: 1_700_000_000_000 });
    try {
      const { store } = await openStore({ ttlSeconds: 60 });
      const receipt = await storeSample(store);
      expect(receipt.createdAt).toBe(1_700_000_000);
      expect(receipt.expiresAt).toBe(1_700_000_060);
      vi.setSystemTime(receipt.expiresAt * 1000 - 1);
      expect(store.validate(receipt.artifactId, scope).artifactId).toBe(receipt.artifactId);
      vi.setSystemTime(receipt.expiresAt * 1000);
      expect(() => store.validate(receipt.artifactId, scope)).toThrow(ArtifactExpired);
    } finally {
      vi.useRealTimers();
    }
  });

  it('prunes other expired entries when it misses an id', async () => {
    const clock = manualClock();
    const { store } = await openStore({ ttlSeconds: 1, now: clock.now });
    await storeSample(store);
    clock.advanceSeconds(2);
    expect(store.count()).toBe(1);
    expect(() => store.validate('f'.repeat(32), scope)).toThrow(ArtifactNotFound);
    expect(store.count()).toBe(0);
  });
});

/** Everything a stream delivers before it ends or fails. */
async function readStream(stream: ReadableStream<Uint8Array>) {
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
    return { data: Buffer.concat(chunks), error: null };
  } catch (error) {
    return { data: Buffer.concat(chunks), error };
  }
}

describe('ArtifactStore.loadStream', () => {
  it('verifies, consumes and unlinks before a byte is read, then streams exactly the stored bytes', async () => {
    const { store, root } = await openStore();
    const payload = randomBytes(300 * 1024 + 5);
    const receipt = await storeSample(store, payload);

    const streamed = await store.loadStream(receipt.artifactId, scope);
    // Consumed already: no entry, no file by name, and a second load finds nothing.
    expect(streamed.receipt).toEqual(receipt);
    expect(store.count()).toBe(0);
    expect(await readdir(root)).toEqual([]);
    await expect(store.loadStream(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactNotFound,
    );

    const { data, error } = await readStream(streamed.body);
    expect(error).toBeNull();
    expect(data.equals(payload)).toBe(true);
  });

  it('refuses a tampered or resized file without consuming the artifact', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    const filePath = path.join(root, receipt.artifactId);

    await writeFile(filePath, Buffer.alloc(bytes.byteLength, 0x58));
    await expect(store.loadStream(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactChecksumMismatch,
    );
    await writeFile(filePath, Buffer.concat([bytes, Buffer.from('+')]));
    await expect(store.loadStream(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactChecksumMismatch,
    );
    expect(store.count()).toBe(1);

    await writeFile(filePath, bytes);
    const { data } = await readStream((await store.loadStream(receipt.artifactId, scope)).body);
    expect(data.equals(bytes)).toBe(true);
  });

  it('lets exactly one of several concurrent loads of one id win, streamed or buffered', async () => {
    const { store } = await openStore();
    const payload = randomBytes(512 * 1024);
    const receipt = await storeSample(store, payload);
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 5 }, () => store.loadStream(receipt.artifactId, scope)),
      store.load(receipt.artifactId, scope),
    ]);
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(winners).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(ArtifactNotFound);
    }
    const winner = (winners[0] as PromiseFulfilledResult<unknown>).value;
    const data =
      winner !== null && typeof winner === 'object' && 'body' in winner
        ? (await readStream(winner.body as ReadableStream<Uint8Array>)).data
        : (winner as { data: Buffer }).data;
    expect(data.equals(payload)).toBe(true);
  });

  it('fails the stream, never ending it cleanly, when the bytes change after the check', async () => {
    const { store, root } = await openStore();
    // Well past what the stream reads ahead, so the changed tail is read after the change.
    const payload = randomBytes(4 * 1024 * 1024);
    const receipt = await storeSample(store, payload);
    // A descriptor opened before the download survives the unlink, as any earlier opener would.
    const writer = await open(path.join(root, receipt.artifactId), 'r+');
    try {
      const streamed = await store.loadStream(receipt.artifactId, scope);
      await writer.write(Buffer.alloc(16, 0x41), 0, 16, payload.byteLength - 16);
      const { data, error } = await readStream(streamed.body);
      expect(error).toBeInstanceOf(ArtifactChecksumMismatch);
      expect(data.byteLength).toBeLessThan(payload.byteLength);
    } finally {
      await writer.close();
    }
  });

  it('reports a receipt whose file vanished as gone and drops it', async () => {
    const { store, root } = await openStore();
    const receipt = await storeSample(store);
    await rm(path.join(root, receipt.artifactId));
    await expect(store.loadStream(receipt.artifactId, scope)).rejects.toThrow('is gone');
    expect(store.count()).toBe(0);
  });

  it('applies the scope, traversal and expiry checks before opening anything', async () => {
    const clock = manualClock();
    const { store } = await openStore({ ttlSeconds: 5, now: clock.now });
    const receipt = await storeSample(store);
    const otherPrincipal = { principalId: 'principal:default:bbbb', transportFamily: 'local-api' };
    await expect(store.loadStream(receipt.artifactId, otherPrincipal)).rejects.toBeInstanceOf(
      ArtifactScopeMismatch,
    );
    await expect(store.loadStream('../escape', scope)).rejects.toBeInstanceOf(ArtifactTraversal);
    clock.advanceSeconds(5);
    await expect(store.loadStream(receipt.artifactId, scope)).rejects.toBeInstanceOf(
      ArtifactExpired,
    );
  });

  it('abandons a body its consumer stops reading, with ArtifactDownloadStalled', async () => {
    const { store } = await openStore({ downloadIdleTimeoutSeconds: 1 });
    // Several chunks, so some wait in the queue for a consumer that never comes back.
    const receipt = await storeSample(store, randomBytes(3 * 1024 * 1024));
    const reader = (await store.loadStream(receipt.artifactId, scope)).body.getReader();
    expect((await reader.read()).done).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stalled = await reader.read().then(
      () => null,
      (error: unknown) => error,
    );
    expect(stalled).toBeInstanceOf(ArtifactDownloadStalled);
    expect(stalled).toMatchObject({
      code: 'artifact_download_stalled',
      artifactId: receipt.artifactId,
      idleSeconds: 1,
    });
  });
});

describe('ArtifactStore.pruneExpired', () => {
  it('drops expired artifacts with their files and returns how many', async () => {
    const clock = manualClock();
    const { store, root } = await openStore({ ttlSeconds: 10, now: clock.now });
    await storeSample(store);
    await storeSample(store);
    clock.advanceSeconds(5);
    const fresh = await storeSample(store);

    clock.advanceSeconds(6);
    expect(await store.pruneExpired()).toBe(2);
    expect(store.count()).toBe(1);
    expect(await readdir(root)).toEqual([fresh.artifactId]);
  });

  it('removes temp files older than one TTL and keeps fresh ones', async () => {
    const { store, root } = await openStore({ ttlSeconds: 60 });
    const stale = path.join(root, `${'d'.repeat(32)}.tmp`);
    const fresh = path.join(root, `${'e'.repeat(32)}.tmp`);
    await writeFile(stale, 'stale');
    await writeFile(fresh, 'fresh');
    const longAgo = new Date(Date.now() - 120_000);
    await utimes(stale, longAgo, longAgo);

    expect(await store.pruneExpired()).toBe(0);
    expect(await readdir(root)).toEqual([path.basename(fresh)]);
  });
});

describe('ArtifactError', () => {
  it('carries a code and is recognised across installs by its marker', async () => {
    const { store } = await openStore();
    let caught: unknown;
    try {
      store.validate('a'.repeat(32), scope);
    } catch (error) {
      caught = error;
    }
    expect(ArtifactError.isInstance(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'artifact_not_found', name: 'ArtifactNotFound' });
    expect(ArtifactError.isInstance(new Error('plain'))).toBe(false);
  });
});
