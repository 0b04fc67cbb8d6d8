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

  it('clamps the cap to what Telegram accepts and drops duplicate names', () => {
    expect(telegramMenuCommands({ skills, maxCommands: 500 }).commands).toHaveLength(100);
    const menu = telegramMenuCommands({ plugins: [{ name: 'review', description: 'Duplicate' }] });
    expect(menu.commands.filter((entry) => entry.command === 'review')).toHaveLength(1);
    expect(menu.omitted).toEqual(['review']);
  });
});
