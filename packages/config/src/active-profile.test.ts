import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ACTIVE_PROFILE_FILE,
  deleteProfile,
  readActiveProfile,
  selectProfileHome,
  setActiveProfile,
} from './active-profile.js';
import { HermesConfigError } from './errors.js';
import { createProfile } from './profiles.js';

let root: string;

beforeEach(async () => {
  root = (await tempHome()).path;
  vi.stubEnv('HERMES_HOME', root);
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return HermesConfigError.isInstance(error) ? error.code : 'not-a-config-error';
  }
  return undefined;
}

describe('the sticky default profile', () => {
  it('is written by setActiveProfile and read back normalised', () => {
    createProfile('work');
    expect(setActiveProfile(' Work ')).toBe('work');
    expect(readFileSync(path.join(root, ACTIVE_PROFILE_FILE), 'utf8')).toBe('work\n');
    expect(readActiveProfile()).toBe('work');
  });

  it('refuses a profile that does not exist and writes nothing', () => {
    expect(codeOf(() => setActiveProfile('ghost'))).toBe('profile_not_found');
    expect(existsSync(path.join(root, ACTIVE_PROFILE_FILE))).toBe(false);
  });

  it('goes back to the root with "default" by removing the file', () => {
    createProfile('work');
    setActiveProfile('work');
    setActiveProfile('default');
    expect(existsSync(path.join(root, ACTIVE_PROFILE_FILE))).toBe(false);
    expect(readActiveProfile()).toBeUndefined();
  });

  it('ignores a hand-edited file that names a path instead of a profile', () => {
    writeFileSync(path.join(root, ACTIVE_PROFILE_FILE), '../../etc\n');
    expect(readActiveProfile()).toBeUndefined();
  });
});

describe('selectProfileHome', () => {
  it('takes an explicit profile over HERMES_HOME and the sticky file', () => {
    const work = createProfile('work');
    createProfile('play');
    setActiveProfile('play');
    expect(selectProfileHome({ profile: 'WORK' })).toEqual({
      home: work,
      profile: 'work',
      source: 'flag',
    });
    expect(selectProfileHome({ profile: 'default' }).home).toBe(root);
  });

  it('refuses an invalid or missing explicit profile with distinct codes', () => {
    expect(codeOf(() => selectProfileHome({ profile: '../x' }))).toBe('invalid_profile_name');
    expect(codeOf(() => selectProfileHome({ profile: 'ghost' }))).toBe('profile_not_found');
    expect(() => selectProfileHome({ profile: 'ghost' })).toThrow(/hermes profile create ghost/);
  });

  it('uses the sticky profile when HERMES_HOME is the root', () => {
    const work = createProfile('work');
    setActiveProfile('work');
    expect(selectProfileHome()).toEqual({ home: work, profile: 'work', source: 'sticky' });
  });

  it('leaves an explicit HERMES_HOME below the root alone', () => {
    const work = createProfile('work');
    createProfile('play');
    setActiveProfile('play');
    vi.stubEnv('HERMES_HOME', work);
    expect(selectProfileHome()).toEqual({ home: work, profile: 'work', source: 'env' });
  });

  it('falls back to the root with a warning when the sticky profile was removed', () => {
    writeFileSync(path.join(root, ACTIVE_PROFILE_FILE), 'gone\n');
    const selection = selectProfileHome();
    expect(selection.home).toBe(root);
    expect(selection.source).toBe('default');
    expect(selection.warning).toMatch(/"gone" .* no longer exists/);
  });
});

describe('deleteProfile', () => {
  it('removes the home and clears the sticky default that named it', () => {
    const work = createProfile('work');
    mkdirSync(path.join(work, 'logs', 'deep'), { recursive: true });
    setActiveProfile('work');
    expect(deleteProfile('work')).toBe(work);
    expect(existsSync(work)).toBe(false);
    expect(readActiveProfile()).toBeUndefined();
  });

  it('refuses the default profile and unknown profiles', () => {
    expect(codeOf(() => deleteProfile('default'))).toBe('profile_not_deletable');
    expect(codeOf(() => deleteProfile('ghost'))).toBe('profile_not_found');
    expect(existsSync(root)).toBe(true);
  });
});
