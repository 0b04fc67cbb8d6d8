import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, testHome } from './helpers.js';

interface ProfileRow {
  name: string;
  home: string;
  sticky: boolean;
  current: boolean;
}

describe('hermes profile', () => {
  it('creates, lists, uses (sticky for later commands), shows and deletes profiles', async () => {
    const { env, home } = await testHome();
    const created = await runCli(['profile', 'create', 'Work', '--json'], { env });
    expect(created.code).toBe(0);
    expect(parseJson(created)).toEqual({
      profile: 'work',
      home: path.join(home, 'profiles', 'work'),
      sticky: false,
    });

    const listed = parseJson<{ profiles: ProfileRow[] }>(
      await runCli(['profile', 'list', '--json'], { env }),
    );
    expect(listed.profiles.map((row) => [row.name, row.sticky, row.current])).toEqual([
      ['default', true, true],
      ['work', false, false],
    ]);

    expect((await runCli(['profile', 'use', 'work'], { env })).code).toBe(0);
    expect(readFileSync(path.join(home, 'active_profile'), 'utf8')).toBe('work\n');
    // Every command now runs in the work profile: a command that writes writes there (a command
    // that only reads creates nothing), and one that reads reads there.
    expect((await runCli(['config', 'set', 'model.default', 'work-model'], { env })).code).toBe(0);
    expect(existsSync(path.join(home, 'profiles', 'work', 'config.yaml'))).toBe(true);
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(false);
    for (const [folder, title] of [
      [path.join(home, 'profiles', 'work'), 'In work'],
      [home, 'In default'],
    ] as const) {
      const store = await openSessionStore({ path: path.join(folder, 'state.db') });
      await store.createSession({ source: 'cli', title });
      await store.close();
    }
    const inWork = parseJson<{ sessions: { title: string }[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(inWork.sessions.map((session) => session.title)).toEqual(['In work']);
    const shown = parseJson<{ profile: string; sticky: boolean }>(
      await runCli(['profile', 'show', '--json'], { env }),
    );
    expect(shown).toMatchObject({ profile: 'work', sticky: true });
    // -p still picks another profile for one command.
    expect(
      parseJson(await runCli(['-p', 'default', 'profile', 'show', '--json'], { env })),
    ).toMatchObject({
      profile: 'default',
    });

    const refused = await runCli(['profile', 'delete', 'work'], { env });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('--yes');
    const deleted = await runCli(['profile', 'delete', 'work', '--yes'], { env });
    expect(deleted.code).toBe(0);
    expect(existsSync(path.join(home, 'profiles', 'work'))).toBe(false);
    // The sticky default went with it.
    expect(existsSync(path.join(home, 'active_profile'))).toBe(false);
  });

  it('refuses reserved, duplicate, invalid and unknown names with what to do', async () => {
    const { env } = await testHome();
    const reserved = await runCli(['profile', 'create', 'sudo'], { env });
    expect(reserved.code).toBe(EXIT.failure);
    expect(reserved.stderr).toContain('reserved');
    expect((await runCli(['profile', 'create', 'a'], { env })).code).toBe(0);
    expect((await runCli(['profile', 'create', 'a'], { env })).stderr).toContain('already exists');
    expect((await runCli(['profile', 'create', 'no/slash'], { env })).code).toBe(EXIT.usage);
    const unknown = await runCli(['profile', 'use', 'ghost'], { env });
    expect(unknown.code).toBe(EXIT.failure);
    expect(unknown.stderr).toContain('hermes profile create ghost');
    expect((await runCli(['profile', 'delete', 'default', '--yes'], { env })).code).toBe(
      EXIT.failure,
    );
  });
});
