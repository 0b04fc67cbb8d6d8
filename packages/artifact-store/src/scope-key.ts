import { createHash } from 'node:crypto';
import { ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE, ArtifactError } from './errors.js';

/**
 * Who an artifact belongs to. Structurally compatible with a broker controller scope: extra
 * fields (session, profile, controller, capabilities) are allowed and deliberately ignored.
 */
export interface ArtifactScope {
  readonly principalId?: string | undefined;
  readonly transportFamily?: string | undefined;
}

/**
 * SHA-256 hex of `principal + NUL + transport family`.
 *
 * The session is excluded on purpose: an HTTP upload authenticated by API key has no session,
 * while the broker always validates from a session-bearing controller scope; ids are
 * unguessable and one-shot, so principal + family is the ownership boundary. Capabilities and
 * controller ids are excluded so a reconnecting controller keeps its artifacts.
 */
export function artifactScopeKey(scope: ArtifactScope): string {
  const principal = typeof scope.principalId === 'string' ? scope.principalId.trim() : '';
  if (principal === '') {
    throw new ArtifactError({
      code: 'artifact_principal_required',
      message: ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE,
    });
  }
  const family = typeof scope.transportFamily === 'string' ? scope.transportFamily : '';
  return createHash('sha256').update(`${scope.principalId}\0${family}`, 'utf8').digest('hex');
}
