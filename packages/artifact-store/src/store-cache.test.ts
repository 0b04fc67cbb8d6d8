import { access, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ArtifactStore } from './artifact-store.js';
import { ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE, ArtifactError } from './errors.js';
import { ArtifactStoreCache, artifactRootForHome } from './store-cache.js';

const scope = { principalId: 'principal:default:aaaa', transportFamily: 'local-api' };

afterEach(() => {
  vi.unstubAllEnvs();
});

async function homesByProfile() {
  const home = await tempHome('hermes-cache-');
  const resolved: string[] = [];
  return {
    root: home.path,
    resolved,
    resolveProfileHome: (profile: string) => {
      resolved.push(profile);
      return path.join(home.path, 'profiles', profile);
    },
  };
}

describe('ArtifactStoreCache', () => {
  it('builds exactly one store when first requests race on a cold profile', async () => {
    const homes = await homesByProfile();
    const created: ArtifactStore[] = [];
    const cache = new ArtifactStoreCache({
      resolveProfileHome: homes.resolveProfileHome,
      onStoreCreated: (_profile, store) => created.push(store),
    });

    const stores = await Promise.all(Array.from({ length: 10 }, () => cache.get('alpha')));

    expect(new Set(stores).size).toBe(1);
    expect(created).toEqual([stores[0]]);
    expect(homes.resolved).toEqual(['alpha']);
  });

  it('keeps an upload made through one racing request downloadable through another', async () => {
    const homes = await homesByProfile();
    const cache = new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome });
    const [first, second] = await Promise.all([cache.get('alpha'), cache.get('alpha')]);
    const receipt = await first!.store({
      data: Buffer.from('x'),
      filename: 'x.txt',
      contentType: 'text/plain',
      scope,
    });
    expect((await second!.load(receipt.artifactId, scope)).data.toString()).toBe('x');
  });

  it('gives each profile its own store under its own home', async () => {
    const homes = await homesByProfile();
    const cache = new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome });
    const beta = await cache.get('beta');
    const alpha = await cache.get('alpha');
    expect(alpha).not.toBe(beta);
    expect(alpha.root).toBe(artifactRootForHome(path.join(homes.root, 'profiles', 'alpha')));
    expect(beta.root).toBe(
      path.join(homes.root, 'profiles', 'beta', 'artifacts', 'browser-control'),
    );
    expect(cache.profiles().sort()).toEqual(['alpha', 'beta']);
  });

  it('answers a warm hit from memory without touching the disk', async () => {
    const homes = await homesByProfile();
    const cache = new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome });
    const store = await cache.get('alpha');
    await rm(store.root, { recursive: true });

    expect(cache.peek('alpha')).toBe(store);
    expect(await cache.get(' Alpha ')).toBe(store);
    expect(homes.resolved).toEqual(['alpha']);
    await expect(access(store.root)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('sweeps orphans of a previous process when it builds a store', async () => {
    const homes = await homesByProfile();
    const root = artifactRootForHome(homes.resolveProfileHome('alpha'));
    const previous = await ArtifactStore.open({ root });
    await previous.store({
      data: Buffer.from('x'),
      filename: 'x',
      contentType: 'text/plain',
      scope,
    });
    await writeFile(path.join(root, 'README'), 'keep');

    await new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome }).get('alpha');

    expect(await readdir(root)).toEqual(['README']);
  });

  it('keeps the event loop turning while it builds a cold store', async () => {
    const homes = await homesByProfile();
    const root = artifactRootForHome(homes.resolveProfileHome('alpha'));
    await ArtifactStore.open({ root });
    await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        writeFile(path.join(root, `${index.toString(16).padStart(32, '0')}.tmp`), 'orphan'),
      ),
    );
    let turns = 0;
    let running = true;
    const spin = () => {
      turns += 1;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    await new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome }).get('alpha');
    running = false;
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(await readdir(root)).toEqual([]);
  });

  it('resolves profile homes through @hermes/config by default', async () => {
    const home = await tempHome('hermes-cache-default-');
    vi.stubEnv('HERMES_HOME', home.path);
    const cache = new ArtifactStoreCache();
    expect((await cache.get('default')).root).toBe(artifactRootForHome(home.path));
    expect((await cache.get('work')).root).toBe(
      artifactRootForHome(path.join(home.path, 'profiles', 'work')),
    );
  });

  it('refuses a profile without a resolvable root and retries on the next request', async () => {
    const homes = await homesByProfile();
    let failures = 1;
    const cache = new ArtifactStoreCache({
      resolveProfileHome: (profile) => {
        if (failures-- > 0) throw new Error('home not ready');
        return homes.resolveProfileHome(profile);
      },
    });
    const attempt = cache.get('alpha');
    await expect(attempt).rejects.toBeInstanceOf(ArtifactError);
    await expect(attempt).rejects.toThrow(ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE);
    await expect(new ArtifactStoreCache().get('../escape')).rejects.toThrow(
      ARTIFACT_ROOT_UNRESOLVABLE_MESSAGE,
    );
    expect((await cache.get('alpha')).root).toContain('alpha');
  });

  it('lets a caller inject or remove a profile store', async () => {
    const homes = await homesByProfile();
    const cache = new ArtifactStoreCache({ resolveProfileHome: homes.resolveProfileHome });
    const injected = await ArtifactStore.open({ root: path.join(homes.root, 'injected') });
    cache.set('alpha', injected);
    expect(await cache.get('alpha')).toBe(injected);
    cache.set('alpha', null);
    const rebuilt = await cache.get('alpha');
    expect(rebuilt).not.toBe(injected);
    expect(rebuilt.root).toContain(path.join('profiles', 'alpha'));
  });
});
