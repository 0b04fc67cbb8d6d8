import { type AvailabilityOptions, availableCommands } from './availability.js';
import { type MenuEntry, truncateText } from './menu-entry.js';

/** Telegram's `setMyCommands` accepts at most 100 commands. */
export const TELEGRAM_MAX_COMMANDS = 100;
/** Telegram command names: 1–32 characters of `[a-z0-9_]`. */
export const TELEGRAM_NAME_MAX = 32;
/** Menu descriptions are cut to 40 characters so the menu stays one line per command. */
export const TELEGRAM_DESCRIPTION_MAX = 40;

/** One entry of Telegram's `setMyCommands` list. */
export interface TelegramBotCommand {
  readonly command: string;
  readonly description: string;
}

/** The Telegram spelling of a command name (hyphens become underscores), or `null` if it has none. */
export function telegramCommandName(name: string): string | null {
  const converted = name.trim().replace(/^\//, '').toLowerCase().replaceAll('-', '_');
  return /^[a-z0-9_]{1,32}$/.test(converted) ? converted : null;
}

/** Every gateway-available command under its Telegram name, full descriptions, no aliases. */
export function telegramBotCommands(
  options: AvailabilityOptions = {},
): readonly TelegramBotCommand[] {
  const commands: TelegramBotCommand[] = [];
  for (const command of availableCommands('gateway', options)) {
    const name = telegramCommandName(command.name);
    if (name !== null) commands.push({ command: name, description: command.description });
  }
  return commands;
}

export interface TelegramMenuOptions extends AvailabilityOptions {
  /** Cap, at most 100 (Telegram's limit); default 100. */
  readonly maxCommands?: number | undefined;
  /**
   * Names to list first, in this order, before the cap applies
   * (`platforms.telegram.extra.command_menu.priority`).
   */
  readonly priority?: readonly string[] | undefined;
  readonly plugins?: readonly MenuEntry[] | undefined;
  readonly skills?: readonly MenuEntry[] | undefined;
}

export interface TelegramMenu {
  readonly commands: readonly TelegramBotCommand[];
  /** Names left out: past the cap, duplicates, or names Telegram cannot show. */
  readonly omitted: readonly string[];
}

/**
 * The bot's command menu: built-in commands, then plugin commands, then skills; the priority names
 * moved to the front; descriptions cut to 40 characters; at most `maxCommands` entries.
 */
export function telegramMenuCommands(options: TelegramMenuOptions = {}): TelegramMenu {
  const requestedCap = Math.floor(options.maxCommands ?? TELEGRAM_MAX_COMMANDS);
  const cap = Number.isFinite(requestedCap)
    ? Math.min(TELEGRAM_MAX_COMMANDS, Math.max(0, requestedCap))
    : TELEGRAM_MAX_COMMANDS;
  const candidates: MenuEntry[] = [
    ...availableCommands('gateway', options),
    ...(options.plugins ?? []),
    ...(options.skills ?? []),
  ];
  const omitted: string[] = [];
  const seen = new Set<string>();
  let entries: TelegramBotCommand[] = [];
  for (const candidate of candidates) {
    const name = telegramCommandName(candidate.name);
    if (name === null || seen.has(name)) {
      omitted.push(candidate.name);
      continue;
    }
    seen.add(name);
    const description = candidate.description.trim() || `/${name}`;
    entries.push({
      command: name,
      description: truncateText(description, TELEGRAM_DESCRIPTION_MAX),
    });
  }
  const priority = (options.priority ?? [])
    .map((name) => telegramCommandName(name))
    .filter((name): name is string => name !== null);
  if (priority.length > 0) {
    const rank = (entry: TelegramBotCommand): number => {
      const index = priority.indexOf(entry.command);
      return index === -1 ? priority.length : index;
    };
    // Array.prototype.sort is stable, so the rest keep their order.
    entries = entries.sort((left, right) => rank(left) - rank(right));
  }
  for (const entry of entries.slice(cap)) omitted.push(entry.command);
  return { commands: entries.slice(0, cap), omitted };
}
