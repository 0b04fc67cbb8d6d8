/** What the store records about one artifact. Wall-clock times are for display only. */
export interface ArtifactReceipt {
  readonly artifactId: string;
  /** Lowercase hex SHA-256 of the bytes. */
  readonly sha256: string;
  readonly sizeBytes: number;
  /** The normalised content type. */
  readonly contentType: string;
  /** Display name only; never used as a path. */
  readonly filename: string;
  /** Seconds since the epoch, on the store's clock (the wall clock by default). */
  readonly createdAt: number;
  /** Seconds since the epoch at which the artifact expires: `createdAt + ttlSeconds`. */
  readonly expiresAt: number;
  readonly ttlSeconds: number;
  /** The owner's scope key; never sent over the wire. */
  readonly scopeKey: string;
}

/** The receipt as the HTTP routes send it: snake_case, no scope key, no filesystem path. */
export interface ArtifactWireReceipt {
  readonly artifact_id: string;
  readonly sha256: string;
  readonly size_bytes: number;
  readonly content_type: string;
  readonly filename: string;
  readonly created_at: number;
  readonly expires_at: number;
  readonly ttl_seconds: number;
  readonly one_shot: true;
  readonly download_path?: string;
}

/** Builds the wire form of a receipt, adding `download_path` when given. */
export function toWireReceipt(
  receipt: ArtifactReceipt,
  options: { downloadPath?: string } = {},
): ArtifactWireReceipt {
  const wire: ArtifactWireReceipt = {
    artifact_id: receipt.artifactId,
    sha256: receipt.sha256,
    size_bytes: receipt.sizeBytes,
    content_type: receipt.contentType,
    filename: receipt.filename,
    created_at: receipt.createdAt,
    expires_at: receipt.expiresAt,
    ttl_seconds: receipt.ttlSeconds,
    one_shot: true,
  };
  return options.downloadPath === undefined
    ? wire
    : { ...wire, download_path: options.downloadPath };
}
