import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HermesConfigError } from './errors.js';
import { withHome } from './home.js';
import {
  createProfile,
  getActiveProfileName,
  getProfileDir,
  listProfiles,
  PROFILE_SUBDIRECTORIES,
  profileMatchesHome,
  validateProfileName,
} from './profiles.js';

let root: string;

beforeEach(async () => {
  root = (await tempHome()).path;
  vi.stubEnv('HERMES_HOME', root);
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return HermesConfigError.isInstance(error) ? error.code : 'not-a-config-error';
  }
  return undefined;
}

describe('profile names', () => {
  it.each(['../x', 'a/b', '', '.', '..', '-lead', 'x'.repeat(65), 'spa ce', 'semi;colon'])(
    'rejects %j with a clear error',
    (name) => {
      expect(errorCode(() => validateProfileName(name))).toBe('invalid_profile_name');
      expect(() => validateProfileName(name)).toThrow(/invalid profile name .*a-z, 0-9/);
    },
  );

  it('normalises case and whitespace', () => {
    expect(validateProfileName('  Work_1 ')).toBe('work_1');
    expect(validateProfileName('DEFAULT')).toBe('default');
  });

  it('never builds a path outside the profiles folder', () => {
    expect(() => getProfileDir('../../etc')).toThrow(HermesConfigError);
    expect(getProfileDir('work')).toBe(path.join(root, 'profiles', 'work'));
    expect(getProfileDir('default')).toBe(root);
  });
});

describe('createProfile and listProfiles', () => {
  it('seeds the standard sub-folders', () => {
    const home = createProfile('work');
    for (const folder of PROFILE_SUBDIRECTORIES) {
      expect(existsSync(path.join(home, folder))).toBe(true);
    }
  });

  it('refuses reserved names and existing profiles', () => {
    expect(errorCode(() => createProfile('sudo'))).toBe('reserved_profile_name');
    createProfile('work');
    expect(errorCode(() => createProfile('Work'))).toBe('profile_exists');
  });

  it('lists and creates from the default root even when the active home is a profile', () => {
    createProfile('alpha');
    vi.stubEnv('HERMES_HOME', path.join(root, 'profiles', 'alpha'));
    createProfile('beta');
    expect(existsSync(path.join(root, 'profiles', 'beta'))).toBe(true);
    expect(listProfiles().map((profile) => profile.name)).toEqual(['default', 'alpha', 'beta']);
  });

  it('lists and creates from the default root inside a per-task profile override', () => {
    const alpha = createProfile('alpha');
    withHome(alpha, () => {
      const beta = createProfile('beta');
      expect(beta).toBe(path.join(root, 'profiles', 'beta'));
      expect(listProfiles().map((profile) => profile.name)).toEqual(['default', 'alpha', 'beta']);
    });
    expect(existsSync(path.join(alpha, 'profiles'))).toBe(false);
  });

  it('skips entries that are not valid profile folders and reports parked ones', () => {
    createProfile('work');
    createProfile('parked');
    writeFileSync(path.join(root, 'profiles', 'parked', 'gateway.parked'), '');
    writeFileSync(path.join(root, 'profiles', 'notes.txt'), 'x');
    mkdirSync(path.join(root, 'profiles', 'Bad Name'));
    const profiles = listProfiles();
    expect(profiles.map((profile) => profile.name)).toEqual(['default', 'parked', 'work']);
    expect(profiles.find((profile) => profile.name === 'parked')?.parked).toBe(true);
  });

  it('lists only the default profile when no profiles folder exists', () => {
    expect(listProfiles()).toEqual([
      { name: 'default', home: root, isDefault: true, parked: false },
    ]);
  });
});

describe('active profile and identity', () => {
  it('names the root "default", a profile home by its name, anything else "custom"', () => {
    const work = createProfile('work');
    expect(getActiveProfileName(root)).toBe('default');
    expect(getActiveProfileName(work)).toBe('work');
    expect(getActiveProfileName('/somewhere/else')).toBe('custom');
    expect(withHome(work, () => getActiveProfileName())).toBe('work');
  });

  it('matches a profile to its own home only', () => {
    const work = createProfile('work');
    expect(profileMatchesHome('work', work)).toBe(true);
    expect(profileMatchesHome('default', root)).toBe(true);
    expect(profileMatchesHome('work', root)).toBe(false);
    expect(profileMatchesHome('default', work)).toBe(false);
  });

  it('sees through symlinks to the same home', () => {
    const work = createProfile('work');
    const link = path.join(root, 'work-link');
    symlinkSync(work, link);
    expect(profileMatchesHome('work', link)).toBe(true);
  });

  it('fails closed when identity cannot be proven', () => {
    expect(profileMatchesHome('../x', root)).toBe(false);
    expect(profileMatchesHome('', root)).toBe(false);
    expect(profileMatchesHome(undefined as unknown as string, root)).toBe(false);
  });
});
