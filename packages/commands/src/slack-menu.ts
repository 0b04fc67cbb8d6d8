import { type AvailabilityOptions, availableCommands } from './availability.js';
import { type MenuEntry, truncateText } from './menu-entry.js';
import { resolveCommand } from './resolve-command.js';

/** A Slack app manifest accepts at most 50 slash commands. */
export const SLACK_MAX_SLASH_COMMANDS = 50;
export const SLACK_NAME_MAX = 32;
export const SLACK_DESCRIPTION_MAX = 140;
export const SLACK_USAGE_HINT_MAX = 100;

/** Slack's own slash commands; an app cannot register these. */
export const SLACK_BUILTIN_COMMANDS: ReadonlySet<string> = new Set([
  'me',
  'status',
  'away',
  'dnd',
  'shrug',
  'remind',
  'msg',
  'feed',
  'who',
  'collapse',
  'expand',
  'leave',
  'join',
  'open',
  'search',
  'topic',
  'mute',
  'pro',
  'shortcuts',
]);

/**
 * Commands kept off Slack's native list to stay under the 50-command cap; they are reached as
 * `/hermes <name> …`. When a new command tips the list past the cap, demote a rarely used one-off
 * lookup into this set.
 */
export const SLACK_VIA_HERMES_ONLY: ReadonlySet<string> = new Set([
  'topup',
  'moa',
  'debug',
  'egress',
  'init',
  'version',
  'diff',
  'update',
  'heartbeat',
  'refine',
  'review',
  'pause',
  'whoami',
  'platform',
  'insights',
]);

/** One `slash_commands` entry of a Slack app manifest (without the request URL). */
export interface SlackSlashCommand {
  /** With the slash: `/hermes`. */
  readonly command: string;
  readonly description: string;
  readonly usageHint: string;
}

/** The umbrella command, always first: `/hermes review focus on tests` runs `/review focus on tests`. */
export const SLACK_HERMES_COMMAND: SlackSlashCommand = Object.freeze({
  command: '/hermes',
  description: 'Talk to Hermes or run a subcommand',
  usageHint: '[subcommand] [args]',
});

export interface SlackMenuOptions extends AvailabilityOptions {
  readonly plugins?: readonly MenuEntry[] | undefined;
}

const SLACK_NAME = /^[a-z0-9_-]{1,32}$/;

/**
 * The native slash commands for a Slack app manifest: `/hermes` first, then canonical names in
 * registry order, then aliases (`Alias for /x — …`), then plugin commands — skipping invalid or
 * duplicate names, Slack's built-ins and the `/hermes`-only set — stopping at 50.
 */
export function slackNativeSlashes(options: SlackMenuOptions = {}): readonly SlackSlashCommand[] {
  const commands = availableCommands('gateway', options);
  const candidates: { name: string; description: string; usageHint: string }[] = [
    ...commands.map((command) => ({
      name: command.name,
      description: command.description,
      usageHint: command.argsHint,
    })),
    ...commands.flatMap((command) =>
      command.aliases.map((alias) => ({
        name: alias,
        description: `Alias for /${command.name} — ${command.description}`,
        usageHint: command.argsHint,
      })),
    ),
    ...(options.plugins ?? []).map((plugin) => ({
      name: plugin.name.trim().replace(/^\//, '').toLowerCase(),
      description: plugin.description,
      usageHint: plugin.argsHint ?? '',
    })),
  ];
  const result: SlackSlashCommand[] = [SLACK_HERMES_COMMAND];
  const seen = new Set(['hermes']);
  for (const candidate of candidates) {
    if (result.length >= SLACK_MAX_SLASH_COMMANDS) break;
    const name = candidate.name;
    if (!SLACK_NAME.test(name) || seen.has(name)) continue;
    if (SLACK_BUILTIN_COMMANDS.has(name) || SLACK_VIA_HERMES_ONLY.has(name)) continue;
    seen.add(name);
    result.push({
      command: `/${name}`,
      description: truncateText(candidate.description.trim() || `/${name}`, SLACK_DESCRIPTION_MAX),
      usageHint: truncateText(candidate.usageHint, SLACK_USAGE_HINT_MAX),
    });
  }
  return result;
}

/**
 * `/hermes <word>` routing: every gateway-available name and alias (and plugin name) → the slash
 * line it stands for, `review` → `/review`.
 */
export function slackSubcommandMap(options: SlackMenuOptions = {}): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  for (const command of availableCommands('gateway', options))
    for (const name of [command.name, ...command.aliases]) map.set(name, `/${name}`);
  for (const plugin of options.plugins ?? []) {
    const name = plugin.name.trim().replace(/^\//, '').toLowerCase();
    if (name.length > 0 && !map.has(name)) map.set(name, `/${name}`);
  }
  return map;
}

/**
 * The slash line a `/hermes` invocation stands for: `review focus on tests` →
 * `/review focus on tests`; `null` when the first word is not a subcommand (then the text is a
 * message for the agent).
 */
export function expandSlackHermesCommand(
  text: string,
  options: SlackMenuOptions = {},
): string | null {
  const match = /^\s*\/?(\S+)([\s\S]*)$/.exec(text);
  if (match?.[1] === undefined) return null;
  const word = match[1].toLowerCase();
  const map = slackSubcommandMap(options);
  const resolved = resolveCommand(word);
  const target = map.get(word) ?? (resolved === null ? undefined : map.get(resolved.name));
  if (target === undefined) return null;
  const rest = (match[2] ?? '').trim();
  return rest.length > 0 ? `${target} ${rest}` : target;
}
