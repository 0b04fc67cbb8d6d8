import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, testHome } from './helpers.js';

const VERSION = (
  JSON.parse(readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe('hermes basics', () => {
  it('prints its version and help, exit 0', async () => {
    const { env } = await testHome();
    const version = await runCli(['--version'], { env });
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const help = await runCli(['--help'], { env });
    expect(help.code).toBe(0);
    for (const command of [
      'chat',
      'gateway',
      'sessions',
      'peer',
      'profile',
      'tools',
      'config',
      'update',
      'doctor',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 failure');
    const sub = await runCli(['sessions', 'export', '--help'], { env });
    expect(sub.stdout).toContain('--format <format>');
  });

  it('answers a usage mistake with exit 2 and a pointer to --help, never a stack', async () => {
    const { env } = await testHome();
    for (const args of [
      ['bogus'],
      ['sessions', 'show'],
      ['sessions', 'list', '--limit', 'many'],
      ['sessions', 'export', 'x', '--format', 'pdf'],
      ['gateway', 'start', '--port', '70000'],
      ['chat', '--wait'],
    ]) {
      const result = await runCli(args, { env });
      expect(result.code, args.join(' ')).toBe(EXIT.usage);
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('answers help for an unknown command as the command itself does: the error, a suggestion, exit 2, no help dump', async () => {
    const { env } = await testHome();
    for (const [asHelp, asCommand, says] of [
      [['help', 'nosuch'], ['nosuch'], "unknown command 'nosuch'"],
      [['help', 'sesions'], ['sesions'], '(Did you mean sessions?)'],
      [['sessions', 'help', 'lst'], ['sessions', 'lst'], '(Did you mean list?)'],
      [['help', 'sessions', 'lst'], ['sessions', 'lst'], '(Did you mean list?)'],
      [['sesions', '--help'], ['sesions'], '(Did you mean sessions?)'],
    ] as const) {
      const help = await runCli(asHelp, { env });
      const command = await runCli(asCommand, { env });
      expect(help.code, asHelp.join(' ')).toBe(EXIT.usage);
      expect(help.stderr, asHelp.join(' ')).toContain(says);
      expect(help.stderr, asHelp.join(' ')).not.toContain('Usage:');
      expect(help.stdout, asHelp.join(' ')).toBe('');
      expect(help.stderr, asHelp.join(' ')).toBe(command.stderr);
    }
    const json = await runCli(['help', 'nosuch', '--json'], { env });
    expect(json.code).toBe(EXIT.usage);
    expect(parseJson<{ error: { code: string } }>(json).error.code).toBe('usage');
    // Help for a command that exists still works at every depth, on stdout with exit 0.
    for (const [args, usage] of [
      [['help'], 'Usage: hermes [options] [command]'],
      [['help', 'sessions'], 'Usage: hermes sessions [options] [command]'],
      [['help', 'sessions', 'list'], 'Usage: hermes sessions list [options]'],
      [['sessions', 'help', 'list'], 'Usage: hermes sessions list [options]'],
      [['--debug', 'help', 'peer', 'dm'], 'Usage: hermes peer dm [options] <target> <message...>'],
    ] as const) {
      const help = await runCli(args, { env });
      expect(help.code, args.join(' ')).toBe(EXIT.ok);
      expect(help.stdout, args.join(' ')).toContain(usage);
    }
  });

  it('shows help and exits 2 when run bare without a terminal', async () => {
    const { env } = await testHome();
    const result = await runCli([], { env });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain('Usage: hermes');
  });

  it('refuses a bad profile name with 2 and an unknown profile with 1, saying what to do', async () => {
    const { env } = await testHome();
    const bad = await runCli(['-p', '../etc', 'sessions', 'list'], { env });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain('invalid profile name');
    const unknown = await runCli(['--profile=ghost', 'sessions', 'list'], { env });
    expect(unknown.code).toBe(EXIT.failure);
    expect(unknown.stderr).toContain('hermes profile create ghost');
    const missing = await runCli(['sessions', 'list', '-p'], { env });
    expect(missing.code).toBe(EXIT.usage);
  });

  it('prints plain text to a pipe and colour only when forced', async () => {
    const { env } = await testHome();
    const plain = await runCli(['profile', 'list'], { env });
    expect(plain.stdout).not.toContain('\u001b[');
    const { NO_COLOR: _unset, ...withoutNoColor } = env;
    const forced = await runCli(['profile', 'list'], {
      env: { ...withoutNoColor, FORCE_COLOR: '1' },
    });
    expect(forced.stdout).toContain('\u001b[1m');
    const noColorWins = await runCli(['profile', 'list', '--no-color'], {
      env: { ...withoutNoColor, FORCE_COLOR: '1' },
    });
    expect(noColorWins.stdout).not.toContain('\u001b[');
  });

  it('prints an error as JSON on stdout under --json, with the exit code', async () => {
    const { env } = await testHome();
    const result = await runCli(['sessions', 'show', 'nope', '--json'], { env });
    expect(result.code).toBe(EXIT.failure);
    expect(parseJson(result)).toEqual({
      error: {
        code: 'session_not_found',
        message: 'no session matches "nope"',
        hint: expect.stringContaining('hermes sessions list'),
      },
    });
  });

  it('prints usage and profile errors as JSON too under --json, and nothing on stdout without it', async () => {
    const { env } = await testHome();
    interface JsonError {
      error: { code: string; message: string; hint?: string };
    }
    const cases: { args: string[]; code: number; errorCode: string; says: string }[] = [
      {
        args: ['sessions', 'list', '--limit', '0', '--json'],
        code: EXIT.usage,
        errorCode: 'usage',
        says: '--limit must be a whole number',
      },
      { args: ['bogus', '--json'], code: EXIT.usage, errorCode: 'usage', says: 'bogus' },
      {
        args: ['-p', 'nope', 'gateway', 'status', '--json'],
        code: EXIT.failure,
        errorCode: 'profile_not_found',
        says: 'hermes profile create nope',
      },
      {
        args: ['-p', '../etc', 'sessions', 'list', '--json'],
        code: EXIT.usage,
        errorCode: 'invalid_profile_name',
        says: 'invalid profile name',
      },
      {
        args: ['sessions', 'list', '--json', '-p'],
        code: EXIT.usage,
        errorCode: 'usage',
        says: 'needs a profile name',
      },
    ];
    for (const { args, code, errorCode, says } of cases) {
      const result = await runCli(args, { env });
      expect(result.code, args.join(' ')).toBe(code);
      const printed = parseJson<JsonError>(result);
      expect(printed.error.code, args.join(' ')).toBe(errorCode);
      expect(`${printed.error.message} ${printed.error.hint ?? ''}`, args.join(' ')).toContain(
        says,
      );
      expect(result.stderr, args.join(' ')).toContain(says);
      const plain = await runCli(
        args.filter((arg) => arg !== '--json'),
        { env },
      );
      expect(plain.stdout, args.join(' ')).toBe('');
    }
    // A --json after `--`, or as the text of -q, is not the option.
    const quoted = await runCli(['-p', 'nope', 'chat', '-q', '--json'], { env });
    expect(quoted.code).toBe(EXIT.failure);
    expect(quoted.stdout).toBe('');
  });

  it('shows a stack trace for an error only with --debug', async () => {
    const { env, home } = await testHome();
    // A config.yaml that is a folder cannot be read: an error from @hermes/config.
    const { mkdir } = await import('node:fs/promises');
    await mkdir(path.join(home, 'config.yaml'));
    const quiet = await runCli(['config', 'get', 'model'], { env });
    expect(quiet.code).toBe(EXIT.failure);
    expect(quiet.stderr).not.toMatch(/\n\s+at /);
    const loud = await runCli(['--debug', 'config', 'get', 'model'], { env });
    expect(loud.code).toBe(EXIT.failure);
    expect(loud.stderr).toMatch(/\n\s+at /);
  });
});
