import { ControllerRejected } from './errors.js';
import type { ControllerScope } from './scope.js';

/** The scope an artifact store checks ownership against (principal + transport family). */
export interface ArtifactValidationScope {
  readonly principalId?: string | undefined;
  readonly profileId?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly transportFamily?: string | undefined;
}

/**
 * The part of an artifact store the broker needs: check a reference without consuming it.
 * `@hermes/artifact-store`'s store satisfies it; a throw means the reference is refused.
 */
export interface ArtifactReferenceValidator {
  validate(artifactId: string, scope: ArtifactValidationScope): unknown;
}

export function toArtifactValidationScope(scope: ControllerScope): ArtifactValidationScope {
  return {
    principalId: scope.principalId ?? undefined,
    profileId: scope.profileId ?? undefined,
    sessionId: scope.sessionId ?? undefined,
    transportFamily: scope.transportFamily ?? undefined,
  };
}

/**
 * Validates the `artifact_id` argument of an artifact action against the store, before any frame
 * is written. Returns the trimmed id the frame will carry.
 */
export async function validateArtifactReference(options: {
  readonly action: string;
  readonly arguments: Record<string, unknown>;
  readonly scope: ControllerScope;
  readonly store: ArtifactReferenceValidator | undefined;
}): Promise<string> {
  const { action, store } = options;
  if (!store) throw new ControllerRejected(`${action} requires an attached artifact store`);
  const raw = options.arguments.artifact_id;
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new ControllerRejected(`${action} requires a non-empty artifact_id`);
  }
  const artifactId = raw.trim();
  try {
    await store.validate(artifactId, toArtifactValidationScope(options.scope));
  } catch (error) {
    if (ControllerRejected.isInstance(error) && error.code === 'controller_rejected') throw error;
    const text = error instanceof Error ? error.message : String(error);
    throw new ControllerRejected(`${action} rejected artifact reference '${artifactId}': ${text}`);
  }
  return artifactId;
}
