import { existsSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { HermesConfigError } from './errors.js';
import { getDefaultHermesRoot, getHermesHome, resolveHomePath } from './home.js';

/** Names a profile may take: lowercase letters, digits, `-` and `_`, 1–64 long. */
export const PROFILE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The profile that lives at the root itself. */
export const DEFAULT_PROFILE_NAME = 'default';

/** Names that cannot be given to a new profile. */
export const RESERVED_PROFILE_NAMES: ReadonlySet<string> = new Set([
  'hermes',
  'default',
  'test',
  'tmp',
  'root',
  'sudo',
]);

/** Sub-folders seeded into every new profile home. */
export const PROFILE_SUBDIRECTORIES = [
  'memories',
  'sessions',
  'skills',
  'skins',
  'logs',
  'plans',
  'workspace',
  'cron',
  'home',
] as const;

/** A marker file in a profile home that keeps a multiplexing gateway from serving it. */
export const PARKED_MARKER_FILE = 'gateway.parked';

export interface ProfileInfo {
  readonly name: string;
  readonly home: string;
  readonly isDefault: boolean;
  readonly parked: boolean;
}

/** Trims and lower-cases a profile name; does not validate it. */
export function normalizeProfileName(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * Returns the normalised name, or throws `invalid_profile_name` with a message that says what is
 * allowed. Rejects anything that could step outside the profiles folder (`../x`, `a/b`, `.`).
 */
export function validateProfileName(name: string): string {
  const normalized = typeof name === 'string' ? normalizeProfileName(name) : '';
  if (normalized === DEFAULT_PROFILE_NAME) return normalized;
  if (!PROFILE_NAME_PATTERN.test(normalized)) {
    throw new HermesConfigError({
      code: 'invalid_profile_name',
      message: `invalid profile name ${JSON.stringify(name)}: use 1-64 characters from a-z, 0-9, "-" and "_", starting with a letter or digit`,
    });
  }
  return normalized;
}

/** `<root>/profiles`, where named profiles live. */
export function getProfilesRoot(root: string = getDefaultHermesRoot()): string {
  return path.join(root, 'profiles');
}

/** The home of profile `name` (`default` is the root itself). Throws on an invalid name. */
export function getProfileDir(name: string, root: string = getDefaultHermesRoot()): string {
  const normalized = validateProfileName(name);
  if (normalized === DEFAULT_PROFILE_NAME) return root;
  return path.join(getProfilesRoot(root), normalized);
}

function canonicalPath(target: string): string {
  const resolved = resolveHomePath(target);
  try {
    return realpathSync.native(resolved);
  } catch {
    return resolved;
  }
}

/**
 * The name of the profile whose home is `home` (default: the current home): `default` for the
 * root, the profile's name for `<root>/profiles/<name>`, otherwise `custom`.
 */
export function getActiveProfileName(home: string = getHermesHome()): string {
  const root = getDefaultHermesRoot();
  const resolvedHome = canonicalPath(home);
  if (resolvedHome === canonicalPath(root)) return DEFAULT_PROFILE_NAME;
  const parent = path.dirname(resolvedHome);
  const name = path.basename(resolvedHome);
  if (parent === canonicalPath(getProfilesRoot(root)) && PROFILE_NAME_PATTERN.test(name)) {
    return name;
  }
  return 'custom';
}

/**
 * True only when profile `name` provably lives at `home` (default: the current home). Any doubt —
 * an invalid name, an unresolvable path — answers false: a process that cannot prove who it is
 * must not answer as anyone.
 */
export function profileMatchesHome(name: string, home?: string): boolean {
  try {
    // Resolving the current home can throw too (no HOME, no passwd entry): that is doubt, not a crash.
    return canonicalPath(getProfileDir(name)) === canonicalPath(home ?? getHermesHome());
  } catch {
    return false;
  }
}

/** The default profile plus every named profile folder, sorted by name after `default`. */
export function listProfiles(root: string = getDefaultHermesRoot()): ProfileInfo[] {
  const profiles: ProfileInfo[] = [
    {
      name: DEFAULT_PROFILE_NAME,
      home: root,
      isDefault: true,
      parked: existsSync(path.join(root, PARKED_MARKER_FILE)),
    },
  ];
  let entries: string[];
  try {
    entries = readdirSync(getProfilesRoot(root));
  } catch {
    return profiles;
  }
  for (const entry of entries.sort()) {
    if (!PROFILE_NAME_PATTERN.test(entry) || entry === DEFAULT_PROFILE_NAME) continue;
    const home = path.join(getProfilesRoot(root), entry);
    try {
      if (!statSync(home).isDirectory()) continue;
    } catch {
      continue;
    }
    profiles.push({
      name: entry,
      home,
      isDefault: false,
      parked: existsSync(path.join(home, PARKED_MARKER_FILE)),
    });
  }
  return profiles;
}

/**
 * Creates profile `name` under the default root with the standard sub-folders and returns its
 * home. Refuses reserved names and existing profiles.
 */
export function createProfile(name: string, root: string = getDefaultHermesRoot()): string {
  const normalized = validateProfileName(name);
  if (RESERVED_PROFILE_NAMES.has(normalized)) {
    throw new HermesConfigError({
      code: 'reserved_profile_name',
      message: `profile name "${normalized}" is reserved; choose another name`,
    });
  }
  const home = getProfileDir(normalized, root);
  mkdirSync(path.dirname(home), { recursive: true, mode: 0o700 });
  try {
    // Not recursive: the mkdir itself is the existence check, so two concurrent creators cannot
    // both believe they made the profile.
    mkdirSync(home, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new HermesConfigError({
      code: 'profile_exists',
      message: `profile "${normalized}" already exists at ${home}`,
    });
  }
  for (const folder of PROFILE_SUBDIRECTORIES) {
    mkdirSync(path.join(home, folder), { recursive: true, mode: 0o700 });
  }
  return home;
}
