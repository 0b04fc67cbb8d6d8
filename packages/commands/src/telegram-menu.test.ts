import { describe, expect, it } from 'vitest';
import { availableCommands } from './availability.js';
import {
  TELEGRAM_DESCRIPTION_MAX,
  TELEGRAM_MAX_COMMANDS,
  telegramBotCommands,
  telegramCommandName,
  telegramMenuCommands,
} from './telegram-menu.js';

const skills = Array.from({ length: 150 }, (_, index) => ({
  name: `skill-${index}`,
  description: `Skill number ${index} with a description that goes on for a while`,
}));

describe('Telegram menus', () => {
  it('turns hyphens into underscores and rejects names Telegram cannot show', () => {
    expect(telegramCommandName('my-plugin')).toBe('my_plugin');
    expect(telegramCommandName('/Review')).toBe('review');
    expect(telegramCommandName('has space')).toBeNull();
    expect(telegramCommandName('x'.repeat(33))).toBeNull();
  });

  it('drops surrounding space and one leading slash from a name, nothing else', () => {
    expect(telegramCommandName('  /Deploy-Now \n')).toBe('deploy_now');
    for (const name of ['ops/deploy', '//review', 'review/', ''])
      expect(telegramCommandName(name), name).toBeNull();
  });

  it('lists gateway commands without aliases', () => {
    const names = telegramBotCommands().map((entry) => entry.command);
    expect(names).toEqual(availableCommands('gateway').map((command) => command.name));
    expect(names).not.toContain('reset');
  });

  it('caps the menu at 100 with core commands first and reports what it left out', () => {
    const menu = telegramMenuCommands({
      skills,
      plugins: [{ name: 'deploy-now', description: 'Deploy' }],
    });
    expect(menu.commands).toHaveLength(TELEGRAM_MAX_COMMANDS);
    expect(menu.commands[0]?.command).toBe('new');
    expect(menu.commands.map((entry) => entry.command)).toContain('deploy_now');
    const core = availableCommands('gateway').length;
    expect(menu.omitted).toHaveLength(core + 1 + skills.length - TELEGRAM_MAX_COMMANDS);
    expect(menu.omitted.at(-1)).toBe('skill_149');
  });

  it('cuts descriptions to 40 characters with an ellipsis', () => {
    const menu = telegramMenuCommands({ skills });
    for (const entry of menu.commands)
      expect(entry.description.length).toBeLessThanOrEqual(TELEGRAM_DESCRIPTION_MAX);
    const review = menu.commands.find((entry) => entry.command === 'review');
    expect(review?.description).toMatch(/^Spawn an independent subagent to.*…$/);
    expect(review?.description).toHaveLength(TELEGRAM_DESCRIPTION_MAX);
  });

  it('moves priority names to the front before the cap, so a late skill can survive it', () => {
    const menu = telegramMenuCommands({
      skills,
      priority: ['skill-149', 'review'],
      maxCommands: 5,
    });
    expect(menu.commands.map((entry) => entry.command)).toEqual([
      'skill_149',
      'review',
      'new',
      'start',
      'stop',
    ]);
  });

  it('leaves out and reports plugin and skill names Telegram cannot show', () => {
    const menu = telegramMenuCommands({
      plugins: [{ name: 'bad name', description: 'Has a space' }],
      skills: [{ name: 'ops/deploy', description: 'Has a slash' }],
    });
    expect(menu.omitted).toEqual(['bad name', 'ops/deploy']);
    expect(menu.commands).toHaveLength(availableCommands('gateway').length);
    for (const entry of menu.commands) expect(entry.command).toMatch(/^[a-z0-9_]{1,32}$/);
  });

  it('describes an entry without a description by its slash name', () => {
    const menu = telegramMenuCommands({
      plugins: [
        { name: 'deploy-now', description: '' },
        { name: 'rollback', description: ' \n ' },
      ],
    });
    expect(menu.commands.slice(-2)).toEqual([
      { command: 'deploy_now', description: '/deploy_now' },
      { command: 'rollback', description: '/rollback' },
    ]);
  });

  it('keeps a 40-character description whole and leaves no space before the ellipsis', () => {
    const exact = 'd'.repeat(TELEGRAM_DESCRIPTION_MAX);
    const cutAtSpace = `${'w'.repeat(TELEGRAM_DESCRIPTION_MAX - 2)} and more`;
    const menu = telegramMenuCommands({
      plugins: [
        { name: 'exact', description: exact },
        { name: 'spaced', description: cutAtSpace },
      ],
    });
    const description = (name: string) =>
      menu.commands.find((entry) => entry.command === name)?.description;
    expect(description('exact')).toBe(exact);
    expect(description('spaced')).toBe(`${'w'.repeat(TELEGRAM_DESCRIPTION_MAX - 2)}…`);
  });

  it('clamps the cap to what Telegram accepts and drops duplicate names', () => {
    expect(telegramMenuCommands({ skills, maxCommands: 500 }).commands).toHaveLength(100);
    const menu = telegramMenuCommands({ plugins: [{ name: 'review', description: 'Duplicate' }] });
    expect(menu.commands.filter((entry) => entry.command === 'review')).toHaveLength(1);
    expect(menu.omitted).toEqual(['review']);
  });
});
