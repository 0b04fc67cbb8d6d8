import { describe, expect, it } from 'vitest';
import {
  availableCommands,
  type CommandSurface,
  GATEWAY_KNOWN_COMMANDS,
  isCommandAvailable,
  isGatewayAvailable,
  isGatewayKnownCommand,
  resolveConfigGates,
} from './availability.js';
import { CommandsError } from './commands-error.js';
import { COMMAND_REGISTRY } from './registry.js';
import { resolveCommand } from './resolve-command.js';
import { UnknownCommandSurfaceError } from './unknown-command-surface-error.js';

const names = (surface: CommandSurface, gates?: ReadonlySet<string>) =>
  availableCommands(surface, { gates }).map((command) => command.name);

describe('availableCommands', () => {
  it('offers terminals and desktop everything but gateway-only commands', () => {
    for (const surface of ['cli', 'desktop'] as const) {
      expect(names(surface)).toContain('quit');
      expect(names(surface)).not.toContain('whoami');
      expect(names(surface)).toHaveLength(
        COMMAND_REGISTRY.filter((command) => !command.gatewayOnly).length,
      );
    }
  });

  it('offers chat platforms everything but terminal-only commands whose gate is closed', () => {
    expect(names('gateway')).toContain('whoami');
    expect(names('gateway')).toContain('review');
    for (const name of ['quit', 'clear', 'verbose', 'skills'])
      expect(names('gateway')).not.toContain(name);
    expect(names('gateway', new Set(['verbose']))).toContain('verbose');
    expect(names('gateway', new Set(['quit']))).not.toContain('quit');
  });

  it('refuses any other surface with the reference text', () => {
    expect(() => availableCommands('tui' as CommandSurface)).toThrow(
      'Unknown command surface: tui',
    );
    try {
      availableCommands('web' as CommandSurface);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UnknownCommandSurfaceError);
      expect(CommandsError.isInstance(error) && error.code).toBe('unknown_command_surface');
      expect((error as UnknownCommandSurfaceError).surface).toBe('web');
    }
    const review = resolveCommand('review');
    if (review === null) throw new Error('review missing');
    expect(() => isCommandAvailable(review, 'slack' as CommandSurface)).toThrow(
      'Unknown command surface: slack',
    );
  });
});

describe('config gates', () => {
  it('open a gate when its dot-path holds a true value', () => {
    expect([...resolveConfigGates({ display: { tool_progress_command: true } })]).toEqual([
      'verbose',
    ]);
    expect([...resolveConfigGates({ skills: { write_approval: 'yes' } })]).toEqual(['skills']);
    expect([...resolveConfigGates({ skills: { write_approval: ['ops'] } })]).toEqual(['skills']);
  });

  it('open a gate for any non-zero number and any non-empty mapping, as config truthiness does', () => {
    for (const value of [1, -1, 0.5, Number.POSITIVE_INFINITY, { channels: ['ops'] }, { a: null }])
      expect(
        [...resolveConfigGates({ display: { tool_progress_command: value } })],
        JSON.stringify(value),
      ).toEqual(['verbose']);
  });

  it('keep a gate closed for missing, false-like and empty values, and for junk config', () => {
    for (const value of [
      undefined,
      null,
      false,
      0,
      Number.NaN,
      '',
      'false',
      'OFF',
      ' no ',
      '0',
      [],
      {},
    ])
      expect(
        resolveConfigGates({ display: { tool_progress_command: value } }).size,
        String(value),
      ).toBe(0);
    for (const config of [undefined, null, 'text', 42, [], { display: 'on' }])
      expect(resolveConfigGates(config).size).toBe(0);
  });

  it('make a gated terminal command gateway-available only while open', () => {
    const verbose = resolveCommand('verbose');
    if (verbose === null) throw new Error('verbose missing');
    expect(isGatewayAvailable(verbose)).toBe(false);
    expect(
      isGatewayAvailable(verbose, resolveConfigGates({ display: { tool_progress_command: true } })),
    ).toBe(true);
  });
});

describe('gateway-known commands', () => {
  it('include every non-terminal name and alias plus gated terminal commands', () => {
    for (const name of ['review', 'new', 'reset', 'q', 'whoami', 'verbose', 'skills'])
      expect(GATEWAY_KNOWN_COMMANDS.has(name), name).toBe(true);
    for (const name of ['quit', 'exit', 'clear'])
      expect(GATEWAY_KNOWN_COMMANDS.has(name), name).toBe(false);
  });

  it('recognise plugin commands and any spelling resolveCommand accepts', () => {
    expect(isGatewayKnownCommand('/Review')).toBe(true);
    expect(isGatewayKnownCommand('quit')).toBe(false);
    expect(isGatewayKnownCommand('deploy')).toBe(false);
    expect(isGatewayKnownCommand('/Deploy', { pluginCommands: ['deploy'] })).toBe(true);
  });

  it('match a plugin command in any case, with one leading slash and surrounding space', () => {
    for (const name of ['deploy', 'DEPLOY', '/deploy', '  /Deploy  ', '\tdeploy\n'])
      expect(isGatewayKnownCommand(name, { pluginCommands: ['Deploy'] }), name).toBe(true);
  });

  it('match a plugin command only by its whole name', () => {
    const pluginCommands = ['deploy'];
    for (const name of [
      'de/ploy',
      'deploy/',
      '//deploy',
      'deploy now',
      'deploys',
      'redeploy',
      'other',
    ])
      expect(isGatewayKnownCommand(name, { pluginCommands }), name).toBe(false);
  });
});
