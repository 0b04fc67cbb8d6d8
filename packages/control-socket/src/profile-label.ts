import path from 'node:path';
import {
  DEFAULT_PROFILE_NAME,
  getDefaultHermesRoot,
  getProfilesRoot,
  PROFILE_NAME_PATTERN,
} from '@hermes/config';
import { canonicalHomePath } from './home-hash.js';

/**
 * The profile a home belongs to: `default` for the root, the name for `<root>/profiles/<name>`,
 * `null` for any other (custom) home. The same answer as `getActiveProfileName` from
 * `@hermes/config`, but with asynchronous path resolution, so it is safe on a socket handler's
 * path.
 */
export async function profileLabelForHome(home: string): Promise<string | null> {
  const root = getDefaultHermesRoot();
  const [canonicalHome, canonicalRoot, canonicalProfiles] = await Promise.all([
    canonicalHomePath(home),
    canonicalHomePath(root),
    canonicalHomePath(getProfilesRoot(root)),
  ]);
  if (canonicalHome === canonicalRoot) return DEFAULT_PROFILE_NAME;
  const name = path.basename(canonicalHome);
  return path.dirname(canonicalHome) === canonicalProfiles && PROFILE_NAME_PATTERN.test(name)
    ? name
    : null;
}
