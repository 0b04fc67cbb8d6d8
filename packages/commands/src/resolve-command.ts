import type { CommandDef } from './command-def.js';
import { COMMAND_REGISTRY } from './registry.js';

/** @internal Exported for tests. */
export function buildLookup(registry: readonly CommandDef[]): ReadonlyMap<string, CommandDef> {
  const lookup = new Map<string, CommandDef>();
  for (const command of registry)
    for (const name of [command.name, ...command.aliases])
      if (!lookup.has(name)) lookup.set(name, command);
  return lookup;
}

/** Every canonical name and alias → its command. */
export const COMMAND_LOOKUP: ReadonlyMap<string, CommandDef> = buildLookup(COMMAND_REGISTRY);

/**
 * The command a typed name means: case-insensitive, a leading `/` optional, aliases included. An
 * underscore spelling of a hyphenated name resolves too, because Telegram menus cannot show
 * hyphens. Returns `null` for anything else.
 */
export function resolveCommand(name: string): CommandDef | null {
  return resolveIn(COMMAND_LOOKUP, name);
}

/** @internal Exported for tests. */
export function resolveIn(
  lookup: ReadonlyMap<string, CommandDef>,
  name: string,
): CommandDef | null {
  const key = name.trim().replace(/^\//, '').toLowerCase();
  if (key.length === 0) return null;
  return lookup.get(key) ?? lookup.get(key.replaceAll('_', '-')) ?? null;
}

/** The first `a|b|c` alternatives list in a hint, e.g. `[off|new|all]` → `off`, `new`, `all`. */
/** @internal Exported for tests. */
export function subcommandsFromHint(argsHint: string): readonly string[] {
  const match = /([A-Za-z0-9_-]+(?:\|[A-Za-z0-9_-]+)+)/.exec(argsHint);
  return match?.[1] === undefined ? [] : match[1].split('|');
}

function buildSubcommands(
  registry: readonly CommandDef[],
): Readonly<Record<string, readonly string[]>> {
  const table: Record<string, readonly string[]> = {};
  for (const command of registry) {
    const subcommands =
      command.subcommands.length > 0 ? command.subcommands : subcommandsFromHint(command.argsHint);
    if (subcommands.length > 0) table[`/${command.name}`] = Object.freeze([...subcommands]);
  }
  return Object.freeze(table);
}

/**
 * Tab-completion table: `"/cmd"` → its explicit subcommands, otherwise the first `a|b|c` pattern
 * found in its hint. Commands without either are absent.
 */
export const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> =
  buildSubcommands(COMMAND_REGISTRY);
