import { statSync } from 'node:fs';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';

/**
 * Refuses a home the user named with `HERMES_HOME` that is not there, for a command that reads
 * what a home holds: a mistyped path must neither read as an empty home (no sessions, no peers)
 * nor be created by a command that only looks. `-p` names only existing profiles (the bootstrap
 * checks), and the default home before its first use is simply empty.
 */
export function requireNamedHome(context: CommandContext): void {
  if (!context.homeNamed) return;
  let reason: string;
  try {
    if (statSync(context.home).isDirectory()) return;
    reason = 'it is not a folder';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Anything else (no permission, …) is for the command to meet and report.
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return;
    reason = 'it does not exist';
  }
  throw new CliError({
    code: 'home_not_found',
    message: `no Hermes home at ${context.home} (HERMES_HOME): ${reason}`,
    hint: 'Check HERMES_HOME, or unset it for the default home; a command that writes (hermes config set, hermes chat) creates it',
  });
}
