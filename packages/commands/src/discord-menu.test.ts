import { describe, expect, it } from 'vitest';
import { availableCommands } from './availability.js';
import {
  DISCORD_DESCRIPTION_MAX,
  DISCORD_MAX_COMMANDS,
  discordSlashCommands,
} from './discord-menu.js';

describe('Discord menus', () => {
  it('lists gateway commands with an args option only when they take arguments', () => {
    const { commands } = discordSlashCommands();
    expect(commands.map((command) => command.name)).toEqual(
      availableCommands('gateway').map((command) => command.name),
    );
    expect(commands.find((command) => command.name === 'review')?.options).toEqual([
      { type: 3, name: 'args', description: '[review instructions]', required: false },
    ]);
    expect(commands.find((command) => command.name === 'queue')?.options[0]?.required).toBe(true);
    expect(commands.find((command) => command.name === 'status')?.options).toEqual([]);
  });

  it('keeps to Discord limits: 100 commands, 32-character names, 100-character descriptions', () => {
    const plugins = [
      { name: 'x'.repeat(33), description: 'too long a name' },
      { name: 'wordy', description: 'w'.repeat(300) },
      ...Array.from({ length: 120 }, (_, index) => ({
        name: `p${index}`,
        description: `Plugin ${index}`,
      })),
    ];
    const { commands, omitted } = discordSlashCommands({ plugins });
    expect(commands).toHaveLength(DISCORD_MAX_COMMANDS);
    expect(omitted).toContain('x'.repeat(33));
    expect(commands.find((command) => command.name === 'wordy')?.description).toHaveLength(
      DISCORD_DESCRIPTION_MAX,
    );
    for (const command of commands) expect(command.name.length).toBeLessThanOrEqual(32);
  });
});
