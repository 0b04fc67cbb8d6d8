import { describe, expect, it } from 'vitest';
import { defineCommand } from './command-def.js';
import {
  buildLookup,
  resolveCommand,
  resolveIn,
  SUBCOMMANDS,
  subcommandsFromHint,
} from './resolve-command.js';

describe('resolveCommand', () => {
  it('ignores case, surrounding space and one leading slash', () => {
    expect(resolveCommand('/HeLp')?.name).toBe('help');
    expect(resolveCommand('  new ')?.name).toBe('new');
  });

  it('returns null for unknown, empty and slash-only names', () => {
    expect(resolveCommand('nope')).toBeNull();
    expect(resolveCommand('')).toBeNull();
    expect(resolveCommand('/')).toBeNull();
    expect(resolveCommand('//help')).toBeNull();
  });

  it('drops only a leading slash, never one inside or after the name', () => {
    for (const name of ['he/lp', 'help/', 'review/now', ' re/view '])
      expect(resolveCommand(name), name).toBeNull();
  });

  it('resolves the underscore spelling a Telegram menu shows for a hyphenated name', () => {
    const lookup = buildLookup([
      defineCommand({ name: 'tool-progress', description: 'x', category: 'Info', aliases: ['tp'] }),
    ]);
    expect(resolveIn(lookup, '/tool_progress')?.name).toBe('tool-progress');
    expect(resolveIn(lookup, 'tool-progress')?.name).toBe('tool-progress');
    expect(resolveIn(lookup, 'tp')?.name).toBe('tool-progress');
  });
});

describe('SUBCOMMANDS', () => {
  it('lists explicit subcommands under the slash name', () => {
    expect(SUBCOMMANDS['/reasoning']).toEqual([
      'none',
      'minimal',
      'low',
      'medium',
      'high',
      'xhigh',
    ]);
    expect(SUBCOMMANDS['/prompt']).toEqual(['clear']);
    expect(SUBCOMMANDS['/review']).toBeUndefined();
  });

  it('falls back to the first a|b|c pattern of a hint', () => {
    expect(subcommandsFromHint('[on|off] [minutes]')).toEqual(['on', 'off']);
    expect(subcommandsFromHint('<name> [show|hide|list]')).toEqual(['show', 'hide', 'list']);
    expect(subcommandsFromHint('[text | clear]')).toEqual([]);
    expect(subcommandsFromHint('')).toEqual([]);
  });
});
