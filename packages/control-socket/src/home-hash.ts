import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { resolveHomePath } from '@hermes/config';
import { HOME_HASH_LENGTH } from './constants.js';

/**
 * The home as the server and every client must spell it: `~` expanded and made absolute by the
 * same rule `@hermes/config` applies to `HERMES_HOME` (`resolveHomePath`), symlinks followed for
 * the part that exists (a home that does not exist yet still hashes stably), and lower-cased on
 * Windows where paths are case-insensitive.
 */
export async function canonicalHomePath(
  home: string,
  platform: NodeJS.Platform = process.platform,
): Promise<string> {
  const absolute = resolveHomePath(home);
  let existing = absolute;
  const missing: string[] = [];
  let canonical = absolute;
  for (;;) {
    try {
      canonical = path.join(await realpath(existing), ...missing);
      break;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
  return platform === 'win32' ? canonical.toLowerCase() : canonical;
}

/** First 16 hex characters of the SHA-256 of the canonical home: names fallback sockets and pipes. */
export async function homeHash(
  home: string,
  platform: NodeJS.Platform = process.platform,
): Promise<string> {
  const canonical = await canonicalHomePath(home, platform);
  return createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, HOME_HASH_LENGTH);
}
