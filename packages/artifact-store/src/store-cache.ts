import path from 'node:path';
import { getProfileDir, normalizeProfileName } from '@hermes/config';
import { ArtifactStore, type ArtifactStoreOptions } from './artifact-store.js';
import { ARTIFACT_ROOT_SEGMENTS } from './constants.js';
import { ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE, ArtifactError } from './errors.js';

export interface ArtifactStoreCacheOptions {
  /**
   * The home of a profile. Default: `getProfileDir(profile)` from `@hermes/config`. Throwing (or
   * returning an empty string) means the profile has no artifact root.
   */
  readonly resolveProfileHome?: (profile: string) => string;
  /** Options for every store the cache builds (the root is always derived per profile). */
  readonly storeOptions?: Omit<ArtifactStoreOptions, 'root'>;
  /**
   * Called once per newly built store, after its first prune; the gateway uses it to attach the
   * store to the broker under that profile.
   */
  readonly onStoreCreated?: (profile: string, store: ArtifactStore) => void;
}

/** `<profile home>/artifacts/browser-control`. */
export function artifactRootForHome(home: string): string {
  return path.join(home, ...ARTIFACT_ROOT_SEGMENTS);
}

/**
 * One artifact store per resolved profile name, so on a multiplexed listener profile A can never
 * pin profile B to A's root.
 *
 * Construction is single-flight per profile: racing first requests share one in-progress build.
 * Building two would be a silent data-loss bug — receipts live only in the store's memory, so the
 * uploads accepted by the store that lost the race could never be downloaded.
 */
export class ArtifactStoreCache {
  readonly #resolveProfileHome: (profile: string) => string;
  readonly #storeOptions: Omit<ArtifactStoreOptions, 'root'>;
  readonly #onStoreCreated: ((profile: string, store: ArtifactStore) => void) | undefined;
  readonly #stores = new Map<string, ArtifactStore>();
  readonly #building = new Map<string, Promise<ArtifactStore>>();

  constructor(options: ArtifactStoreCacheOptions = {}) {
    this.#resolveProfileHome = options.resolveProfileHome ?? ((profile) => getProfileDir(profile));
    this.#storeOptions = options.storeOptions ?? {};
    this.#onStoreCreated = options.onStoreCreated;
  }

  /** The cached store of `profile`, without building one. A warm hit does no I/O at all. */
  peek(profile: string): ArtifactStore | undefined {
    return this.#stores.get(normalizeProfileName(profile));
  }

  /** The store of `profile`, built (async mkdir + orphan sweep + prune) on first use. */
  get(profile: string): Promise<ArtifactStore> {
    const key = normalizeProfileName(profile);
    const cached = this.#stores.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const inFlight = this.#building.get(key);
    if (inFlight !== undefined) return inFlight;
    const building = this.#build(key).finally(() => {
      this.#building.delete(key);
    });
    this.#building.set(key, building);
    return building;
  }

  /**
   * Replaces the store of `profile` (tests, diagnostics); `null` removes it so the next `get`
   * builds a fresh one.
   */
  set(profile: string, store: ArtifactStore | null): void {
    const key = normalizeProfileName(profile);
    if (store === null) this.#stores.delete(key);
    else this.#stores.set(key, store);
  }

  /** Profiles with a built store. */
  profiles(): string[] {
    return Array.from(this.#stores.keys());
  }

  async #build(profile: string): Promise<ArtifactStore> {
    const root = this.#resolveRoot(profile);
    const store = await ArtifactStore.open({ ...this.#storeOptions, root });
    await store.pruneExpired();
    // A `set()` during the build wins: the injected store is what the caller asked for.
    const existing = this.#stores.get(profile);
    if (existing !== undefined) return existing;
    this.#stores.set(profile, store);
    this.#onStoreCreated?.(profile, store);
    return store;
  }

  #resolveRoot(profile: string): string {
    let home: string;
    try {
      home = this.#resolveProfileHome(profile);
    } catch (error) {
      throw new ArtifactError({
        code: 'artifact_root_unresolvable',
        message: ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE,
        cause: error,
      });
    }
    if (typeof home !== 'string' || home.trim() === '') {
      throw new ArtifactError({
        code: 'artifact_root_unresolvable',
        message: ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE,
      });
    }
    return artifactRootForHome(home);
  }
}
