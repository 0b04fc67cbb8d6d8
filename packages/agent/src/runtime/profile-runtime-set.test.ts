import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PARKED_MARKER_FILE, resolveConfig } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ProfileRuntime } from './profile-runtime.js';
import {
  createProfileRuntimeSet,
  type ProfileRuntimeSetOptions,
  profileServingOf,
  SERVED_SET_TTL_MS,
} from './profile-runtime-set.js';

/** A profiles root with named profiles, each with its own `.env`. */
async function profilesRoot(profiles: Record<string, { env?: string; parked?: boolean }>) {
  const root = (await tempHome('hermes-root-')).path;
  await writeFile(path.join(root, '.env'), 'OPENAI_API_KEY=root-key\n');
  for (const [name, profile] of Object.entries(profiles)) {
    const home = path.join(root, 'profiles', name);
    await mkdir(home, { recursive: true });
    if (profile.env !== undefined) await writeFile(path.join(home, '.env'), profile.env);
    if (profile.parked) await writeFile(path.join(home, PARKED_MARKER_FILE), '');
  }
  return root;
}

function runtimeSet(options: ProfileRuntimeSetOptions) {
  const set = createProfileRuntimeSet(options);
  onTestFinished(() => set.close());
  return set;
}

function notServed(run: () => unknown): { code?: string; message?: string } {
  try {
    run();
  } catch (error) {
    return error as { code?: string; message?: string };
  }
  throw new Error('expected profile_not_served');
}

describe('createProfileRuntimeSet', () => {
  it('serves only the launch profile by default, by any name that provably is it, and refuses others', async () => {
    const root = await profilesRoot({ work: {}, other: {} });
    const set = runtimeSet({ root, launch: { home: path.join(root, 'profiles', 'work') } });
    expect(set.serve).toBe('launch');
    expect(set.launch.name).toBe('work');
    expect(set.resolve()).toBe(set.launch);
    expect(notServed(() => set.resolve('  '))).toMatchObject({
      code: 'profile_not_served',
      message: expect.stringContaining('invalid profile name'),
    });
    expect(set.resolve('work')).toBe(set.launch);
    expect(set.resolve(' WORK ')).toBe(set.launch);
    expect(notServed(() => set.resolve('other'))).toMatchObject({
      code: 'profile_not_served',
      message: 'profile other is not served by this process',
    });
    expect(set.find('other')).toBeUndefined();
    expect(set.find('default')).toBeUndefined();
    expect(set.find('../work')).toBeUndefined();
    expect(set.servedProfiles()).toEqual(['work']);
    expect(set.runtimes()).toEqual([set.launch]);
  });

  it('serves any existing profile on request, each with its own .env as secrets and never the process environment', async () => {
    const root = await profilesRoot({
      alpha: { env: 'OPENAI_API_KEY=alpha-key\nONLY_ALPHA=1\n' },
      beta: { env: 'OPENAI_API_KEY=beta-key\n' },
    });
    const created: ProfileRuntime[] = [];
    const set = runtimeSet({
      root,
      serve: 'existing',
      launch: { home: root },
      runtime: { platform: 'tui' },
      onCreate: (runtime) => created.push(runtime),
    });
    expect(set.launch.name).toBe('default');
    expect(set.launch.secrets).toBeUndefined();
    const alpha = set.resolve('alpha');
    const beta = set.resolve('Beta');
    expect(set.resolve('alpha')).toBe(alpha);
    expect(set.resolve('default')).toBe(set.launch);
    expect([alpha.name, alpha.home, alpha.platform]).toEqual([
      'alpha',
      path.join(root, 'profiles', 'alpha'),
      'tui',
    ]);
    expect(alpha.secrets).toEqual({ OPENAI_API_KEY: 'alpha-key', ONLY_ALPHA: '1' });
    expect(beta.secrets).toEqual({ OPENAI_API_KEY: 'beta-key' });
    expect(beta.secret('ONLY_ALPHA')).toBeUndefined();
    expect(beta.secret('PATH')).toBeUndefined();
    expect(created).toEqual([alpha, beta]);
    expect(set.servedProfiles()).toEqual(['default', 'alpha', 'beta']);

    expect(notServed(() => set.resolve('ghost'))).toMatchObject({
      code: 'profile_not_served',
      message: 'profile not found: ghost',
    });
    expect(notServed(() => set.resolve('../etc'))).toMatchObject({
      code: 'profile_not_served',
      message: expect.stringContaining('invalid profile name'),
    });

    await set.close();
    expect(set.runtimes().every((runtime) => runtime.closed)).toBe(true);
  });

  it('multiplexes the default profile plus every unparked, allowlisted profile, and stops serving one once it is parked', async () => {
    const root = await profilesRoot({
      alpha: { env: 'OPENAI_API_KEY=alpha-key\n' },
      beta: { parked: true },
      gamma: {},
    });
    const set = runtimeSet({
      root,
      launch: { home: root, secrets: { OPENAI_API_KEY: 'launch-key' } },
      ...profileServingOf(
        resolveConfig({
          gateway: { multiplex_profiles: true, multiplex_profile_allowlist: ['Alpha', 'beta'] },
        }).gateway,
      ),
    });
    expect(set.serve).toBe('multiplex');
    expect(set.servedProfiles()).toEqual(['default', 'alpha']);
    expect(set.resolve('default')).toBe(set.launch);
    expect(set.launch.secret('OPENAI_API_KEY')).toBe('launch-key');
    const alpha = set.resolve('alpha');
    expect(alpha.secret('OPENAI_API_KEY')).toBe('alpha-key');
    expect(set.find('beta')).toBeUndefined(); // parked
    expect(set.find('gamma')).toBeUndefined(); // not allowlisted
    expect(set.find('ghost')).toBeUndefined();

    await writeFile(path.join(alpha.home, PARKED_MARKER_FILE), '');
    await new Promise((resolve) => setTimeout(resolve, SERVED_SET_TTL_MS + 100));
    expect(set.find('alpha')).toBeUndefined();
    expect(set.servedProfiles()).toEqual(['default']);
  });

  it('multiplexing from a home outside the profiles root serves it bare only, never by a name it cannot prove', async () => {
    const root = await profilesRoot({ alpha: {} });
    const elsewhere = (await tempHome('hermes-custom-')).path;
    const set = runtimeSet({ root, serve: 'multiplex', launch: { home: elsewhere } });
    expect(set.launch.name).toBe('custom');
    expect(set.resolve()).toBe(set.launch);
    expect(set.find('custom')).toBeUndefined();
    expect(set.find('alpha')?.home).toBe(path.join(root, 'profiles', 'alpha'));
    expect(set.servedProfiles()).toEqual(['custom', 'alpha', 'default']);
  });

  it('refuses a profile whose .env cannot be read, saying so without its content', async () => {
    const root = await profilesRoot({ broken: {} });
    await mkdir(path.join(root, 'profiles', 'broken', '.env'));
    const warnings: string[] = [];
    const set = runtimeSet({
      root,
      serve: 'existing',
      launch: { home: root },
      runtime: {
        logger: { info: () => {}, warn: (_details, message) => warnings.push(message) },
      },
    });
    expect(notServed(() => set.resolve('broken'))).toMatchObject({
      code: 'profile_not_served',
      message: expect.stringMatching(/^profile broken cannot be served: its \.env cannot be read/),
    });
    expect(warnings).toEqual(['profile .env cannot be read']);
  });
});
