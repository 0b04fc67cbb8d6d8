import { EXIT } from './exit-codes.js';
import type { Output } from './output/output.js';

/** What every command gets: how to print, the home it runs in, and the global flags. */
export interface CommandContext {
  readonly output: Output;
  readonly debug: boolean;
  readonly version: string;
  /** The process home: `HERMES_HOME` as the bootstrap set it (profile applied). */
  readonly home: string;
  /**
   * `HERMES_HOME` chose the home (a folder of the user's choosing, not `-p`, the sticky profile or
   * the default `~/.hermes`): it may be mistyped.
   */
  readonly homeNamed: boolean;
}

/** A command's body: resolves to an exit code (default 0). */
export type CommandResult = Promise<number | undefined> | Promise<void>;

export { EXIT };

/** Positional arguments as commander gives them (a variadic one is an array). */
export type Positional = readonly (string | string[] | undefined)[];

/** Options as commander gives them. */
export type CommandOptions = Readonly<Record<string, unknown>>;

/** The text of positional `index` (a variadic argument joined with spaces). */
export function textArg(args: Positional, index: number): string {
  const value = args[index];
  if (Array.isArray(value)) return value.join(' ');
  return value ?? '';
}

/** The words of a variadic positional. */
export function listArg(args: Positional, index: number): string[] {
  const value = args[index];
  if (Array.isArray(value)) return value;
  return value === undefined ? [] : [value];
}
