import {
  ARTIFACT_DOWNLOAD_PATH_PREFIX,
  ARTIFACT_UPLOAD_PATH,
  DEFAULT_ALLOWED_CONTENT_TYPES,
  DEFAULT_ARTIFACT_TTL_SECONDS,
  DEFAULT_MAX_ARTIFACT_BYTES,
} from '@hermes/artifact-store';
import {
  BROWSER_CONTROL_ARTIFACT_CAPABILITIES,
  BROWSER_CONTROL_CAPABILITIES,
  BROWSER_CONTROL_DEVELOPER_CAPABILITIES,
  BROWSER_CONTROL_PROTOCOL_VERSION,
} from '../constants.js';
import type { ExtensionControlFlags } from '../flags.js';

/** What the artifact transport advertises; the gateway passes `@hermes/artifact-store`'s values. */
export interface ArtifactTransportInfo {
  readonly uploadPath: string;
  readonly downloadPath: string;
  readonly maxBytes: number;
  readonly ttlSeconds: number;
  readonly allowedMimeTypes: readonly string[];
}

/** The artifact transport of a gateway that uses `@hermes/artifact-store`'s defaults. */
export const DEFAULT_ARTIFACT_TRANSPORT: ArtifactTransportInfo = Object.freeze({
  uploadPath: ARTIFACT_UPLOAD_PATH,
  downloadPath: `${ARTIFACT_DOWNLOAD_PATH_PREFIX}{artifact_id}`,
  maxBytes: DEFAULT_MAX_ARTIFACT_BYTES,
  ttlSeconds: DEFAULT_ARTIFACT_TTL_SECONDS,
  allowedMimeTypes: DEFAULT_ALLOWED_CONTENT_TYPES,
});

/** `features.browser_extension_control` of `GET /v1/capabilities`: always present, truthful, live. */
export function browserExtensionControlFeature(options: {
  readonly flags: ExtensionControlFlags;
  readonly artifactTransport: ArtifactTransportInfo;
}) {
  const { flags, artifactTransport } = options;
  return {
    enabled: flags.enabled,
    protocol_version: BROWSER_CONTROL_PROTOCOL_VERSION,
    capabilities: [...BROWSER_CONTROL_CAPABILITIES].sort(),
    artifact_capabilities: [...BROWSER_CONTROL_ARTIFACT_CAPABILITIES].sort(),
    developer_capabilities: [...BROWSER_CONTROL_DEVELOPER_CAPABILITIES].sort(),
    developer_mode: flags.developerMode,
    artifact_transport: {
      upload: { method: 'POST', path: artifactTransport.uploadPath },
      download: { method: 'GET', path: artifactTransport.downloadPath },
      max_bytes: artifactTransport.maxBytes,
      ttl_seconds: artifactTransport.ttlSeconds,
      allowed_mime_types: [...artifactTransport.allowedMimeTypes].sort(),
    },
    real_browser_actions: true,
    transports: { local_vps: 'websocket-subprotocol-ticket', cloud: 'authenticated-gateway-rpc' },
  };
}
