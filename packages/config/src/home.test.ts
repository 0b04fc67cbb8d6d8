import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  expandUserHome,
  getDefaultHermesRoot,
  getHermesHome,
  getHomeOverride,
  getPlatformDefaultHome,
  getProcessHermesHome,
  getSecret,
  resolveHomePath,
  withHome,
  withHomeScope,
} from './home.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('home resolution', () => {
  it('uses ~/.hermes when nothing else is set', async () => {
    const fakeUserHome = await tempHome();
    vi.stubEnv('HOME', fakeUserHome.path);
    vi.stubEnv('HERMES_HOME', '');
    expect(getHermesHome()).toBe(path.join(fakeUserHome.path, '.hermes'));
  });

  it('uses %LOCALAPPDATA%\\hermes on Windows', () => {
    expect(
      getPlatformDefaultHome('win32', { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' }),
    ).toBe('C:\\Users\\ada\\AppData\\Local\\hermes');
  });

  it('prefers HERMES_HOME over the platform default', () => {
    vi.stubEnv('HERMES_HOME', '/srv/hermes');
    expect(getHermesHome()).toBe('/srv/hermes');
  });

  it('prefers the per-task override over HERMES_HOME, and the process home ignores it', async () => {
    vi.stubEnv('HERMES_HOME', '/srv/hermes');
    await withHome('/srv/other', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(getHermesHome()).toBe('/srv/other');
      expect(getProcessHermesHome()).toBe('/srv/hermes');
    });
    expect(getHomeOverride()).toBeUndefined();
    expect(getHermesHome()).toBe('/srv/hermes');
  });

  it('keeps concurrent tasks in their own homes across awaits', async () => {
    const seen = await Promise.all(
      ['/h/a', '/h/b', '/h/c'].map((home, index) =>
        withHome(home, async () => {
          await new Promise((resolve) => setTimeout(resolve, 10 * (3 - index)));
          return getHermesHome();
        }),
      ),
    );
    expect(seen).toEqual(['/h/a', '/h/b', '/h/c']);
  });
});

describe('~ in a home path', () => {
  it('expands a leading ~ in HERMES_HOME to the user’s folder, not a folder named ~', async () => {
    const fakeUserHome = await tempHome();
    vi.stubEnv('HOME', fakeUserHome.path);
    vi.stubEnv('HERMES_HOME', '~/hermes-dev');
    expect(getProcessHermesHome()).toBe(path.join(fakeUserHome.path, 'hermes-dev'));
    expect(getHermesHome()).toBe(path.join(fakeUserHome.path, 'hermes-dev'));
    vi.stubEnv('HERMES_HOME', '~');
    expect(getProcessHermesHome()).toBe(fakeUserHome.path);
    expect(getProcessHermesHome({ HERMES_HOME: '~/x', HOME: '/home/ada' })).toBe('/home/ada/x');
  });

  it('anchors the profile root of HERMES_HOME=~/.hermes/profiles/<name> at ~/.hermes', async () => {
    const fakeUserHome = await tempHome();
    vi.stubEnv('HOME', fakeUserHome.path);
    vi.stubEnv('HERMES_HOME', '~/.hermes/profiles/work');
    expect(getDefaultHermesRoot()).toBe(path.join(fakeUserHome.path, '.hermes'));
  });

  it('applies the same rule to per-task homes', async () => {
    const fakeUserHome = await tempHome();
    vi.stubEnv('HOME', fakeUserHome.path);
    withHome('~/task-home', () => {
      expect(getHermesHome()).toBe(path.join(fakeUserHome.path, 'task-home'));
    });
  });

  it('expands only ~ and ~/…, never ~user or a ~ further in', () => {
    const env = { HOME: '/home/ada' };
    expect(expandUserHome('~', env, 'linux')).toBe('/home/ada');
    expect(expandUserHome('~/a/b', env, 'linux')).toBe('/home/ada/a/b');
    expect(expandUserHome('~bob/a', env, 'linux')).toBe('~bob/a');
    expect(expandUserHome('/srv/~/a', env, 'linux')).toBe('/srv/~/a');
    expect(expandUserHome('~\\a', env, 'linux')).toBe('~\\a');
    expect(resolveHomePath('relative-home', env)).toBe(path.resolve('relative-home'));
  });

  it('uses USERPROFILE and either separator on Windows', () => {
    const env = { USERPROFILE: 'C:\\Users\\ada' };
    expect(expandUserHome('~\\hermes', env, 'win32')).toBe('C:\\Users\\ada\\hermes');
    expect(expandUserHome('~/hermes', env, 'win32')).toBe('C:\\Users\\ada\\hermes');
  });
});

describe('getDefaultHermesRoot', () => {
  it('anchors <root>/profiles/<name> at <root>', () => {
    vi.stubEnv('HERMES_HOME', '/srv/hermes/profiles/work');
    expect(getDefaultHermesRoot()).toBe('/srv/hermes');
  });

  it('treats any other custom home as its own root', () => {
    vi.stubEnv('HERMES_HOME', '/srv/custom-home');
    expect(getDefaultHermesRoot()).toBe('/srv/custom-home');
  });

  it('stays at the platform default for homes inside it and ignores the per-task override', async () => {
    const fakeUserHome = await tempHome();
    vi.stubEnv('HOME', fakeUserHome.path);
    const native = path.join(fakeUserHome.path, '.hermes');
    vi.stubEnv('HERMES_HOME', path.join(native, 'profiles', 'x'));
    expect(getDefaultHermesRoot()).toBe(native);
    withHome('/elsewhere', () => expect(getDefaultHermesRoot()).toBe(native));
  });
});

describe('getSecret', () => {
  it('reads the process environment outside a secret scope', () => {
    vi.stubEnv('HERMES_TEST_SECRET', 'from-env');
    expect(getSecret('HERMES_TEST_SECRET')).toBe('from-env');
  });

  it('never falls back to the process environment inside a secret scope', () => {
    vi.stubEnv('HERMES_TEST_SECRET', 'owner-secret');
    withHomeScope({ home: '/h/p', secrets: { OTHER: 'x' } }, () => {
      expect(getSecret('HERMES_TEST_SECRET')).toBeUndefined();
      expect(getSecret('OTHER')).toBe('x');
      expect(getHermesHome()).toBe('/h/p');
    });
  });
});
