import type { ArgumentMode } from './command-def.js';

/** Hint fragments that say "free text goes here" even when a command also has subcommands. */
export const PROSE_MARKERS: readonly string[] = Object.freeze([
  '<prompt>',
  '[text',
  'instructions',
  '[interval]',
  '<what',
]);

/**
 * The desktop composer's argument mode: an explicit value wins; with subcommands it is `mixed` when
 * the hint also invites prose, otherwise `options`; without subcommands it is `text` when there is
 * any hint, otherwise `null` (the command takes no arguments).
 */
export function inferArgumentMode(command: {
  readonly argumentMode: ArgumentMode | null;
  readonly subcommands: readonly string[];
  readonly argsHint: string;
}): ArgumentMode | null {
  if (command.argumentMode !== null) return command.argumentMode;
  if (command.subcommands.length > 0)
    return PROSE_MARKERS.some((marker) => command.argsHint.includes(marker)) ? 'mixed' : 'options';
  return command.argsHint.length > 0 ? 'text' : null;
}
