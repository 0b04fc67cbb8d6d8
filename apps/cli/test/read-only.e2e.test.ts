import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, testHome } from './helpers.js';

/** Commands that read what a home holds: with a home that is not there they have nothing to read. */
const READERS: readonly (readonly string[])[] = [
  ['sessions', 'list'],
  ['sessions', 'show', 'x'],
  ['sessions', 'search', 'trains'],
  ['sessions', 'export', 'x'],
  ['sessions', 'rename', 'x', 'New title'],
  ['sessions', 'archive', 'x'],
  ['sessions', 'delete', 'x', '--yes'],
  ['config', 'get'],
  ['config', 'get', 'model.default'],
  ['config', 'get', 'OPENAI_API_KEY'],
  ['peer', 'list'],
  ['peer', 'remove', 'bob'],
  ['peer', 'dm', 'bob', 'hi'],
  ['tools', 'list'],
];

/** Commands that say where the home is or how it is: they answer for a missing home too. */
const DESCRIBERS: readonly { args: readonly string[]; code: number }[] = [
  { args: ['config', 'path'], code: EXIT.ok },
  { args: ['profile', 'show'], code: EXIT.ok },
  { args: ['profile', 'list'], code: EXIT.ok },
  { args: ['doctor', '--offline'], code: EXIT.ok },
  { args: ['gateway', 'status'], code: EXIT.failure },
  { args: ['update', '--plan'], code: EXIT.ok },
];

describe('commands that only read', () => {
  it('refuse a HERMES_HOME that does not exist (exit 1, naming it) and create nothing', async () => {
    const { env, userHome } = await testHome();
    const typo = path.join(userHome, 'hermse');
    const typoEnv = { ...env, HERMES_HOME: typo };
    for (const args of READERS) {
      const result = await runCli(args, { env: typoEnv });
      expect(result.code, args.join(' ')).toBe(EXIT.failure);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr, args.join(' ')).toContain(`no Hermes home at ${typo}`);
      expect(result.stderr, args.join(' ')).toContain('HERMES_HOME');
      expect(existsSync(typo), args.join(' ')).toBe(false);
    }
    const json = await runCli(['sessions', 'list', '--json'], { env: typoEnv });
    expect(json.code).toBe(EXIT.failure);
    expect(parseJson<{ error: { code: string } }>(json).error.code).toBe('home_not_found');
    for (const { args, code } of DESCRIBERS) {
      const result = await runCli(args, { env: typoEnv });
      expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(code);
      expect(existsSync(typo), args.join(' ')).toBe(false);
    }
    expect((await runCli(['profile', 'show'], { env: typoEnv })).stdout).toContain(
      `${typo} (does not exist yet)`,
    );
    // A command that writes creates the home it was given.
    const set = await runCli(['config', 'set', 'model.default', 'gpt-test'], { env: typoEnv });
    expect(set.code).toBe(EXIT.ok);
    expect(existsSync(path.join(typo, 'config.yaml'))).toBe(true);
  });

  it('answer for the default home before its first use as for an empty one, creating nothing', async () => {
    const { env, userHome } = await testHome();
    const { HERMES_HOME: _named, ...defaultEnv } = env;
    const root = path.join(userHome, '.hermes');
    const list = await runCli(['sessions', 'list'], { env: defaultEnv });
    expect(list.code).toBe(EXIT.ok);
    expect(list.stderr).toContain('No sessions yet. Start one with: hermes chat');
    expect(parseJson(await runCli(['sessions', 'list', '--json'], { env: defaultEnv }))).toEqual({
      sessions: [],
      total: 0,
      has_more: false,
    });
    const search = await runCli(['sessions', 'search', 'trains', '--json'], { env: defaultEnv });
    expect(search.code).toBe(EXIT.ok);
    expect(parseJson(search)).toEqual({ query: 'trains', mode: 'fts', hits: [] });
    for (const args of [
      ['sessions', 'show', 'x'],
      ['sessions', 'delete', 'x', '--yes'],
    ]) {
      const result = await runCli(args, { env: defaultEnv });
      expect(result.code, args.join(' ')).toBe(EXIT.failure);
      expect(result.stderr, args.join(' ')).toContain('no session matches "x"');
    }
    for (const args of READERS) await runCli(args, { env: defaultEnv });
    expect(existsSync(root)).toBe(false);
  });

  it('chat --resume and --continue find nothing to continue in a home that is not there, and create nothing', async () => {
    const { env, home, userHome } = await testHome();
    const typo = path.join(userHome, 'hermse');
    for (const args of [
      ['chat', '--continue', '-q', 'hi'],
      ['chat', '--resume', 'Trip', '-q', 'hi'],
    ]) {
      const result = await runCli(args, { env: { ...env, HERMES_HOME: typo } });
      expect(result.code, args.join(' ')).toBe(EXIT.failure);
      expect(result.stderr, args.join(' ')).toContain(`no Hermes home at ${typo}`);
      expect(existsSync(typo), args.join(' ')).toBe(false);
    }
    const resume = await runCli(['chat', '--resume', 'Trip', '-q', 'hi'], { env });
    expect(resume.code).toBe(EXIT.failure);
    expect(resume.stderr).toContain('no session matches "Trip"');
    const latest = await runCli(['chat', '--continue', '-q', 'hi'], { env });
    expect(latest.code).toBe(EXIT.failure);
    expect(latest.stderr).toContain('there is no terminal conversation to continue yet');
    expect(readdirSync(home)).toEqual([]);
  });

  it('never create state.db in a home that has none yet', async () => {
    const { env, home } = await testHome();
    expect((await runCli(['config', 'set', 'model.default', 'gpt-test'], { env })).code).toBe(
      EXIT.ok,
    );
    const before = readdirSync(home).sort();
    const list = await runCli(['sessions', 'list'], { env });
    expect(list.code).toBe(EXIT.ok);
    expect(list.stderr).toContain('No sessions yet');
    const blank = await runCli(['sessions', 'show', '  '], { env });
    expect(blank.code).toBe(EXIT.usage);
    for (const args of READERS) await runCli(args, { env });
    expect(readdirSync(home).sort()).toEqual(before);
    expect(before).not.toContain('state.db');
  });
});
