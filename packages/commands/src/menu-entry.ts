/** A command contributed by a plugin or a skill, for platform menus. */
export interface MenuEntry {
  readonly name: string;
  readonly description: string;
  readonly argsHint?: string | undefined;
}

/** `text` cut to `max` characters, the last one replaced by `…` when anything was cut. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).trimEnd()}…`;
}
