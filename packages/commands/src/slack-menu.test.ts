import { describe, expect, it } from 'vitest';
import { availableCommands } from './availability.js';
import { COMMAND_REGISTRY } from './registry.js';
import {
  expandSlackHermesCommand,
  SLACK_DESCRIPTION_MAX,
  SLACK_MAX_SLASH_COMMANDS,
  SLACK_VIA_HERMES_ONLY,
  slackNativeSlashes,
  slackSubcommandMap,
} from './slack-menu.js';

const plugins = Array.from({ length: 80 }, (_, index) => ({
  name: `plugin-${index}`,
  description: `Plugin ${index}`,
}));

describe('Slack menus', () => {
  it('lists /hermes first with its reference description and hint', () => {
    expect(slackNativeSlashes()[0]).toEqual({
      command: '/hermes',
      description: 'Talk to Hermes or run a subcommand',
      usageHint: '[subcommand] [args]',
    });
  });

  it('never registers more than 50 slash commands', () => {
    expect(slackNativeSlashes().length).toBeLessThanOrEqual(SLACK_MAX_SLASH_COMMANDS);
    expect(slackNativeSlashes({ plugins })).toHaveLength(SLACK_MAX_SLASH_COMMANDS);
  });

  it('skips Slack built-ins and the /hermes-only set, review included', () => {
    const natives = slackNativeSlashes().map((entry) => entry.command);
    for (const name of ['/status', '/review', '/version', '/whoami', '/hermes'])
      expect(natives.filter((command) => command === name).length, name).toBe(
        name === '/hermes' ? 1 : 0,
      );
    expect(SLACK_VIA_HERMES_ONLY.has('review')).toBe(true);
    expect(SLACK_VIA_HERMES_ONLY.size).toBe(15);
  });

  it('describes aliases by what they stand for and keeps descriptions within Slack limits', () => {
    const natives = slackNativeSlashes();
    expect(natives.find((entry) => entry.command === '/reset')?.description).toBe(
      'Alias for /new — Start a new conversation; the current one stays in your history',
    );
    for (const entry of natives)
      expect(entry.description.length).toBeLessThanOrEqual(SLACK_DESCRIPTION_MAX);
  });

  it('lists a plugin under its name without surrounding space or one leading slash, lower-cased', () => {
    const natives = slackNativeSlashes({
      plugins: [
        { name: '  /Deploy \n', description: 'Deploy the app' },
        { name: 'ops/deploy', description: 'Slash inside' },
      ],
    });
    expect(natives.at(-1)).toEqual({
      command: '/deploy',
      description: 'Deploy the app',
      usageHint: '',
    });
    expect(natives).toHaveLength(slackNativeSlashes().length + 1);
  });

  it('never lets a plugin take /hermes, a name already listed, or a name Slack rejects', () => {
    const natives = slackNativeSlashes({
      plugins: [
        { name: 'hermes', description: 'Impostor' },
        { name: 'new', description: 'Duplicate' },
        { name: 'bad name', description: 'Has a space' },
        { name: 'x'.repeat(33), description: 'Too long' },
        { name: '/', description: 'Empty' },
      ],
    });
    expect(natives).toEqual(slackNativeSlashes());
  });

  it('describes a plugin without a description by its slash name', () => {
    const natives = slackNativeSlashes({
      plugins: [
        { name: 'deploy', description: '' },
        { name: 'rollback', description: ' \n ' },
      ],
    });
    expect(natives.slice(-2).map((entry) => entry.description)).toEqual(['/deploy', '/rollback']);
  });

  it('routes /hermes <plugin> by the plugin name without space or one leading slash, never an empty name', () => {
    const map = slackSubcommandMap({
      plugins: [
        { name: '  /Deploy ', description: 'Deploy' },
        { name: 'ops/deploy', description: 'Slash inside' },
        { name: '', description: 'Empty' },
        { name: '/', description: 'Slash only' },
        { name: ' \n ', description: 'Blank' },
      ],
    });
    expect(map.get('deploy')).toBe('/deploy');
    expect(map.has('opsdeploy')).toBe(false);
    expect([...map.keys()].filter((name) => name.trim().length === 0)).toEqual([]);
  });

  it('reaches every canonical command natively or through /hermes', () => {
    const natives = new Set(slackNativeSlashes({ plugins }).map((entry) => entry.command.slice(1)));
    const viaHermes = slackSubcommandMap();
    for (const command of availableCommands('gateway'))
      expect(
        natives.has(command.name) || viaHermes.get(command.name) === `/${command.name}`,
        command.name,
      ).toBe(true);
    const terminalOnly = COMMAND_REGISTRY.filter((command) => command.cliOnly).map(
      (command) => command.name,
    );
    for (const name of terminalOnly) expect(viaHermes.has(name), name).toBe(false);
  });

  it('turns /hermes review focus on tests into /review focus on tests', () => {
    expect(expandSlackHermesCommand('review focus on tests')).toBe('/review focus on tests');
    expect(expandSlackHermesCommand('  Status ')).toBe('/status');
    expect(expandSlackHermesCommand('reset')).toBe('/reset');
    expect(
      expandSlackHermesCommand('deploy now', {
        plugins: [{ name: 'deploy', description: 'Deploy' }],
      }),
    ).toBe('/deploy now');
  });

  it('leaves text that does not start with a subcommand to the agent', () => {
    expect(expandSlackHermesCommand('what changed today?')).toBeNull();
    expect(expandSlackHermesCommand('quit')).toBeNull();
    expect(expandSlackHermesCommand('')).toBeNull();
  });
});
