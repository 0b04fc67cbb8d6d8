import { describe, expect, it } from 'vitest';
import { defineCommand } from './command-def.js';
import {
  aliasSuffix,
  commandsByCategory,
  commandUsage,
  gatewayHelpLines,
  helpLines,
  visibleAliases,
} from './help.js';
import { resolveCommand } from './resolve-command.js';

describe('help', () => {
  it('writes gateway help lines in the reference format, aliases included', () => {
    const lines = gatewayHelpLines();
    expect(lines).toContain(
      '`/review [review instructions]` -- Spawn an independent subagent to review the work just discussed (PR, code, docs)',
    );
    expect(lines).toContain(
      '`/new` -- Start a new conversation; the current one stays in your history (alias: `/reset`)',
    );
    expect(lines.some((line) => line.startsWith('`/quit'))).toBe(false);
  });

  it('restricts gateway help to the allowed canonical names', () => {
    expect(gatewayHelpLines({ allowed: ['help', 'whoami'] })).toEqual([
      '`/help` -- Show the commands you can use here',
      '`/whoami` -- Show who you are to this bot and which commands you may use',
    ]);
  });

  it('hides underscore spellings of another name but keeps real aliases', () => {
    const command = defineCommand({
      name: 'tool-progress',
      description: 'x',
      category: 'Info',
      aliases: ['tool_progress', 'tp', 'show_tools'],
    });
    expect(visibleAliases(command)).toEqual(['tp', 'show_tools']);
  });

  it('groups a surface’s commands by category in help order', () => {
    const groups = commandsByCategory('cli');
    expect(groups.map((group) => group.category)).toEqual([
      'Session',
      'Configuration',
      'Tools & Skills',
      'Info',
      'Exit',
    ]);
    expect(commandsByCategory('gateway').some((group) => group.category === 'Exit')).toBe(false);
  });

  it('aligns terminal help lines under category headings', () => {
    const lines = helpLines('cli');
    expect(lines[0]).toBe('Session');
    const review = lines.find((line) => line.includes('/review'));
    const quit = lines.find((line) => line.includes('/quit'));
    expect(review?.indexOf('Spawn')).toBe(quit?.indexOf('Leave'));
    expect(quit).toMatch(/\(alias: \/exit\)$/);
  });

  it('separates terminal help categories by one blank line, with none before the first', () => {
    const lines = helpLines('cli');
    const headings = commandsByCategory('cli').map((group) => group.category);
    const headingAt = headings.map((heading) => lines.indexOf(heading));
    expect(headingAt[0]).toBe(0);
    for (const index of headingAt.slice(1)) expect(lines[index - 1]).toBe('');
    expect(lines.filter((line) => line === '')).toHaveLength(headings.length - 1);
  });

  it('ends a terminal help line at the description when the command has no alias', () => {
    const review = helpLines('cli').find((line) => line.trimStart().startsWith('/review '));
    expect(review).toMatch(
      /^ {2}\/review \[review instructions\] +Spawn an independent subagent to review the work just discussed \(PR, code, docs\)$/,
    );
  });

  it('says alias for one alias and aliases for several, separated by commas', () => {
    expect(aliasSuffix([])).toBe('');
    expect(aliasSuffix(['/reset'])).toBe(' (alias: /reset)');
    expect(aliasSuffix(['`/q`', '`/queue-it`'])).toBe(' (aliases: `/q`, `/queue-it`)');
  });

  it('shows usage as the slash name plus its hint', () => {
    const review = resolveCommand('review');
    const help = resolveCommand('help');
    expect(review && commandUsage(review)).toBe('/review [review instructions]');
    expect(help && commandUsage(help)).toBe('/help');
  });
});
