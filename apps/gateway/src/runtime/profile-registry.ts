import path from 'node:path';
import {
  DEFAULT_PROFILE_NAME,
  getDefaultHermesRoot,
  listProfiles,
  normalizeProfileName,
  PROFILE_NAME_PATTERN,
  profileMatchesHome,
  readEnvFile,
} from '@hermes/config';
import type { Logger } from 'pino';
import { type DelegationWiring, ProfileRuntime } from './profile-runtime.js';

/** How long a served-set enumeration is reused (it reads the profiles folder). */
export const SERVED_SET_TTL_MS = 2000;

export type ProfileResolution =
  | { readonly ok: true; readonly runtime: ProfileRuntime }
  | { readonly ok: false };

/**
 * Which profile a request addresses. Without multiplexing the gateway serves only its launch
 * profile: a `/p/<name>` prefix that provably names it is the bare route, anything else is refused
 * (a wrong-agent answer is worse than an error). With multiplexing the served set decides — the
 * default profile plus every live, unparked profile, narrowed by the allowlist — and each profile
 * gets its own runtime: home, config, `.env` secrets (never `process.env`) and `state.db`.
 */
export class ProfileRegistry {
  readonly primary: ProfileRuntime;
  readonly multiplex: boolean;
  readonly #root: string;
  readonly #allowlist: ReadonlySet<string> | undefined;
  readonly #logger: Logger;
  readonly #onCreate: ((runtime: ProfileRuntime) => void) | undefined;
  readonly #delegation: DelegationWiring | undefined;
  readonly #runtimes = new Map<string, ProfileRuntime>();
  #served: { at: number; names: ReadonlySet<string> } | undefined;

  constructor(options: {
    primary: ProfileRuntime;
    multiplex: boolean;
    allowlist: readonly string[] | undefined;
    logger: Logger;
    root?: string;
    /** Told about each profile runtime built on demand (the gateway adds its secrets to the log scrubber). */
    onCreate?: (runtime: ProfileRuntime) => void;
    delegation?: DelegationWiring | undefined;
  }) {
    this.primary = options.primary;
    this.multiplex = options.multiplex;
    this.#root = path.resolve(options.root ?? getDefaultHermesRoot());
    this.#allowlist = options.allowlist
      ? new Set(options.allowlist.map((name) => normalizeProfileName(name)))
      : undefined;
    this.#logger = options.logger;
    this.#onCreate = options.onCreate;
    this.#delegation = options.delegation;
    this.#runtimes.set(this.primary.name, this.primary);
  }

  /** Profile names served right now (multiplex), the primary first. */
  servedProfiles(): string[] {
    if (!this.multiplex) return [this.primary.name];
    const names = [...this.#servedSet()];
    return [this.primary.name, ...names.filter((name) => name !== this.primary.name).sort()];
  }

  #servedSet(): ReadonlySet<string> {
    const now = performance.now();
    if (this.#served && now - this.#served.at < SERVED_SET_TTL_MS) return this.#served.names;
    const names = new Set<string>();
    for (const profile of listProfiles(this.#root)) {
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

  /** The runtime for a request: `undefined` prefix → the launch profile. */
  resolve(prefix: string | undefined): ProfileResolution {
    const trimmed = prefix?.trim();
    if (!trimmed) return { ok: true, runtime: this.primary };
    if (!this.multiplex) {
      // Self-referential prefixes work like the bare route; anything unprovable is refused.
      return profileMatchesHome(trimmed, this.primary.home)
        ? { ok: true, runtime: this.primary }
        : { ok: false };
    }
    const name = normalizeProfileName(trimmed);
    if (!PROFILE_NAME_PATTERN.test(name)) return { ok: false };
    let served: ReadonlySet<string>;
    try {
      served = this.#servedSet();
    } catch {
      return { ok: false };
    }
    if (!served.has(name)) return { ok: false };
    if (name === this.primary.name) return { ok: true, runtime: this.primary };
    const existing = this.#runtimes.get(name);
    if (existing) return { ok: true, runtime: existing };
    const home =
      name === DEFAULT_PROFILE_NAME ? this.#root : path.join(this.#root, 'profiles', name);
    let secrets: Record<string, string>;
    try {
      secrets = readEnvFile(home);
    } catch (error) {
      this.#logger.warn({ profile: name, err: error }, 'profile .env cannot be read');
      return { ok: false };
    }
    const runtime = new ProfileRuntime({
      name,
      home,
      secrets,
      logger: this.#logger,
      delegation: this.#delegation,
    });
    this.#runtimes.set(name, runtime);
    this.#onCreate?.(runtime);
    return { ok: true, runtime };
  }

  runtimes(): ProfileRuntime[] {
    return [...this.#runtimes.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.runtimes().map((runtime) => runtime.close()));
  }
}
