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

  it('omits nothing when only the built-in commands are listed', () => {
    expect(discordSlashCommands().omitted).toEqual([]);
  });

  it('registers a plugin under its name without surrounding space or one leading slash, lower-cased', () => {
    const { commands, omitted } = discordSlashCommands({
      plugins: [
        { name: '  /Deploy \n', description: 'Deploy' },
        { name: 'ops/deploy', description: 'Slash inside' },
        { name: '//twice', description: 'Two slashes' },
      ],
    });
    expect(commands.at(-1)?.name).toBe('deploy');
    expect(omitted).toEqual(['ops/deploy', '//twice']);
  });

  it('gives a plugin an args option only for a non-blank hint, required when it reads <…>', () => {
    const { commands } = discordSlashCommands({
      plugins: [
        { name: 'deploy', description: 'Deploy', argsHint: '  <target>  ' },
        { name: 'rollback', description: 'Roll back', argsHint: '   ' },
        { name: 'ping', description: 'Ping' },
      ],
    });
    const options = (name: string) => commands.find((command) => command.name === name)?.options;
    expect(options('deploy')).toEqual([
      { type: 3, name: 'args', description: '<target>', required: true },
    ]);
    expect(options('rollback')).toEqual([]);
    expect(options('ping')).toEqual([]);
  });

  it('describes a plugin without a description by its slash name', () => {
    const { commands } = discordSlashCommands({
      plugins: [
        { name: 'deploy', description: '' },
        { name: 'rollback', description: ' \t ' },
      ],
    });
    expect(commands.slice(-2).map((command) => command.description)).toEqual([
      '/deploy',
      '/rollback',
    ]);
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
