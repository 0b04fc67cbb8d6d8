import { describe, expect, it } from 'vitest';
import { CommandsError } from './commands-error.js';
import { UnknownCommandSurfaceError } from './unknown-command-surface-error.js';

describe('CommandsError', () => {
  it('recognises its own errors, subclasses included, and one from another copy of the package', () => {
    const fromAnotherInstall = Object.assign(new Error('Unknown command surface: tui'), {
      code: 'unknown_command_surface',
      [Symbol.for('@hermes/commands.error')]: true,
    });
    for (const error of [
      new CommandsError({ code: 'unknown_command_surface', message: 'x' }),
      new UnknownCommandSurfaceError('tui'),
      fromAnotherInstall,
    ])
      expect(CommandsError.isInstance(error), String(error)).toBe(true);
  });

  it('refuses other errors, look-alike objects, null and primitives without throwing', () => {
    for (const value of [
      new Error('Unknown command surface: tui'),
      new TypeError('x'),
      { name: 'CommandsError', code: 'unknown_command_surface', message: 'x' },
      {},
      null,
      undefined,
      'CommandsError',
      42,
      true,
      Symbol.for('@hermes/commands.error'),
    ])
      expect(CommandsError.isInstance(value), String(value)).toBe(false);
  });

  it('carries the cause it was given, and has no cause without one', () => {
    const root = new Error('root');
    const error = new CommandsError({ code: 'unknown_command_surface', message: 'x', cause: root });
    expect(error.cause).toBe(root);
    expect(Object.hasOwn(new UnknownCommandSurfaceError('tui'), 'cause')).toBe(false);
  });

  it('names itself after its class and keeps the code and message', () => {
    const error = new UnknownCommandSurfaceError('tui');
    expect([error.name, error.code, error.message]).toEqual([
      'UnknownCommandSurfaceError',
      'unknown_command_surface',
      'Unknown command surface: tui',
    ]);
    expect(error).toBeInstanceOf(CommandsError);
  });
});
