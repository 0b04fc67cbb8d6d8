/**
 * Decides whether a live process's command line is a gateway's. A PID record can outlive its
 * gateway and its PID be reused: when the start-time fingerprint cannot tell (a legacy bare-integer
 * record, a record without a start time, a platform without start ticks), the command line is
 * what stops an unrelated process from holding a home forever.
 */
export type GatewayCommandLinePredicate = (argv: readonly string[]) => boolean;

/** Subcommands of `hermes gateway` that run a gateway in the foreground. */
const GATEWAY_RUN_SUBCOMMANDS: ReadonlySet<string> = new Set(['run', 'restart']);

/** Script extensions a bin or entry file may carry (`.exe`/`.cmd` for Windows shims). */
const ENTRY_EXTENSION = String.raw`(?:\.(?:[cm]?js|[cm]?ts|exe|cmd))?`;

/** The gateway's own bin, `hermes-gateway` (npm links it as `node_modules/.bin/hermes-gateway`). */
const GATEWAY_BIN = new RegExp(`^hermes-gateway${ENTRY_EXTENSION}$`);

/** The `hermes` CLI's bin. */
const CLI_BIN = new RegExp(`^hermes${ENTRY_EXTENSION}$`);

/**
 * The apps' entry files, as pnpm's shims and a checkout run them: `apps/gateway/dist/bin.js`,
 * `node_modules/@hermes/gateway/dist/bin.js` (and `src/*.ts` under tsx).
 */
function appEntry(app: string): RegExp {
  return new RegExp(
    String.raw`(?:^|/)(?:apps|@hermes)/${app}/(?:dist|src)/(?:bin|main|index|cli)\.[cm]?[jt]s$`,
  );
}
const GATEWAY_APP_ENTRY = appEntry('gateway');
const CLI_APP_ENTRY = appEntry('cli');

/** The reference (Python) gateway's forms, so a home it still holds is recognised. */
const PYTHON_GATEWAY_ENTRY = /(?:^|\/)gateway\/run\.py$/;
const PYTHON_CLI_ENTRY = /(?:^|\/)hermes_cli\/main\.py$/;

function normalizeToken(token: string): string {
  return token.toLowerCase().replaceAll('\\', '/');
}

function baseName(token: string): string {
  return token.slice(token.lastIndexOf('/') + 1);
}

type Entry = 'gateway' | 'cli';

function entryKind(token: string): Entry | null {
  const name = baseName(token);
  if (GATEWAY_BIN.test(name) || GATEWAY_APP_ENTRY.test(token) || PYTHON_GATEWAY_ENTRY.test(token)) {
    return 'gateway';
  }
  if (
    CLI_BIN.test(name) ||
    CLI_APP_ENTRY.test(token) ||
    PYTHON_CLI_ENTRY.test(token) ||
    token === 'hermes_cli.main'
  ) {
    return 'cli';
  }
  return null;
}

/** The CLI arguments without `-p X`, `--profile X`, `-p=X` and `--profile=X`. */
function withoutProfileFlags(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '-p' || arg === '--profile') {
      index++;
      continue;
    }
    if (arg.startsWith('-p=') || arg.startsWith('--profile=')) continue;
    kept.push(arg);
  }
  return kept;
}

/**
 * What a gateway command line runs: `run` for the `hermes-gateway` bin (or the gateway app's entry
 * file), the subcommand for `hermes [-p X] gateway <subcommand>` (a bare `hermes gateway` runs
 * one), or `null` when the command line is not a gateway's at all. Tokens are compared
 * case-insensitively with `\` read as `/`.
 */
export function gatewaySubcommandOf(argv: readonly string[]): string | null {
  const tokens = argv.map(normalizeToken);
  for (let index = 0; index < tokens.length; index++) {
    const kind = entryKind(tokens[index] as string);
    if (kind === 'gateway') return 'run';
    if (kind !== 'cli') continue;
    const positional = withoutProfileFlags(tokens.slice(index + 1)).filter(
      (token) => !token.startsWith('-'),
    );
    if (positional[0] !== 'gateway') return null;
    return positional[1] ?? 'run';
  }
  return null;
}

/**
 * The default test of a live process's command line: a gateway is `hermes-gateway …` (the bin of
 * `@hermes/gateway`, directly or as `node …/hermes-gateway` / `node …/gateway/dist/bin.js`) or
 * `hermes [-p <profile>] gateway run|restart …` (the `hermes` CLI, directly or through node).
 * `hermes gateway status` and every other command are not. A program that embeds the gateway
 * under another command line passes its own predicate to the claim and liveness functions.
 */
export function isGatewayCommandLine(argv: readonly string[]): boolean {
  const subcommand = gatewaySubcommandOf(argv);
  return subcommand !== null && GATEWAY_RUN_SUBCOMMANDS.has(subcommand);
}

/**
 * Splits a Windows command line (one string) into arguments: whitespace separates them except
 * inside double quotes, and `\"` is a literal quote (enough for telling entry files apart).
 */
export function splitWindowsCommandLine(commandLine: string): string[] {
  const args: string[] = [];
  let current = '';
  let quoted = false;
  let started = false;
  for (let index = 0; index < commandLine.length; index++) {
    const char = commandLine[index] as string;
    if (char === '\\' && commandLine[index + 1] === '"') {
      current += '"';
      started = true;
      index++;
    } else if (char === '"') {
      quoted = !quoted;
      started = true;
    } else if (!quoted && /\s/.test(char)) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}
