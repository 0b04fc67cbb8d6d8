/** The body of a request addressed to a profile this gateway does not serve (not an OpenAI error). */
export const PROFILE_REJECTED_BODY = { error: 'Unknown or unconfigured profile' } as const;

const PROFILE_PREFIX = /^\/p\/([^/]*)(\/.*)?$/;

/**
 * `/p/<name>/rest` → `{ profile: name, path: /rest }`; `null` profile for a bare path;
 * `undefined` (refused) for a prefix that is blank or does not decode. Shared by the API and the
 * webhook listener, so both read a prefix alike.
 */
export function splitProfilePrefix(
  pathname: string,
): { profile: string | null; path: string } | undefined {
  const match = PROFILE_PREFIX.exec(pathname);
  if (!match) return { profile: null, path: pathname };
  try {
    const profile = decodeURIComponent(match[1] ?? '').trim();
    return profile === '' ? undefined : { profile, path: match[2] ?? '/' };
  } catch {
    return undefined;
  }
}
