export { isArtifactId, mintArtifactId } from './artifact-id.js';
export {
  ArtifactStore,
  type ArtifactStoreOptions,
  type LoadedArtifact,
  type StoreArtifactInput,
  type StoreArtifactStreamInput,
  type StreamedArtifact,
} from './artifact-store.js';
export * from './constants.js';
export { normalizeContentType } from './content-type.js';
export {
  ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE,
  ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE,
  ArtifactChecksumMismatch,
  ArtifactDownloadStalled,
  ArtifactError,
  type ArtifactErrorCode,
  type ArtifactErrorOptions,
  ArtifactExpired,
  ArtifactMimeRejected,
  ArtifactNotFound,
  ArtifactOverwrite,
  ArtifactScopeMismatch,
  ArtifactTooLarge,
  ArtifactTraversal,
} from './errors.js';
export { sanitizeArtifactFilename } from './filename.js';
export { ArtifactRateLimiter, type ArtifactRateLimiterOptions } from './rate-limiter.js';
export { type CappedBody, readCappedBody } from './read-capped-body.js';
export { type ArtifactReceipt, type ArtifactWireReceipt, toWireReceipt } from './receipt.js';
export {
  type ArtifactAuthentication,
  type ArtifactRouteErrorCode,
  type ArtifactRoutesOptions,
  type ArtifactStoreLookup,
  createArtifactRoutes,
} from './routes.js';
export { type ArtifactScope, artifactScopeKey } from './scope-key.js';
export {
  ArtifactStoreCache,
  type ArtifactStoreCacheOptions,
  artifactRootForHome,
} from './store-cache.js';
