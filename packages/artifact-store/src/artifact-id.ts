import { randomBytes } from 'node:crypto';
import { ARTIFACT_ID_BYTES, ARTIFACT_ID_PATTERN } from './constants.js';

/** A fresh artifact id: 16 bytes from the CSPRNG as 32 lowercase hex characters. */
export function mintArtifactId(): string {
  return randomBytes(ARTIFACT_ID_BYTES).toString('hex');
}

/** True when `value` has the exact shape of a minted id (and so can never name another path). */
export function isArtifactId(value: unknown): value is string {
  return typeof value === 'string' && ARTIFACT_ID_PATTERN.test(value);
}
