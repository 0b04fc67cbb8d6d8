/**
 * The `-p/--profile` pre-parse. It runs in the bootstrap, before any module that reads the home is
 * imported, so it has no dependencies and only edits the argument list.
 */

/** Options whose value is free text: the token after them is never read as `-p`. */
const FREE_TEXT_OPTIONS = new Set(['-q', '--query', '--author', '--instructions']);

export type ProfileArgv =
  | { readonly ok: true; readonly profile: string | undefined; readonly argv: string[] }
  | { readonly ok: false; readonly message: string };

/**
 * Takes `-p <name>`, `-p<name>`, `-p=<name>`, `--profile <name>` and `--profile=<name>` out of
 * `argv` (anywhere before a `--`), and returns the profile and the remaining arguments. Given
 * twice with different names, or without a name, it is a usage error.
 */
export function extractProfileOption(argv: readonly string[]): ProfileArgv {
  const rest: string[] = [];
  let profile: string | undefined;
  const take = (value: string | undefined): string | undefined =>
    value === undefined || value === '' || value.startsWith('-') ? undefined : value;
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (token === '--') {
      rest.push(...argv.slice(index));
      break;
    }
    if (FREE_TEXT_OPTIONS.has(token)) {
      rest.push(token);
      if (index + 1 < argv.length) rest.push(argv[index + 1] as string);
      index += 1;
      continue;
    }
    let value: string | undefined;
    let matched = false;
    if (token === '-p' || token === '--profile') {
      matched = true;
      value = take(argv[index + 1]);
      if (value !== undefined) index += 1;
    } else if (token.startsWith('--profile=')) {
      matched = true;
      value = take(token.slice('--profile='.length));
    } else if (token.startsWith('-p=')) {
      matched = true;
      value = take(token.slice(3));
    } else if (token.startsWith('-p') && token.length > 2 && !token.startsWith('--')) {
      matched = true;
      value = take(token.slice(2));
    }
    if (!matched) {
      rest.push(token);
      continue;
    }
    if (value === undefined) {
      return { ok: false, message: "option '-p, --profile <name>' needs a profile name" };
    }
    if (profile !== undefined && profile !== value) {
      return {
        ok: false,
        message: `option '-p, --profile' given twice ("${profile}" and "${value}"); give it once`,
      };
    }
    profile = value;
  }
  return { ok: true, profile, argv: rest };
}

/**
 * Whether `--json` was given as an option: before any `--`, and not as the text of a free-text
 * option (`-q --json` asks about "--json"). The errors printed before commander has parsed the
 * command line (a bad `-p`, a usage mistake) use it to answer in JSON too.
 */
export function jsonRequested(argv: readonly string[]): boolean {
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (token === '--') return false;
    if (token === '--json') return true;
    if (FREE_TEXT_OPTIONS.has(token)) index += 1;
  }
  return false;
}
