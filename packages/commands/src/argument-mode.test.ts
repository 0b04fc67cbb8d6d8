import { describe, expect, it } from 'vitest';
import { inferArgumentMode } from './argument-mode.js';
import { defineCommand } from './command-def.js';

describe('inferArgumentMode', () => {
  it('keeps an explicit mode even when the hint suggests another', () => {
    expect(
      inferArgumentMode({ argumentMode: 'options', subcommands: [], argsHint: '<prompt>' }),
    ).toBe('options');
  });

  it('calls subcommands plus a prose hint mixed, and subcommands alone options', () => {
    for (const hint of [
      '[text | clear]',
      '<prompt>',
      '[review instructions]',
      '[interval]',
      '<what to do>',
    ])
      expect(
        inferArgumentMode({ argumentMode: null, subcommands: ['clear'], argsHint: hint }),
      ).toBe('mixed');
    expect(
      inferArgumentMode({ argumentMode: null, subcommands: ['on', 'off'], argsHint: '[on|off]' }),
    ).toBe('options');
  });

  it('calls any hint without subcommands text, and no hint no arguments', () => {
    expect(
      inferArgumentMode({ argumentMode: null, subcommands: [], argsHint: '[review instructions]' }),
    ).toBe('text');
    expect(inferArgumentMode({ argumentMode: null, subcommands: [], argsHint: '' })).toBeNull();
  });
});

describe('defineCommand', () => {
  it('applies the defaults, infers the argument mode and freezes the entry and its lists', () => {
    const command = defineCommand({
      name: 'demo',
      description: 'A demo',
      category: 'Info',
      argsHint: '[words]',
      aliases: ['d'],
    });
    expect(command).toMatchObject({
      aliases: ['d'],
      subcommands: [],
      cliOnly: false,
      gatewayOnly: false,
      gatewayConfigGate: null,
      busyPolicy: 'reject',
      busyHandler: null,
      execute: null,
      argumentMode: 'text',
      desktop: null,
    });
    expect(Object.isFrozen(command)).toBe(true);
    expect(Object.isFrozen(command.aliases)).toBe(true);
    expect(Object.isFrozen(command.subcommands)).toBe(true);
  });
});
