import { createHash, timingSafeEqual } from 'node:crypto';
import { access, type FileHandle, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isArtifactId, mintArtifactId } from './artifact-id.js';
import {
  ARTIFACT_TEMP_SUFFIX,
  DEFAULT_ALLOWED_CONTENT_TYPES,
  DEFAULT_ARTIFACT_TTL_SECONDS,
  DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS,
  DEFAULT_MAX_ARTIFACT_BYTES,
  MIN_ARTIFACT_TTL_SECONDS,
} from './constants.js';
import { normalizeContentType } from './content-type.js';
import {
  ArtifactChecksumMismatch,
  ArtifactDownloadStalled,
  ArtifactExpired,
  ArtifactMimeRejected,
  ArtifactNotFound,
  ArtifactScopeMismatch,
  ArtifactTooLarge,
  ArtifactTraversal,
} from './errors.js';
import { FileAppender } from './file-appender.js';
import { sanitizeArtifactFilename } from './filename.js';
import { readFileHashed } from './read-file-hashed.js';
import type { ArtifactReceipt } from './receipt.js';
import { type ArtifactScope, artifactScopeKey } from './scope-key.js';
import { sha256HexInSlices } from './sha256-hex.js';
import { createVerifiedFileStream, hashOpenFile } from './verified-file-stream.js';

/**
 * Bytes per read of the verification pass before a streamed download. The pass reads into a
 * pooled pair of buffers, so their pages are touched once per store, not once per download.
 */
export const VERIFY_SLICE_BYTES = 256 * 1024;

/** Scratch buffer pairs a store keeps for verification passes; more concurrent passes allocate. */
const MAX_POOLED_SCRATCH_PAIRS = 4;

export interface ArtifactStoreOptions {
  /** Folder the artifacts live in; created (0700) if missing. */
  readonly root: string;
  /** Lifetime of an artifact in seconds; clamped to at least 1. Default 300. */
  readonly ttlSeconds?: number;
  /** Largest accepted payload in bytes; clamped to at least 1. Default 10 MiB. */
  readonly maxBytes?: number;
  /** Accepted content types (compared after normalisation). Default: the reference allowlist. */
  readonly allowedContentTypes?: Iterable<string>;
  /**
   * The store's clock, in milliseconds since the epoch (default `Date.now()`, the wall clock, as
   * in the reference). Expiry is judged on it, so an artifact expires exactly at the
   * `expires_at` its receipt shows.
   */
  readonly now?: () => number;
  /**
   * Seconds a `loadStream` body waits for its consumer to take the next chunk before it fails
   * with `ArtifactDownloadStalled` and closes its descriptor; clamped to at least 1. Default 120.
   */
  readonly downloadIdleTimeoutSeconds?: number;
}

export interface StoreArtifactInput {
  readonly data: Uint8Array;
  /** Display name; sanitised, never used as a path. */
  readonly filename: string;
  /** A `Content-Type` value; parameters are stripped before the allowlist check. */
  readonly contentType: string;
  readonly scope: ArtifactScope;
}

export interface StoreArtifactStreamInput {
  /**
   * The payload as it arrives, e.g. a request body. It is read at most until it passes
   * `maxBytes`, and left early (which cancels a web stream or generator) on any failure.
   */
  readonly body: AsyncIterable<Uint8Array>;
  /** The size the sender announced (`Content-Length`), checked before anything is read. */
  readonly declaredBytes?: number;
  /** Display name; sanitised, never used as a path. */
  readonly filename: string;
  /** A `Content-Type` value; parameters are stripped before the allowlist check. */
  readonly contentType: string;
  readonly scope: ArtifactScope;
}

export interface LoadedArtifact {
  readonly data: Buffer<ArrayBuffer>;
  readonly receipt: ArtifactReceipt;
}

export interface StreamedArtifact {
  /**
   * The artifact's bytes, already verified once and consumed. Hashed again as they stream; the
   * stream errors (never closes cleanly) if they no longer match. Read it to the end or cancel
   * it: either releases the open file.
   */
  readonly body: ReadableStream<Uint8Array>;
  readonly receipt: ArtifactReceipt;
}

interface Entry {
  readonly receipt: ArtifactReceipt;
  /** Milliseconds since the epoch (the store's clock) at which the artifact expires. */
  readonly deadline: number;
  readonly filePath: string;
}

function clampNumber(value: number | undefined, fallback: number, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.max(minimum, value);
}

function isNotFoundError(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT'
  );
}

function sameHex(left: string, right: string): boolean {
  const leftBytes = Buffer.from(left, 'utf8');
  const rightBytes = Buffer.from(right, 'utf8');
  return leftBytes.length === rightBytes.length && timingSafeEqual(leftBytes, rightBytes);
}

async function fileExists(filePath: string): Promise<boolean> {
  try {
    await access(filePath);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes all of `data` at the start of the file. One positional write usually suffices, where
 * `writeFile` would split a large payload into many thread-pool round trips.
 */
async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.byteLength) {
    const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset, offset);
    offset += bytesWritten;
  }
}

/** Removes a file, ignoring every failure: used where a leftover is harmless and swept later. */
async function removeQuietly(filePath: string): Promise<void> {
  try {
    await rm(filePath, { force: true });
  } catch {
    // Best effort: a file that cannot be removed now is an orphan for the next sweep.
  }
}

/**
 * One-shot, short-lived, scope-bound artifacts in one folder.
 *
 * Receipts live only in memory, so the files are unreachable after a restart; `open()` therefore
 * sweeps every artifact-shaped file and temp file it finds. All file work is async so the event
 * loop never waits on the disk.
 */
export class ArtifactStore {
  readonly root: string;
  readonly ttlSeconds: number;
  readonly maxBytes: number;
  readonly downloadIdleTimeoutSeconds: number;
  readonly allowedContentTypes: ReadonlySet<string>;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Ids minted for writes still in progress: not loadable yet, but never minted twice. */
  readonly #reserved = new Set<string>();
  /** Verification buffers kept between downloads, so their pages are touched only once. */
  readonly #scratchPairs: Array<[Buffer, Buffer]> = [];

  private constructor(options: ArtifactStoreOptions) {
    this.root = path.resolve(options.root);
    this.ttlSeconds = clampNumber(
      options.ttlSeconds,
      DEFAULT_ARTIFACT_TTL_SECONDS,
      MIN_ARTIFACT_TTL_SECONDS,
    );
    this.maxBytes = Math.floor(clampNumber(options.maxBytes, DEFAULT_MAX_ARTIFACT_BYTES, 1));
    this.allowedContentTypes = new Set(
      Array.from(options.allowedContentTypes ?? DEFAULT_ALLOWED_CONTENT_TYPES, (type) =>
        normalizeContentType(type),
      ).filter((type) => type !== ''),
    );
    this.#now = options.now ?? (() => Date.now());
    this.downloadIdleTimeoutSeconds = clampNumber(
      options.downloadIdleTimeoutSeconds,
      DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS,
      1,
    );
  }

  /** Creates the root and removes the orphans a previous process left behind. */
  static async open(options: ArtifactStoreOptions): Promise<ArtifactStore> {
    const store = new ArtifactStore(options);
    await mkdir(store.root, { recursive: true, mode: 0o700 });
    await store.#sweepOrphans();
    return store;
  }

  /** Live (unconsumed, not yet pruned) artifacts. */
  count(): number {
    return this.#entries.size;
  }

  /**
   * Persists `data` and returns its receipt. Size and type are checked before the disk is
   * touched; the bytes are fsynced under a temp name and renamed into place before the receipt
   * becomes visible. On failure nothing is left behind and the error is rethrown.
   */
  async store(input: StoreArtifactInput): Promise<ArtifactReceipt> {
    const { data } = input;
    if (data.byteLength > this.maxBytes) {
      throw new ArtifactTooLarge({ sizeBytes: data.byteLength, maxBytes: this.maxBytes });
    }
    const contentType = this.#admitContentType(input.contentType);
    const scopeKey = artifactScopeKey(input.scope);
    const filename = sanitizeArtifactFilename(input.filename);
    const sha256 = await sha256HexInSlices(data);
    return this.#persist({ contentType, scopeKey, filename }, async (handle) => {
      await writeAll(handle, data);
      return { sha256, sizeBytes: data.byteLength };
    });
  }

  /**
   * Persists a payload as it streams in, with the same guarantees as `store()`: the declared size
   * and then the type are checked before the disk is touched; the bytes are hashed and written to
   * the temp file chunk by chunk (never gathered into one buffer), fsynced and renamed into place
   * before the receipt becomes visible. Reading stops at the chunk that passes `maxBytes`
   * (`ArtifactTooLarge`); on any failure the temp file is removed and the error rethrown.
   */
  async storeStream(input: StoreArtifactStreamInput): Promise<ArtifactReceipt> {
    if (input.declaredBytes !== undefined && input.declaredBytes > this.maxBytes) {
      throw new ArtifactTooLarge({ sizeBytes: input.declaredBytes, maxBytes: this.maxBytes });
    }
    const contentType = this.#admitContentType(input.contentType);
    const scopeKey = artifactScopeKey(input.scope);
    const filename = sanitizeArtifactFilename(input.filename);
    return this.#persist({ contentType, scopeKey, filename }, async (handle) => {
      const hash = createHash('sha256');
      const appender = new FileAppender(handle);
      let sizeBytes = 0;
      try {
        for await (const chunk of input.body) {
          sizeBytes += chunk.byteLength;
          if (sizeBytes > this.maxBytes) {
            throw new ArtifactTooLarge({ sizeBytes, maxBytes: this.maxBytes });
          }
          hash.update(chunk);
          await appender.append(chunk);
        }
        await appender.flush();
      } finally {
        // The handle is closed next: no write may still be running against it.
        await appender.settle();
      }
      return { sha256: hash.digest('hex'), sizeBytes };
    });
  }

  /**
   * Checks that `artifactId` names a live artifact owned by `scope`, without consuming it.
   * Synchronous so a caller can check and act without an `await` in between.
   */
  validate(artifactId: string, scope: ArtifactScope): ArtifactReceipt {
    return this.#check(artifactId, scope).receipt;
  }

  /**
   * Returns the bytes and consumes the artifact (one-shot). The file is read once into one
   * buffer and hashed on the way in; the bytes returned are exactly the bytes verified. A
   * checksum mismatch does not consume; of concurrent loads of one id exactly one succeeds and
   * the others get `ArtifactNotFound`.
   */
  async load(artifactId: string, scope: ArtifactScope): Promise<LoadedArtifact> {
    const entry = this.#check(artifactId, scope);
    let read: Awaited<ReturnType<typeof readFileHashed>>;
    try {
      read = await readFileHashed(entry.filePath, entry.receipt.sizeBytes);
    } catch (error) {
      if (!isNotFoundError(error)) throw error;
      if (this.#entries.get(artifactId) === entry) this.#entries.delete(artifactId);
      throw new ArtifactNotFound({ artifactId, reason: 'gone' });
    }
    // A file of another size cannot match the recorded digest; it is a mismatch like any other.
    if (read === null || !sameHex(read.sha256, entry.receipt.sha256)) {
      throw new ArtifactChecksumMismatch({ artifactId });
    }
    // The entry goes first, synchronously after the read: a concurrent load that resumes later
    // finds no entry and fails closed instead of returning the bytes a second time.
    if (this.#entries.get(artifactId) !== entry) {
      throw new ArtifactNotFound({ artifactId });
    }
    this.#entries.delete(artifactId);
    await removeQuietly(entry.filePath);
    return { data: read.data, receipt: entry.receipt };
  }

  /**
   * Consumes the artifact (one-shot) and returns its bytes as a stream, for a download that
   * should not hold the whole payload in memory. Before anything is consumed the open file is
   * hashed in a pass through two small reused buffers; a mismatch (or a size other than the
   * receipt's) does not consume. Then the entry is removed, synchronously, so of concurrent
   * loads exactly one wins, and the file is unlinked: the open descriptor keeps the bytes, and
   * nobody can open them again. The stream reads that same descriptor and hashes once more.
   */
  async loadStream(artifactId: string, scope: ArtifactScope): Promise<StreamedArtifact> {
    const entry = this.#check(artifactId, scope);
    let handle: FileHandle;
    try {
      handle = await open(entry.filePath, 'r');
    } catch (error) {
      if (!isNotFoundError(error)) throw error;
      if (this.#entries.get(artifactId) === entry) this.#entries.delete(artifactId);
      throw new ArtifactNotFound({ artifactId, reason: 'gone' });
    }
    try {
      const { size } = await handle.stat();
      // A file of another size cannot match the recorded digest; it is not even read.
      if (size !== entry.receipt.sizeBytes) throw new ArtifactChecksumMismatch({ artifactId });
      const sha256 = await this.#hashWithScratch(handle, size);
      if (sha256 === null || !sameHex(sha256, entry.receipt.sha256)) {
        throw new ArtifactChecksumMismatch({ artifactId });
      }
      // The entry goes first, synchronously after the check: a concurrent load that resumes
      // later finds no entry and fails closed. The unlink then leaves the bytes reachable only
      // through this descriptor.
      if (this.#entries.get(artifactId) !== entry) throw new ArtifactNotFound({ artifactId });
      this.#entries.delete(artifactId);
      await removeQuietly(entry.filePath);
    } catch (error) {
      // The refusal is what the caller needs to see, not a failure to close.
      await handle.close().catch(() => {});
      throw error;
    }
    return {
      receipt: entry.receipt,
      body: createVerifiedFileStream({
        handle,
        sizeBytes: entry.receipt.sizeBytes,
        matches: (sha256) => sameHex(sha256, entry.receipt.sha256),
        mismatch: () => new ArtifactChecksumMismatch({ artifactId }),
        idleTimeoutMs: this.downloadIdleTimeoutSeconds * 1000,
        stalled: () =>
          new ArtifactDownloadStalled({
            artifactId,
            idleSeconds: this.downloadIdleTimeoutSeconds,
          }),
      }),
    };
  }

  /**
   * Drops expired artifacts (and their files) and deletes temp files older than one TTL.
   * Returns the number of artifacts dropped.
   */
  async pruneExpired(): Promise<number> {
    const expiredFiles = this.#dropExpiredEntries();
    await Promise.all(expiredFiles.map((filePath) => removeQuietly(filePath)));

    const staleBefore = this.#now() - this.ttlSeconds * 1000;
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return expiredFiles.length;
    }
    for (const name of names) {
      if (!name.endsWith(ARTIFACT_TEMP_SUFFIX)) continue;
      if (this.#reserved.has(name.slice(0, -ARTIFACT_TEMP_SUFFIX.length))) continue;
      const tempPath = path.join(this.root, name);
      try {
        const details = await stat(tempPath);
        if (details.isFile() && details.mtimeMs < staleBefore) await removeQuietly(tempPath);
      } catch {
        // Already gone: nothing to prune.
      }
    }
    return expiredFiles.length;
  }

  /** Hashes an open file through a pooled pair of scratch buffers. */
  async #hashWithScratch(handle: FileHandle, sizeBytes: number): Promise<string | null> {
    const scratch = this.#scratchPairs.pop() ?? [
      Buffer.allocUnsafeSlow(VERIFY_SLICE_BYTES),
      Buffer.allocUnsafeSlow(VERIFY_SLICE_BYTES),
    ];
    try {
      return await hashOpenFile({ handle, sizeBytes, scratch });
    } finally {
      if (this.#scratchPairs.length < MAX_POOLED_SCRATCH_PAIRS) this.#scratchPairs.push(scratch);
    }
  }

  /** The normalised type, or `ArtifactMimeRejected` when it is not on the allowlist. */
  #admitContentType(rawContentType: string): string {
    const contentType = normalizeContentType(rawContentType);
    if (!this.allowedContentTypes.has(contentType)) {
      throw new ArtifactMimeRejected({ contentType });
    }
    return contentType;
  }

  /**
   * Reserves an id, lets `write` fill `<id>.tmp` (0600), fsyncs, renames it into place and only
   * then records the receipt. On any failure the reservation and the temp file are dropped and
   * the error is rethrown, so a failed write leaves neither an entry nor a file.
   */
  async #persist(
    details: { contentType: string; scopeKey: string; filename: string },
    write: (handle: FileHandle) => Promise<{ sha256: string; sizeBytes: number }>,
  ): Promise<ArtifactReceipt> {
    const artifactId = await this.#reserveId();
    const filePath = this.#pathFor(artifactId);
    const tempPath = `${filePath}${ARTIFACT_TEMP_SUFFIX}`;
    let written: { sha256: string; sizeBytes: number };
    try {
      const handle = await open(tempPath, 'wx', 0o600);
      try {
        written = await write(handle);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tempPath, filePath);
    } catch (error) {
      this.#reserved.delete(artifactId);
      await removeQuietly(tempPath);
      throw error;
    }

    // One reading of the clock: the receipt's expires_at and the expiry decision are the same instant.
    const createdAt = this.#now();
    const deadline = createdAt + this.ttlSeconds * 1000;
    const receipt: ArtifactReceipt = {
      artifactId,
      sha256: written.sha256,
      sizeBytes: written.sizeBytes,
      contentType: details.contentType,
      filename: details.filename,
      createdAt: createdAt / 1000,
      expiresAt: deadline / 1000,
      ttlSeconds: this.ttlSeconds,
      scopeKey: details.scopeKey,
    };
    this.#reserved.delete(artifactId);
    this.#entries.set(artifactId, {
      receipt,
      deadline,
      filePath,
    });
    return receipt;
  }

  #check(artifactId: string, scope: ArtifactScope): Entry {
    if (!isArtifactId(artifactId)) {
      throw new ArtifactTraversal({ artifactId: String(artifactId) });
    }
    // The id pattern already excludes separators and dots; this proves it for the path itself.
    const filePath = this.#pathFor(artifactId);
    if (path.dirname(filePath) !== this.root) {
      throw new ArtifactTraversal({ artifactId });
    }
    const scopeKey = artifactScopeKey(scope);
    let entry = this.#entries.get(artifactId);
    if (entry === undefined) {
      this.#discardFiles(this.#dropExpiredEntries());
      entry = this.#entries.get(artifactId);
      if (entry === undefined) throw new ArtifactNotFound({ artifactId });
    }
    if (entry.deadline <= this.#now()) {
      this.#entries.delete(artifactId);
      this.#discardFiles([entry.filePath]);
      throw new ArtifactExpired({ artifactId });
    }
    if (!sameHex(entry.receipt.scopeKey, scopeKey)) {
      throw new ArtifactScopeMismatch({ artifactId });
    }
    return entry;
  }

  #pathFor(artifactId: string): string {
    return path.join(this.root, artifactId);
  }

  /** Removes expired entries synchronously and returns their file paths. */
  #dropExpiredEntries(): string[] {
    const now = this.#now();
    const filePaths: string[] = [];
    for (const [artifactId, entry] of this.#entries) {
      if (entry.deadline <= now) {
        this.#entries.delete(artifactId);
        filePaths.push(entry.filePath);
      }
    }
    return filePaths;
  }

  /** Deletes files in the background; the entries are already gone, so nobody can read them. */
  #discardFiles(filePaths: readonly string[]): void {
    for (const filePath of filePaths) void removeQuietly(filePath);
  }

  async #reserveId(): Promise<string> {
    for (;;) {
      const artifactId = mintArtifactId();
      if (this.#entries.has(artifactId) || this.#reserved.has(artifactId)) continue;
      // Reserve before the disk check so a concurrent store can never mint the same id meanwhile.
      this.#reserved.add(artifactId);
      const filePath = this.#pathFor(artifactId);
      if (
        (await fileExists(filePath)) ||
        (await fileExists(`${filePath}${ARTIFACT_TEMP_SUFFIX}`))
      ) {
        this.#reserved.delete(artifactId);
        continue;
      }
      return artifactId;
    }
  }

  async #sweepOrphans(): Promise<void> {
    const entries = await readdir(this.root, { withFileTypes: true });
    await Promise.all(
      entries
        .filter(
          (entry) =>
            entry.isFile() &&
            (entry.name.endsWith(ARTIFACT_TEMP_SUFFIX) || isArtifactId(entry.name)),
        )
        // The receipt table is empty at construction, so every such file is an orphan.
        .filter((entry) => !this.#entries.has(entry.name))
        .map((entry) => removeQuietly(path.join(this.root, entry.name))),
    );
  }
}
