export { inferArgumentMode, PROSE_MARKERS } from './argument-mode.js';
export {
  type AvailabilityOptions,
  availableCommands,
  COMMAND_SURFACES,
  type CommandSurface,
  type ConfigGates,
  GATEWAY_KNOWN_COMMANDS,
  isCommandAvailable,
  isGatewayAvailable,
  isGatewayKnownCommand,
  resolveConfigGates,
} from './availability.js';
export {
  ACTIVE_SESSION_BYPASS_COMMANDS,
  isInterruptThenDispatch,
  shouldBypassActiveSession,
} from './busy-policy.js';
export {
  type ArgumentMode,
  type BusyPolicy,
  COMMAND_CATEGORIES,
  type CommandCategory,
  type CommandDef,
  type CommandInput,
  type DesktopDisposition,
  defineCommand,
  VALID_BUSY_POLICIES,
} from './command-def.js';
export { CommandsError, type CommandsErrorCode } from './commands-error.js';
export { desktopSurfaceRegistry } from './desktop-registry.js';
export {
  DISCORD_DESCRIPTION_MAX,
  DISCORD_MAX_COMMANDS,
  DISCORD_NAME_MAX,
  type DiscordCommandOption,
  type DiscordMenu,
  type DiscordMenuOptions,
  type DiscordSlashCommand,
  discordSlashCommands,
} from './discord-menu.js';
export {
  type CommandGroup,
  commandsByCategory,
  commandUsage,
  type GatewayHelpOptions,
  gatewayHelpLines,
  helpLines,
  visibleAliases,
} from './help.js';
export type { MenuEntry } from './menu-entry.js';
export { parseSlashInput, type SlashInput } from './parse-slash-input.js';
export { COMMAND_REGISTRY } from './registry.js';
export { COMMAND_LOOKUP, resolveCommand, SUBCOMMANDS } from './resolve-command.js';
export {
  expandSlackHermesCommand,
  SLACK_BUILTIN_COMMANDS,
  SLACK_DESCRIPTION_MAX,
  SLACK_HERMES_COMMAND,
  SLACK_MAX_SLASH_COMMANDS,
  SLACK_NAME_MAX,
  SLACK_USAGE_HINT_MAX,
  SLACK_VIA_HERMES_ONLY,
  type SlackMenuOptions,
  type SlackSlashCommand,
  slackNativeSlashes,
  slackSubcommandMap,
} from './slack-menu.js';
export {
  TELEGRAM_DESCRIPTION_MAX,
  TELEGRAM_MAX_COMMANDS,
  TELEGRAM_NAME_MAX,
  type TelegramBotCommand,
  type TelegramMenu,
  type TelegramMenuOptions,
  telegramBotCommands,
  telegramCommandName,
  telegramMenuCommands,
} from './telegram-menu.js';
export { UnknownCommandSurfaceError } from './unknown-command-surface-error.js';
