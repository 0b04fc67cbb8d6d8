import { lstat, readdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getHermesHome } from '@hermes/config';

/** Files older than this many hours are stale by default (every `cleanupXCache` hook). */
export const DEFAULT_CACHE_MAX_AGE_HOURS = 24;
/** Bot Mode stages DMs as text files in `<tmp>/hermes-dm-<uid>`. */
export const DM_DIR_NAME = 'hermes-dm';

/** The media caches: the current directory under the home and the legacy one it replaced. */
export const MEDIA_CACHES = {
  image: { directory: 'cache/images', legacy: 'image_cache', label: 'Image' },
  audio: { directory: 'cache/audio', legacy: 'audio_cache', label: 'Audio' },
  video: { directory: 'cache/videos', legacy: 'video_cache', label: 'Video' },
  document: { directory: 'cache/documents', legacy: 'document_cache', label: 'Document' },
  screenshot: {
    directory: 'cache/screenshots',
    legacy: 'browser_screenshots',
    label: 'Screenshot',
  },
} as const;
export type MediaCache = keyof typeof MEDIA_CACHES;

/**
 * Removes the regular files of `directory` whose modification time is older than `maxAgeHours`
 * (and that `match` accepts). An unlink that fails is skipped, not counted; a missing directory
 * removes nothing. Returns how many files went. All I/O is async: it never blocks the loop.
 */
export async function removeStaleFiles(
  directory: string,
  maxAgeHours: number,
  options: { match?: (name: string) => boolean; now?: number } = {},
): Promise<number> {
  const cutoff = (options.now ?? Date.now()) - maxAgeHours * 3_600_000;
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (options.match && !options.match(name)) continue;
    const file = path.join(directory, name);
    try {
      const stats = await lstat(file);
      if (!stats.isFile() || stats.mtimeMs >= cutoff) continue;
      await unlink(file);
      removed += 1;
    } catch {
      // gone already, or not ours to remove: skipped
    }
  }
  return removed;
}

async function hasEntries(directory: string): Promise<boolean> {
  try {
    return (await readdir(directory)).length > 0;
  } catch {
    return false;
  }
}

/**
 * `cleanup<X>Cache(maxAgeHours = 24) → files removed` for one media cache of the current home:
 * the current directory, and the legacy one when it still has content.
 */
export async function cleanupMediaCache(
  cache: MediaCache,
  maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS,
  home: string = getHermesHome(),
): Promise<number> {
  const spec = MEDIA_CACHES[cache];
  let removed = await removeStaleFiles(path.join(home, spec.directory), maxAgeHours);
  const legacy = path.join(home, spec.legacy);
  if (await hasEntries(legacy)) removed += await removeStaleFiles(legacy, maxAgeHours);
  return removed;
}

export const cleanupImageCache = (maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS, home?: string) =>
  cleanupMediaCache('image', maxAgeHours, home);
export const cleanupAudioCache = (maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS, home?: string) =>
  cleanupMediaCache('audio', maxAgeHours, home);
export const cleanupVideoCache = (maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS, home?: string) =>
  cleanupMediaCache('video', maxAgeHours, home);
export const cleanupDocumentCache = (maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS, home?: string) =>
  cleanupMediaCache('document', maxAgeHours, home);
export const cleanupScreenshotCache = (maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS, home?: string) =>
  cleanupMediaCache('screenshot', maxAgeHours, home);

/** The per-user DM staging directory, `<tmp>/hermes-dm-<uid>` (`<tmp>/hermes-dm-user` without uids). */
export function dmDirectory(tmpRoot: string = os.tmpdir()): string {
  const uid = typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
  return path.join(tmpRoot, `${DM_DIR_NAME}-${uid}`);
}

/**
 * `cleanupBotDmCache(maxAgeHours = 24)`: stale `hermes-dm-*.txt` and `hermes-relay-dm-*.txt`
 * orphans in the temp root, and `*.txt`, `*.live.json`, `*.signal` in the per-user DM directory —
 * entered only when it is a real directory owned by this user (fail closed otherwise).
 */
export async function cleanupBotDmCache(
  maxAgeHours = DEFAULT_CACHE_MAX_AGE_HOURS,
  tmpRoot: string = os.tmpdir(),
): Promise<number> {
  let removed = await removeStaleFiles(tmpRoot, maxAgeHours, {
    match: (name) => /^hermes-(relay-)?dm-.*\.txt$/.test(name),
  });
  const directory = dmDirectory(tmpRoot);
  try {
    const stats = await lstat(directory);
    const ownUid = typeof process.getuid === 'function' ? process.getuid() : stats.uid;
    if (stats.isDirectory() && stats.uid === ownUid)
      removed += await removeStaleFiles(directory, maxAgeHours, {
        match: (name) => /\.(txt|live\.json|signal)$/.test(name),
      });
  } catch {
    // no DM directory yet
  }
  return removed;
}
