/** How long an artifact lives after upload, in seconds. */
export const DEFAULT_ARTIFACT_TTL_SECONDS = 300;

/** The smallest TTL a store accepts; shorter values are clamped up to it. */
export const MIN_ARTIFACT_TTL_SECONDS = 1;

/**
 * How long a streamed download may wait for its consumer to take the next chunk before it is
 * abandoned and its file descriptor closed, in seconds. A client that stops reading would
 * otherwise hold the descriptor until its socket times out (or forever, with no timeout set).
 * At 512 KiB a chunk, 120 s still lets a client at ~4.5 KiB/s finish.
 */
export const DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS = 120;

/** The largest artifact a store accepts by default: 10 MiB. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 10 * 1024 * 1024;

/**
 * The exact content types a store accepts by default. Types are compared after normalisation
 * (parameters after `;` stripped, lower-cased); anything else, `text/html` included, is refused
 * so an artifact can never be served back as active content.
 */
export const DEFAULT_ALLOWED_CONTENT_TYPES: readonly string[] = Object.freeze([
  'application/json',
  'application/pdf',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'text/plain',
]);

/** Bytes of randomness behind an artifact id. */
export const ARTIFACT_ID_BYTES = 16;

/** An artifact id: exactly 32 lowercase hex characters. */
export const ARTIFACT_ID_PATTERN = /^[0-9a-f]{32}$/;

/** Suffix of the file an artifact is written to before its atomic rename. */
export const ARTIFACT_TEMP_SUFFIX = '.tmp';

/** Where a profile's artifacts live, relative to the profile home. */
export const ARTIFACT_ROOT_SEGMENTS: readonly string[] = Object.freeze([
  'artifacts',
  'browser-control',
]);

/** Display filenames are cut to this many characters. */
export const MAX_ARTIFACT_FILENAME_LENGTH = 160;

/** Default sliding window of the artifact rate limiter, in seconds. */
export const DEFAULT_RATE_LIMIT_WINDOW_SECONDS = 60;

/** Default number of requests one key may make per window. */
export const DEFAULT_RATE_LIMIT_MAX_REQUESTS = 30;

/** Route paths, as the gateway mounts them. */
export const ARTIFACT_UPLOAD_PATH = '/v1/artifacts/upload';
export const ARTIFACT_DOWNLOAD_PATH_PREFIX = '/v1/artifacts/download/';

/** HTTP headers of the artifact routes. */
export const ARTIFACT_FILENAME_HEADER = 'X-Artifact-Filename';
export const ARTIFACT_SHA256_HEADER = 'X-Artifact-Sha256';
export const ARTIFACT_ID_HEADER = 'X-Artifact-Id';

/**
 * The most an upload route reads of a body it refused before reading it (a bad key, a bad
 * filename, a rate limit…) so that a client which writes its whole body before reading the answer
 * still gets the status: the default artifact size limit. A larger body is answered without it.
 */
export const ARTIFACT_REFUSED_BODY_DRAIN_BYTES = DEFAULT_MAX_ARTIFACT_BYTES;

/** Seconds a rate-limited client is told to wait (`Retry-After`). */
export const ARTIFACT_RETRY_AFTER_SECONDS = 1;
