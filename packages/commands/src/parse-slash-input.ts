import type { CommandDef } from './command-def.js';
import { resolveCommand } from './resolve-command.js';

/** What a line typed into any surface means, as far as slash commands go. */
export type SlashInput =
  /** A registered command: `name` is the lower-cased name as typed (an alias stays an alias). */
  | {
      readonly kind: 'command';
      readonly command: CommandDef;
      readonly name: string;
      readonly args: string;
    }
  /** Looks like a command but none is registered under that name. */
  | { readonly kind: 'unknown'; readonly name: string; readonly args: string }
  /** A bare `/` (or `/` followed by spaces): a command without a name. */
  | { readonly kind: 'empty' }
  /** Ordinary text for the agent — including text that merely starts with `/`, such as a path. */
  | { readonly kind: 'not_command' };

const NAME = /^[a-z0-9][a-z0-9_-]*$/;
const BOT_SUFFIX = /^([^@]+)@[a-z0-9_]+$/;

/**
 * Parses one input line the way every surface must: leading whitespace is ignored, the name is
 * case-insensitive and ends at the first whitespace, a Telegram-style `@botname` suffix is dropped
 * (`/help@MyBot`), and the arguments are the rest with outer whitespace trimmed (inner newlines
 * kept). A word that cannot be a command name (`/etc/hosts`, `//`) means ordinary text.
 */
export function parseSlashInput(line: string): SlashInput {
  const text = line.trimStart();
  if (!text.startsWith('/')) return { kind: 'not_command' };
  const match = /^\/(\S*)([\s\S]*)$/.exec(text);
  const word = (match?.[1] ?? '').toLowerCase();
  if (word.length === 0) return { kind: 'empty' };
  const name = BOT_SUFFIX.exec(word)?.[1] ?? word;
  if (!NAME.test(name)) return { kind: 'not_command' };
  const args = (match?.[2] ?? '').trim();
  const command = resolveCommand(name);
  return command === null
    ? { kind: 'unknown', name, args }
    : { kind: 'command', command, name, args };
}
