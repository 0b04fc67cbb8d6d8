import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { getActiveProfileName } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { profileLabelForHome } from './profile-label.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('profileLabelForHome', () => {
  it('agrees with getActiveProfileName for the root, a profile, a symlinked profile and a custom home', async () => {
    const root = await tempHome();
    const work = path.join(root.path, 'profiles', 'work');
    await mkdir(work, { recursive: true });
    const link = path.join(root.path, 'work-link');
    await symlink(work, link);
    const custom = await tempHome();
    vi.stubEnv('HERMES_HOME', root.path);
    const cases = [root.path, work, link, custom.path, path.join(root.path, 'profiles', 'Bad!')];
    for (const home of cases) {
      const expected = getActiveProfileName(home);
      expect(await profileLabelForHome(home)).toBe(expected === 'custom' ? null : expected);
    }
    expect(await profileLabelForHome(link)).toBe('work');
  });
});
