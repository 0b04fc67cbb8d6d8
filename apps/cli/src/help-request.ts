import type { Command } from 'commander';

const HELP_FLAGS: ReadonlySet<string> = new Set(['--help', '-h']);

function subcommand(parent: Command, word: string): Command | undefined {
  return parent.commands.find(
    (command) => command.name() === word || command.aliases().includes(word),
  );
}

/**
 * The arguments to parse for a request for help. `hermes help a b`, `hermes a help b` and
 * `hermes a b --help` ask for the help of the command `a b`; commander answers a word there that
 * names no command with the whole help of its parent (on stderr and exit 2 for `help`, exit 0 for
 * `--help`). We answer it as `hermes a b` does instead: the unknown command, a suggestion, exit 2.
 * `hermes help a b` of a command that exists becomes `hermes a b --help`. Anything else is
 * returned unchanged.
 */
export function helpArguments(program: Command, args: readonly string[]): string[] {
  let current = program;
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] as string;
    if (word === '--') break;
    if (word.startsWith('-')) continue;
    // A command without subcommands parses the rest itself (its options may take values).
    if (current.commands.length === 0) break;
    if (word === 'help') {
      return helpCommandArguments(current, args.slice(0, index), args.slice(index + 1));
    }
    const next = subcommand(current, word);
    if (!next) {
      // `hermes nosuch --help`: the unknown command, not the help of the command above it.
      return args.some((arg) => HELP_FLAGS.has(arg))
        ? args.filter((arg) => !HELP_FLAGS.has(arg))
        : [...args];
    }
    current = next;
  }
  return [...args];
}

/** `<before> help <after…>`: the help of the command `<after…>` names under `<before>`'s. */
function helpCommandArguments(
  parent: Command,
  before: readonly string[],
  after: readonly string[],
): string[] {
  const options = after.filter((arg) => arg.startsWith('-') && !HELP_FLAGS.has(arg));
  const path: string[] = [];
  let current = parent;
  for (const word of after) {
    if (word.startsWith('-')) continue;
    // `help help`, or more words than commands: the help of what was named so far.
    if (word === 'help' || current.commands.length === 0) break;
    path.push(word);
    const next = subcommand(current, word);
    // Parsed without --help, the unknown word is reported as such.
    if (!next) return [...before, ...path, ...options];
    current = next;
  }
  return [...before, ...path, ...options, '--help'];
}
