#!/usr/bin/env node
// The `hermes` bootstrap. It must stay tiny: `hermes --version` is answered here without loading
// anything, and `-p/--profile` is applied to HERMES_HOME before any module that reads the home is
// imported (the reference's rule). Everything else lives in main.ts, loaded on demand.
import { readFileSync } from 'node:fs';
import { extractProfileOption, jsonRequested } from './bootstrap/profile-argv.js';

const EXIT_USAGE = 2;
const EXIT_FAILURE = 1;

function version(): string {
  try {
    const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
    const value = (JSON.parse(text) as { version?: unknown }).version;
    return typeof value === 'string' ? value : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** A failure before any command ran: one line on stderr, and under `--json` the error document. */
function fail(error: { code: string; message: string; hint?: string }, exitCode: number): never {
  process.stderr.write(`hermes: ${error.message}\n`);
  if (error.hint) process.stderr.write(`  ${error.hint}\n`);
  if (jsonRequested(process.argv.slice(2))) {
    const document = { error };
    process.stdout.write(
      `${process.stdout.isTTY ? JSON.stringify(document, null, 2) : JSON.stringify(document)}\n`,
    );
  }
  process.exit(exitCode);
}

// A failure nothing caught (a module that cannot load, a rejected promise) still ends as one line
// and exit 1; --debug adds the stack.
const debug = process.argv.includes('--debug');
const crash = (error: unknown) => {
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  process.stderr.write(`hermes: unexpected error: ${message}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  else
    process.stderr.write(
      '  Run again with --debug to see where it happened, and report it if it persists\n',
    );
  process.exit(EXIT_FAILURE);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${version()}\n`);
  process.exit(0);
}

const parsed = extractProfileOption(args);
if (!parsed.ok) {
  fail({ code: 'usage', message: parsed.message, hint: 'Run with --help for usage' }, EXIT_USAGE);
}

// Help reads no home: skip the profile machinery unless a profile was named explicitly.
const helpOnly =
  parsed.profile === undefined &&
  (parsed.argv.length === 0
    ? !process.stdin.isTTY || !process.stdout.isTTY
    : parsed.argv[0] === 'help' || parsed.argv.includes('--help') || parsed.argv.includes('-h'));

let profileWarning: string | undefined;
// HERMES_HOME chose the home: a folder of the user's choosing, which may be mistyped (a profile
// named with -p or `profile use` must exist; the default ~/.hermes is empty before its first use).
let homeNamed = false;
if (!helpOnly) {
  const named = process.env.HERMES_HOME?.trim();
  const config: typeof import('./select-home.js') = await import(
    new URL('./select-home.js', import.meta.url).href
  );
  try {
    const selection = config.selectProfileHome({ profile: parsed.profile });
    process.env.HERMES_HOME = selection.home;
    profileWarning = selection.warning;
    homeNamed =
      selection.source === 'env' ||
      (selection.source === 'default' &&
        !!named &&
        selection.home !== config.getPlatformDefaultHome());
  } catch (error) {
    if (!config.HermesConfigError.isInstance(error)) throw error;
    fail(
      { code: error.code, message: error.message },
      error.code === 'invalid_profile_name' ? EXIT_USAGE : EXIT_FAILURE,
    );
  }
}
if (profileWarning) process.stderr.write(`hermes: warning: ${profileWarning}\n`);

process.argv = [process.argv[0] as string, process.argv[1] as string, ...parsed.argv];
// `hermes gateway status [--json]` (what scripts poll) skips the command tree.
const statusFlags = new Set(['--json', '--debug', '--no-color']);
const [first, second, ...flags] = parsed.argv;
if (first === 'gateway' && second === 'status' && flags.every((flag) => statusFlags.has(flag))) {
  if (flags.includes('--no-color')) process.env.NO_COLOR = '1';
  const { runGatewayStatus }: typeof import('./fast-status.js') = await import(
    new URL('./fast-status.js', import.meta.url).href
  );
  process.exitCode = await runGatewayStatus({
    json: flags.includes('--json'),
    debug: flags.includes('--debug'),
    version: version(),
    homeNamed,
  });
} else {
  const { main } = await import('./main.js');
  process.exitCode = await main(process.argv.slice(2), { version: version(), homeNamed });
}
