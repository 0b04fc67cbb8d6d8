import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from './atomic-write.js';
import { HermesConfigError } from './errors.js';
import { getDefaultHermesRoot, resolveHomePath } from './home.js';
import {
  DEFAULT_PROFILE_NAME,
  getActiveProfileName,
  getProfileDir,
  PROFILE_NAME_PATTERN,
  validateProfileName,
} from './profiles.js';

/** `<root>/active_profile`: the sticky default profile (`hermes profile use <name>`). */
export const ACTIVE_PROFILE_FILE = 'active_profile';

/** Where the sticky default profile is recorded. */
export function getActiveProfilePath(root: string = getDefaultHermesRoot()): string {
  return path.join(root, ACTIVE_PROFILE_FILE);
}

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The sticky default profile named in `<root>/active_profile`, normalised; `undefined` when the file
 * is missing, empty, names `default`, or holds something that is not a profile name (a hand-edited
 * file must never point a home outside the profiles folder).
 */
export function readActiveProfile(root: string = getDefaultHermesRoot()): string | undefined {
  let text: string;
  try {
    text = readFileSync(getActiveProfilePath(root), 'utf8');
  } catch {
    return undefined;
  }
  const name = text.trim().toLowerCase();
  if (name === '' || name === DEFAULT_PROFILE_NAME || !PROFILE_NAME_PATTERN.test(name)) {
    return undefined;
  }
  return name;
}

/**
 * Makes `name` the sticky default profile. `default` removes the file (the root is the default
 * anyway). A named profile must exist: `profile_not_found` otherwise. Returns the normalised name.
 */
export function setActiveProfile(name: string, root: string = getDefaultHermesRoot()): string {
  const normalized = validateProfileName(name);
  const file = getActiveProfilePath(root);
  if (normalized === DEFAULT_PROFILE_NAME) {
    rmSync(file, { force: true });
    return normalized;
  }
  const home = getProfileDir(normalized, root);
  if (!isDirectory(home)) throw profileNotFound(normalized);
  writeFileAtomicSync(file, `${normalized}\n`);
  return normalized;
}

function profileNotFound(name: string): HermesConfigError {
  return new HermesConfigError({
    code: 'profile_not_found',
    message: `profile "${name}" does not exist — create it with: hermes profile create ${name}`,
  });
}

/** Which home a command runs in, and why. */
export interface ProfileSelection {
  /** The absolute home to use (set it as `HERMES_HOME` for everything that follows). */
  readonly home: string;
  /** `default`, a profile name, or `custom` for a `HERMES_HOME` outside the profiles folder. */
  readonly profile: string;
  /** `flag` (`-p`), `env` (`HERMES_HOME`), `sticky` (`active_profile`) or `default`. */
  readonly source: 'flag' | 'env' | 'sticky' | 'default';
  /** Something the user should hear about (a sticky profile that no longer exists). */
  readonly warning?: string;
}

/**
 * Decides the home of a command line before anything reads it (the `-p` pre-parse of a CLI):
 *
 * 1. an explicit profile (`-p <name>`) — validated (`invalid_profile_name`) and required to exist
 *    (`profile_not_found`), except `default`, which is the root;
 * 2. `HERMES_HOME` when it names something other than the root (an explicit choice of home);
 * 3. the sticky profile in `<root>/active_profile`, when it still exists (otherwise the root, with
 *    a `warning`);
 * 4. the root.
 */
export function selectProfileHome(
  options: { profile?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): ProfileSelection {
  const env = options.env ?? process.env;
  const root = getDefaultHermesRoot(env);
  if (options.profile !== undefined) {
    const name = validateProfileName(options.profile);
    const home = getProfileDir(name, root);
    if (name !== DEFAULT_PROFILE_NAME && !isDirectory(home)) throw profileNotFound(name);
    return { home, profile: name, source: 'flag' };
  }
  const fromEnv = env.HERMES_HOME?.trim();
  if (fromEnv) {
    const home = resolveHomePath(fromEnv, env);
    if (home !== root) {
      return { home, profile: getActiveProfileName(home), source: 'env' };
    }
  }
  const sticky = readActiveProfile(root);
  if (sticky !== undefined) {
    const home = getProfileDir(sticky, root);
    if (isDirectory(home)) return { home, profile: sticky, source: 'sticky' };
    return {
      home: root,
      profile: DEFAULT_PROFILE_NAME,
      source: 'default',
      warning: `the active profile "${sticky}" (${getActiveProfilePath(root)}) no longer exists; using the default profile. Choose another with: hermes profile use <name>`,
    };
  }
  return { home: root, profile: DEFAULT_PROFILE_NAME, source: 'default' };
}

/**
 * Deletes a named profile's home with everything in it, and clears the sticky default when it
 * named this profile. `default` cannot be deleted (`profile_not_deletable`); a missing profile is
 * `profile_not_found`. The caller makes sure no gateway runs for it. Returns the deleted home.
 */
export function deleteProfile(name: string, root: string = getDefaultHermesRoot()): string {
  const normalized = validateProfileName(name);
  if (normalized === DEFAULT_PROFILE_NAME) {
    throw new HermesConfigError({
      code: 'profile_not_deletable',
      message: 'the default profile cannot be deleted (it is the root that holds the others)',
    });
  }
  const home = getProfileDir(normalized, root);
  if (!isDirectory(home)) throw profileNotFound(normalized);
  if (readActiveProfile(root) === normalized) rmSync(getActiveProfilePath(root), { force: true });
  rmSync(home, { recursive: true, force: true });
  if (existsSync(home)) {
    throw new HermesConfigError({
      code: 'config_write_failed',
      message: `profile "${normalized}" could not be removed completely from ${home}`,
    });
  }
  return home;
}
