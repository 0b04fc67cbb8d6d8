import { describe, expect, it } from 'vitest';
import { parseSlashInput } from './parse-slash-input.js';
import { resolveCommand } from './resolve-command.js';

describe('parseSlashInput', () => {
  it('splits a command from its arguments, trimming only the outside', () => {
    const parsed = parseSlashInput('/review  focus on security\nand the tests  ');
    expect(parsed).toEqual({
      kind: 'command',
      command: resolveCommand('review'),
      name: 'review',
      args: 'focus on security\nand the tests',
    });
  });

  it('ends the name at a line break and keeps a multi-line argument block', () => {
    const parsed = parseSlashInput('/Review\n\n  first point\n  second point\n\n');
    expect(parsed.kind === 'command' && [parsed.name, parsed.args]).toEqual([
      'review',
      'first point\n  second point',
    ]);
  });

  it('reads a slash command only at the start of the message, never on a later line', () => {
    expect(parseSlashInput('please run this:\n/review now')).toEqual({ kind: 'not_command' });
    expect(parseSlashInput('\n\t /review now').kind).toBe('command');
  });

  it('keeps the alias that was typed and lower-cases it', () => {
    const parsed = parseSlashInput('  /RESET');
    expect(parsed.kind === 'command' && [parsed.name, parsed.command.name, parsed.args]).toEqual([
      'reset',
      'new',
      '',
    ]);
  });

  it('drops a Telegram @bot suffix', () => {
    const parsed = parseSlashInput('/help@HermesBot');
    expect(parsed.kind === 'command' && parsed.command.name).toBe('help');
  });

  it('reports a well-formed but unregistered command as unknown, with its arguments', () => {
    expect(parseSlashInput('/frobnicate now')).toEqual({
      kind: 'unknown',
      name: 'frobnicate',
      args: 'now',
    });
  });

  it('reports a bare slash as an empty command', () => {
    expect(parseSlashInput('/')).toEqual({ kind: 'empty' });
    expect(parseSlashInput('/   ')).toEqual({ kind: 'empty' });
    expect(parseSlashInput('/ hello')).toEqual({ kind: 'empty' });
  });

  it('leaves ordinary text, paths and comments for the agent', () => {
    for (const line of [
      'hello',
      '',
      'what does /help do?',
      '/etc/hosts is empty',
      '// note',
      '/~',
      '/.env',
    ])
      expect(parseSlashInput(line), line).toEqual({ kind: 'not_command' });
  });
});
