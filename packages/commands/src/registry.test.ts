import { describe, expect, it } from 'vitest';
import { isGatewayAvailable } from './availability.js';
import { COMMAND_CATEGORIES, VALID_BUSY_POLICIES } from './command-def.js';
import { COMMAND_REGISTRY } from './registry.js';
import { resolveCommand } from './resolve-command.js';

const allNames = COMMAND_REGISTRY.flatMap((command) => [command.name, ...command.aliases]);

describe('the command registry', () => {
  it('has no duplicate name or alias anywhere', () => {
    const duplicates = allNames.filter((name, index) => allNames.indexOf(name) !== index);
    expect(duplicates).toEqual([]);
  });

  it('resolves every command by its name and every alias, in any case, with or without the slash', () => {
    for (const command of COMMAND_REGISTRY)
      for (const name of [command.name, ...command.aliases])
        for (const typed of [name, `/${name}`, name.toUpperCase(), ` /${name} `])
          expect(resolveCommand(typed), typed).toBe(command);
  });

  it('uses lower-case names a person can type on every platform', () => {
    for (const name of allNames) expect(name).toMatch(/^[a-z0-9][a-z0-9-]{0,31}$/);
  });

  it('freezes every entry and its lists', () => {
    expect(Object.isFrozen(COMMAND_REGISTRY)).toBe(true);
    for (const command of COMMAND_REGISTRY) {
      expect(Object.isFrozen(command), command.name).toBe(true);
      expect(Object.isFrozen(command.aliases), command.name).toBe(true);
      expect(Object.isFrozen(command.subcommands), command.name).toBe(true);
    }
  });

  it('gives every command a readable description, a known category and a valid busy policy', () => {
    for (const command of COMMAND_REGISTRY) {
      expect(command.description.length, command.name).toBeGreaterThanOrEqual(20);
      expect(command.description.length, command.name).toBeLessThanOrEqual(100);
      expect(command.description, command.name).not.toMatch(/\.$/);
      expect(COMMAND_CATEGORIES).toContain(command.category);
      expect(VALID_BUSY_POLICIES).toContain(command.busyPolicy);
    }
  });

  it('keeps the flags consistent: one surface restriction at most, gates only on terminal commands, busy handlers only with dispatch', () => {
    for (const command of COMMAND_REGISTRY) {
      expect(command.cliOnly && command.gatewayOnly, command.name).toBe(false);
      if (command.gatewayConfigGate !== null) expect(command.cliOnly, command.name).toBe(true);
      if (command.busyHandler !== null) expect(command.busyPolicy, command.name).toBe('dispatch');
    }
  });

  it('has every command the apps need', () => {
    const needed = [
      ...[
        'help',
        'new',
        'reset',
        'review',
        'stop',
        'status',
        'history',
        'sessions',
        'title',
        'model',
      ],
      ...[
        'tools',
        'compress',
        'compact',
        'usage',
        'profile',
        'version',
        'agents',
        'clear',
        'retry',
      ],
      ...['undo', 'queue', 'q', 'steer', 'prompt', 'context', 'rename', 'reasoning', 'effort'],
      ...['verbose', 'skills', 'whoami', 'quit', 'exit', 'resume', 'models'],
    ];
    expect(needed.filter((name) => resolveCommand(name) === null)).toEqual([]);
    expect(resolveCommand('reset')?.name).toBe('new');
    expect(resolveCommand('compact')?.name).toBe('compress');
    expect(resolveCommand('exit')?.name).toBe('quit');
    expect(resolveCommand('quit')?.cliOnly).toBe(true);
  });

  it('defines /review exactly as the reference (§4.2) and offers it on chat platforms (§5.7)', () => {
    const review = resolveCommand('review');
    expect(review).toMatchObject({
      name: 'review',
      description:
        'Spawn an independent subagent to review the work just discussed (PR, code, docs)',
      category: 'Session',
      argsHint: '[review instructions]',
      aliases: [],
      subcommands: [],
      cliOnly: false,
      gatewayOnly: false,
      busyPolicy: 'reject',
      busyHandler: null,
      execute: null,
      argumentMode: 'text',
    });
    expect(review !== null && isGatewayAvailable(review)).toBe(true);
  });

  it('infers the argument modes the desktop composer needs', () => {
    expect(resolveCommand('reasoning')?.argumentMode).toBe('options');
    expect(resolveCommand('prompt')?.argumentMode).toBe('mixed');
    expect(resolveCommand('queue')?.argumentMode).toBe('text');
    expect(resolveCommand('status')?.argumentMode).toBeNull();
  });
});
