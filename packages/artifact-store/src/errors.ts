const MARKER = Symbol.for('@hermes/artifact-store.error');

/** Every `code` an artifact error can carry. Codes are stable; messages are for people. */
export type ArtifactErrorCode =
  | 'artifact_error'
  | 'artifact_principal_required'
  | 'artifact_root_unresolvable'
  | 'artifact_not_found'
  | 'artifact_expired'
  | 'artifact_too_large'
  | 'artifact_mime_rejected'
  | 'artifact_scope_mismatch'
  | 'artifact_checksum_mismatch'
  | 'artifact_download_stalled'
  | 'artifact_traversal'
  | 'artifact_overwrite';

export interface ArtifactErrorOptions {
  code?: ArtifactErrorCode;
  message: string;
  cause?: unknown;
}

/** Message texts that callers (the broker, tests) match on; one source of truth. */
export const ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE = 'artifact scope must carry a resolved principal';
export const ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE = 'no artifact root is resolvable';

/**
 * The one base error of `@hermes/artifact-store`. It is a local error: the HTTP routes translate
 * it to a wire error and never send `cause` or paths.
 */
export class ArtifactError extends Error {
  readonly code: ArtifactErrorCode;
  readonly [MARKER] = true;

  constructor(options: ArtifactErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? 'artifact_error';
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is ArtifactError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** Shows an id that may come from a client without letting it flood a log line. */
function describeId(artifactId: string): string {
  const shown = artifactId.length > 64 ? `${artifactId.slice(0, 64)}…` : artifactId;
  return JSON.stringify(shown);
}

/** No receipt is held for the id: never minted, already consumed, or its file is gone. */
export class ArtifactNotFound extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string; reason?: 'unknown' | 'gone' }) {
    super({
      code: 'artifact_not_found',
      message:
        options.reason === 'gone'
          ? `artifact ${describeId(options.artifactId)} is gone`
          : `unknown artifact ${describeId(options.artifactId)}`,
    });
    this.artifactId = options.artifactId;
  }
}

/** The artifact outlived its TTL; it has been discarded. */
export class ArtifactExpired extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string }) {
    super({
      code: 'artifact_expired',
      message: `artifact ${describeId(options.artifactId)} expired`,
    });
    this.artifactId = options.artifactId;
  }
}

/** The payload is larger than the store's limit. */
export class ArtifactTooLarge extends ArtifactError {
  readonly sizeBytes: number;
  readonly maxBytes: number;

  constructor(options: { sizeBytes: number; maxBytes: number }) {
    super({
      code: 'artifact_too_large',
      message: `artifact of ${options.sizeBytes} bytes exceeds the limit of ${options.maxBytes} bytes`,
    });
    this.sizeBytes = options.sizeBytes;
    this.maxBytes = options.maxBytes;
  }
}

/** The content type is not on the store's allowlist. */
export class ArtifactMimeRejected extends ArtifactError {
  readonly contentType: string;

  constructor(options: { contentType: string }) {
    const shown = options.contentType === '' ? '(none)' : JSON.stringify(options.contentType);
    super({
      code: 'artifact_mime_rejected',
      message: `content type ${shown} is not on the artifact allowlist`,
    });
    this.contentType = options.contentType;
  }
}

/** The artifact exists but belongs to another principal or transport family. */
export class ArtifactScopeMismatch extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string }) {
    super({
      code: 'artifact_scope_mismatch',
      message: `artifact ${describeId(options.artifactId)} is bound to a different scope`,
    });
    this.artifactId = options.artifactId;
  }
}

/** The bytes on disk no longer match the SHA-256 recorded at upload; nothing was consumed. */
export class ArtifactChecksumMismatch extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string }) {
    super({
      code: 'artifact_checksum_mismatch',
      message: `artifact ${describeId(options.artifactId)} failed its SHA-256 check`,
    });
    this.artifactId = options.artifactId;
  }
}

/** A streamed download's consumer stopped taking chunks; the stream was abandoned. */
export class ArtifactDownloadStalled extends ArtifactError {
  readonly artifactId: string;
  readonly idleSeconds: number;

  constructor(options: { artifactId: string; idleSeconds: number }) {
    super({
      code: 'artifact_download_stalled',
      message: `download of artifact ${describeId(options.artifactId)} abandoned: nothing read for ${options.idleSeconds} s`,
    });
    this.artifactId = options.artifactId;
    this.idleSeconds = options.idleSeconds;
  }
}

/** The id is not a minted artifact id, so it could name a path outside the store root. */
export class ArtifactTraversal extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string }) {
    super({
      code: 'artifact_traversal',
      message: `invalid artifact id ${describeId(options.artifactId)}: expected 32 lowercase hex characters`,
    });
    this.artifactId = options.artifactId;
  }
}

/**
 * Kept for plugin compatibility with the reference system, which names this error; this store
 * never overwrites an artifact (ids are fresh and files are created exclusively).
 */
export class ArtifactOverwrite extends ArtifactError {
  readonly artifactId: string;

  constructor(options: { artifactId: string }) {
    super({
      code: 'artifact_overwrite',
      message: `artifact ${describeId(options.artifactId)} already exists`,
    });
    this.artifactId = options.artifactId;
  }
}
