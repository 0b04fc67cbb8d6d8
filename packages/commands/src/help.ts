import {
  type AvailabilityOptions,
  availableCommands,
  type CommandSurface,
} from './availability.js';
import { COMMAND_CATEGORIES, type CommandCategory, type CommandDef } from './command-def.js';

/** How help writes a command: `/name` plus its hint, e.g. `/review [review instructions]`. */
export function commandUsage(command: CommandDef): string {
  return command.argsHint.length > 0 ? `/${command.name} ${command.argsHint}` : `/${command.name}`;
}

/** Aliases worth showing: an underscore spelling of another name is a Telegram artefact, not news. */
export function visibleAliases(command: CommandDef): readonly string[] {
  const names = new Set([command.name, ...command.aliases]);
  return command.aliases.filter(
    (alias) => !(alias.includes('_') && names.has(alias.replaceAll('_', '-'))),
  );
}

/**
 * @internal Exported for tests: the help-line tail for already formatted aliases, `(alias: /a)` or
 * `(aliases: /a, /b)`, empty without any. No registry command has two aliases today, so only a
 * direct test reaches the plural.
 */
export function aliasSuffix(aliases: readonly string[]): string {
  if (aliases.length === 0) return '';
  return ` (${aliases.length === 1 ? 'alias' : 'aliases'}: ${aliases.join(', ')})`;
}

export interface CommandGroup {
  readonly category: CommandCategory;
  readonly commands: readonly CommandDef[];
}

/** The commands a surface offers, grouped by category in help order; empty categories left out. */
export function commandsByCategory(
  surface: CommandSurface,
  options: AvailabilityOptions = {},
): readonly CommandGroup[] {
  const commands = availableCommands(surface, options);
  return COMMAND_CATEGORIES.map((category) => ({
    category,
    commands: commands.filter((command) => command.category === category),
  })).filter((group) => group.commands.length > 0);
}

export interface GatewayHelpOptions extends AvailabilityOptions {
  /** Canonical names a non-admin may use; every gateway command when omitted. */
  readonly allowed?: Iterable<string> | undefined;
}

/**
 * Chat-platform help, one line per gateway-available command:
 * `` `/name args` -- description (alias: `/a`) ``.
 */
export function gatewayHelpLines(options: GatewayHelpOptions = {}): readonly string[] {
  const allowed = options.allowed === undefined ? undefined : new Set(options.allowed);
  return availableCommands('gateway', options)
    .filter((command) => allowed === undefined || allowed.has(command.name))
    .map((command) => {
      const suffix = aliasSuffix(visibleAliases(command).map((alias) => `\`/${alias}\``));
      return `\`${commandUsage(command)}\` -- ${command.description}${suffix}`;
    });
}

/**
 * Terminal help: a heading per category, then one aligned line per command with its aliases, e.g.
 * `  /new                      Start a new conversation; … (alias: /reset)`.
 */
export function helpLines(
  surface: CommandSurface,
  options: AvailabilityOptions = {},
): readonly string[] {
  const groups = commandsByCategory(surface, options);
  const width = Math.max(
    0,
    ...groups.flatMap((group) => group.commands.map((command) => commandUsage(command).length)),
  );
  const lines: string[] = [];
  for (const group of groups) {
    if (lines.length > 0) lines.push('');
    lines.push(group.category);
    for (const command of group.commands) {
      const suffix = aliasSuffix(visibleAliases(command).map((alias) => `/${alias}`));
      lines.push(`  ${commandUsage(command).padEnd(width)}  ${command.description}${suffix}`);
    }
  }
  return lines;
}
