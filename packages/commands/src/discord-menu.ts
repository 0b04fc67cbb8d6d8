import { type AvailabilityOptions, availableCommands } from './availability.js';
import { type MenuEntry, truncateText } from './menu-entry.js';

/** Discord allows 100 global chat-input commands per application. */
export const DISCORD_MAX_COMMANDS = 100;
export const DISCORD_NAME_MAX = 32;
export const DISCORD_DESCRIPTION_MAX = 100;

/** The one optional free-text option a command with arguments gets. */
export interface DiscordCommandOption {
  /** 3 = STRING. */
  readonly type: 3;
  readonly name: 'args';
  readonly description: string;
  readonly required: boolean;
}

/** A chat-input application command, ready for Discord's bulk-overwrite endpoint. */
export interface DiscordSlashCommand {
  readonly name: string;
  readonly description: string;
  readonly options: readonly DiscordCommandOption[];
}

export interface DiscordMenuOptions extends AvailabilityOptions {
  readonly plugins?: readonly MenuEntry[] | undefined;
}

export interface DiscordMenu {
  readonly commands: readonly DiscordSlashCommand[];
  /** Names left out: past the cap, duplicates, or names Discord rejects. */
  readonly omitted: readonly string[];
}

const DISCORD_NAME = /^[-_\p{L}\p{N}]{1,32}$/u;

/**
 * Gateway-available commands (canonical names only) and then plugin commands as Discord slash
 * commands: names of at most 32 characters, descriptions cut to 100, an `args` text option for
 * commands that take arguments (required when the hint is `<…>`), at most 100 commands.
 */
export function discordSlashCommands(options: DiscordMenuOptions = {}): DiscordMenu {
  const candidates: MenuEntry[] = [
    ...availableCommands('gateway', options),
    ...(options.plugins ?? []),
  ];
  const commands: DiscordSlashCommand[] = [];
  const omitted: string[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const name = candidate.name.trim().replace(/^\//, '').toLowerCase();
    if (!DISCORD_NAME.test(name) || seen.has(name) || commands.length >= DISCORD_MAX_COMMANDS) {
      omitted.push(candidate.name);
      continue;
    }
    seen.add(name);
    const hint = (candidate.argsHint ?? '').trim();
    commands.push({
      name,
      description: truncateText(
        candidate.description.trim() || `/${name}`,
        DISCORD_DESCRIPTION_MAX,
      ),
      options:
        hint.length === 0
          ? []
          : [
              {
                type: 3,
                name: 'args',
                description: truncateText(hint, DISCORD_DESCRIPTION_MAX),
                required: hint.startsWith('<'),
              },
            ],
    });
  }
  return { commands, omitted };
}
