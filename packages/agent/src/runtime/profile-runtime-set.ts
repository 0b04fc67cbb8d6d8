import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_PROFILE_NAME,
  type GatewayConfig,
  getActiveProfileName,
  getDefaultHermesRoot,
  getProfileDir,
  listProfiles,
  normalizeProfileName,
  PROFILE_NAME_PATTERN,
  readEnvFile,
  validateProfileName,
} from '@hermes/config';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import {
  createProfileRuntime,
  type ProfileRuntime,
  type ProfileRuntimeOptions,
} from './profile-runtime.js';

/** How long a multiplex served-set enumeration is reused (it reads the profiles folder; ms). */
export const SERVED_SET_TTL_MS = 2000;

/**
 * Which profiles a process serves besides its launch profile:
 * - `launch`: only the launch profile; a name resolves when it provably names the launch home
 *   (anything unprovable is refused: a wrong-profile answer is worse than an error);
 * - `multiplex`: the default profile plus every unparked profile, narrowed by the allowlist
 *   (`gateway.multiplex_profiles`, `gateway.multiplex_profile_allowlist`);
 * - `existing`: any profile whose folder exists (a front end picking a profile).
 */
export type ProfileServing = 'launch' | 'multiplex' | 'existing';

export interface ProfileRuntimeSetOptions {
  /** The profile the process was started for. */
  readonly launch: {
    readonly home: string;
    /** Default: the profile that lives at `home` (`getActiveProfileName`). */
    readonly name?: string | undefined;
    /** Default: the process environment (its `.env` applied by the caller). */
    readonly secrets?: Readonly<Record<string, string>> | undefined;
  };
  readonly serve?: ProfileServing | undefined;
  /** `multiplex` only: the profiles that may be served (normalised names). */
  readonly allowlist?: readonly string[] | undefined;
  /** The profiles root (default `getDefaultHermesRoot()`). */
  readonly root?: string | undefined;
  /** Options every runtime of the set gets (name, home and secrets are the set's). */
  readonly runtime?: Omit<ProfileRuntimeOptions, 'name' | 'home' | 'secrets'> | undefined;
  /** Told about each runtime built on demand (not the launch one), e.g. to learn its secrets. */
  readonly onCreate?: ((runtime: ProfileRuntime) => void) | undefined;
}

/**
 * The profiles one process serves, each as one `ProfileRuntime` (built on first use, with its own
 * `.env` as its secrets — never `process.env`).
 */
export interface ProfileRuntimeSet {
  readonly launch: ProfileRuntime;
  readonly root: string;
  readonly serve: ProfileServing;
  /**
   * The runtime for `name` (undefined: the launch profile). Throws `AgentError`
   * `profile_not_served` saying why (invalid name, not found, not served, unreadable `.env`).
   */
  resolve(name?: string | undefined): ProfileRuntime;
  /** `resolve` without the reason: `undefined` for a profile that is not served. */
  find(name?: string | undefined): ProfileRuntime | undefined;
  /** The names served right now, the launch profile first. */
  servedProfiles(): string[];
  /** Every runtime built so far, the launch profile first. */
  runtimes(): ProfileRuntime[];
  /** Closes every runtime (each in its order: delivery, registry, store). */
  close(): Promise<void>;
}

/** `serve` and `allowlist` for a gateway's resolved `gateway` config section. */
export function profileServingOf(gateway: GatewayConfig): {
  serve: ProfileServing;
  allowlist: readonly string[] | undefined;
} {
  return {
    serve: gateway.multiplexProfiles ? 'multiplex' : 'launch',
    allowlist: gateway.multiplexProfileAllowlist,
  };
}

function notServed(message: string, cause?: unknown): AgentError {
  return new AgentError({ code: 'profile_not_served', message, cause });
}

function canonical(target: string): string {
  try {
    return realpathSync.native(target);
  } catch {
    return path.resolve(target);
  }
}

/** The profile living at `home` under `root` (`default`, a profile name, or `custom`). */
function launchName(home: string, root: string, rootGiven: boolean): string {
  if (!rootGiven) return getActiveProfileName(home);
  const resolved = canonical(home);
  if (resolved === canonical(root)) return DEFAULT_PROFILE_NAME;
  const name = path.basename(resolved);
  return path.dirname(resolved) === canonical(path.join(root, 'profiles')) &&
    PROFILE_NAME_PATTERN.test(name)
    ? name
    : 'custom';
}

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

class ProfileRuntimeSetImpl implements ProfileRuntimeSet {
  readonly launch: ProfileRuntime;
  readonly root: string;
  readonly serve: ProfileServing;
  readonly #options: ProfileRuntimeSetOptions;
  readonly #allowlist: ReadonlySet<string> | undefined;
  readonly #runtimes = new Map<string, ProfileRuntime>();
  #served: { at: number; names: ReadonlySet<string> } | undefined;

  constructor(options: ProfileRuntimeSetOptions) {
    this.#options = options;
    this.serve = options.serve ?? 'launch';
    this.root = path.resolve(options.root ?? getDefaultHermesRoot());
    this.#allowlist = options.allowlist
      ? new Set(options.allowlist.map((name) => normalizeProfileName(name)))
      : undefined;
    const home = path.resolve(options.launch.home);
    this.launch = createProfileRuntime({
      ...options.runtime,
      name: options.launch.name ?? launchName(home, this.root, options.root !== undefined),
      home,
      secrets: options.launch.secrets,
    });
    this.#runtimes.set(this.launch.name, this.launch);
  }

  servedProfiles(): string[] {
    const launch = this.launch.name;
    if (this.serve === 'launch') return [launch];
    const names =
      this.serve === 'multiplex'
        ? [...this.#servedSet()]
        : listProfiles(this.root).map((profile) => profile.name);
    return [launch, ...names.filter((name) => name !== launch).sort()];
  }

  #servedSet(): ReadonlySet<string> {
    const now = performance.now();
    if (this.#served && now - this.#served.at < SERVED_SET_TTL_MS) return this.#served.names;
    const names = new Set<string>();
    for (const profile of listProfiles(this.root)) {
      if (profile.isDefault) {
        names.add(DEFAULT_PROFILE_NAME); // the default profile is always served
        continue;
      }
      if (profile.parked) continue;
      if (this.#allowlist && !this.#allowlist.has(profile.name)) continue;
      names.add(profile.name);
    }
    this.#served = { at: now, names };
    return names;
  }

  find(name?: string | undefined): ProfileRuntime | undefined {
    try {
      return this.resolve(name);
    } catch (error) {
      if (AgentError.isInstance(error) && error.code === 'profile_not_served') return undefined;
      throw error;
    }
  }

  resolve(name?: string | undefined): ProfileRuntime {
    if (name === undefined) return this.launch;
    let normalized: string;
    try {
      normalized = validateProfileName(name);
    } catch (error) {
      throw notServed(error instanceof Error ? error.message : String(error), error);
    }
    if (this.serve === 'launch') {
      // Self-referential names work like no name; anything unprovable is refused.
      if (this.#namesLaunch(normalized)) return this.launch;
      throw notServed(AGENT_ERROR_MESSAGES.profileNotServed(normalized));
    }
    const existing = this.#runtimes.get(normalized);
    if (existing && this.#stillServed(normalized)) return existing;
    const home = this.#homeOf(normalized);
    if (path.resolve(home) === this.launch.home) return this.launch;
    let secrets: Record<string, string>;
    try {
      secrets = readEnvFile(home);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.#options.runtime?.logger?.warn(
        { profile: normalized, err: error },
        'profile .env cannot be read',
      );
      throw notServed(AGENT_ERROR_MESSAGES.profileEnvUnreadable(normalized, detail), error);
    }
    const runtime = createProfileRuntime({
      ...this.#options.runtime,
      name: normalized,
      home,
      secrets,
    });
    this.#runtimes.set(normalized, runtime);
    this.#options.onCreate?.(runtime);
    return runtime;
  }

  /** True only when profile `name` provably lives at the launch home; any doubt is false. */
  #namesLaunch(name: string): boolean {
    try {
      return realpathSync.native(getProfileDir(name, this.root)) === canonical(this.launch.home);
    } catch {
      return false;
    }
  }

  /**
   * Multiplex: a parked or removed profile stops being served even once built — the launch
   * profile included (the bare route still serves it; a prefix must be in the served set).
   */
  #stillServed(name: string): boolean {
    if (this.serve !== 'multiplex') return true;
    try {
      return this.#servedSet().has(name);
    } catch {
      return false;
    }
  }

  /** The home of a profile this set serves; throws `profile_not_served` otherwise. */
  #homeOf(name: string): string {
    if (this.serve === 'multiplex') {
      let served: ReadonlySet<string>;
      try {
        served = this.#servedSet();
      } catch (error) {
        throw notServed(AGENT_ERROR_MESSAGES.profileNotServed(name), error);
      }
      if (!served.has(name)) throw notServed(AGENT_ERROR_MESSAGES.profileNotServed(name));
      if (name === this.launch.name) return this.launch.home;
      return name === DEFAULT_PROFILE_NAME ? this.root : path.join(this.root, 'profiles', name);
    }
    const home = getProfileDir(name, this.root);
    if (name !== DEFAULT_PROFILE_NAME && !isDirectory(home))
      throw notServed(AGENT_ERROR_MESSAGES.profileNotFound(name));
    return home;
  }

  runtimes(): ProfileRuntime[] {
    return [...this.#runtimes.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.runtimes().map((runtime) => runtime.close()));
  }
}

/** The profiles a process serves (see `ProfileRuntimeSet`, `ProfileServing`). */
export function createProfileRuntimeSet(options: ProfileRuntimeSetOptions): ProfileRuntimeSet {
  return new ProfileRuntimeSetImpl(options);
}
