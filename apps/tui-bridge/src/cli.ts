import { randomBytes } from 'node:crypto';
import {
  applyEnvFile,
  getProcessHermesHome,
  HermesConfigError,
  selectProfileHome,
} from '@hermes/config';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { BridgeSurface } from './bridge.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from './constants.js';
import { runBridge, startWebSocketBridge } from './run-bridge.js';
import { isLoopbackHost, WebSocketBridgeError } from './transport/websocket.js';
import { BRIDGE_VERSION } from './version.js';

/** A command-line mistake (docs/cli.md). */
const EXIT_USAGE = 2;

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65_535)
    throw new InvalidArgumentError('must be a whole number from 0 to 65535');
  return number;
}

function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0)
    throw new InvalidArgumentError('must be a number of seconds (0 or more)');
  return number;
}

export interface BridgeCliOptions {
  /** How usage and errors name the command (default `hermes-tui-bridge`). */
  readonly name?: string;
  /** The launch home when no `--profile` is given (default `HERMES_HOME`, else `~/.hermes`). */
  readonly home?: string;
}

/** A mistake is answered as every `hermes` command does: the error and a hint, not the whole help. */
function program(name: string): Command {
  return new Command(name)
    .description(
      'JSON-RPC 2.0 for Hermes terminal and desktop front ends: newline-delimited over stdio (default), or over a WebSocket with --port.',
    )
    .version(BRIDGE_VERSION)
    .option('-p, --profile <name>', 'launch profile (default: $HERMES_HOME, else ~/.hermes)')
    .addOption(
      new Option('--surface <surface>', 'who is connecting')
        .choices(['tui', 'desktop'])
        .default('tui'),
    )
    .option(
      '--port <port>',
      'serve a WebSocket on this port instead of stdio (0 = any free port)',
      port,
    )
    .option(
      '--host <host>',
      'WebSocket listen address (default 127.0.0.1; anything else needs --token)',
    )
    .addOption(
      new Option('--token <token>', 'WebSocket token (default: a random one, printed once)').env(
        'HERMES_TUI_BRIDGE_TOKEN',
      ),
    )
    .option(
      '--drain-timeout <seconds>',
      `stdio: how long running turns may finish after the front end closes its end (default ${DEFAULT_DRAIN_TIMEOUT_MS / 1000})`,
      seconds,
    )
    .addOption(
      new Option(
        '--relay-turn-wait <seconds>',
        'bot relay: how long a delivery waits for a busy Bot Chat (default 120)',
      )
        .argParser(seconds)
        .hideHelp(),
    )
    .exitOverride()
    .showHelpAfterError(`(run ${name} --help for usage)`);
}

/**
 * The bridge's command line (`hermes-tui-bridge`, `hermes tui-bridge`): parses `argv` (the
 * arguments after the command), serves until the front end closes stdio or a signal arrives
 * (SIGTERM, SIGINT, SIGHUP), and resolves with the exit code, as `hermes` commands do
 * (docs/cli.md): 0 done; 1 a failure (a profile that does not exist, a port already in use);
 * 2 a command-line mistake (an unknown or malformed option, a malformed profile name, a
 * non-loopback `--host` without a token). stdout is the protocol (stdio) or the listening line
 * (WebSocket); diagnostics go to stderr.
 */
export async function runBridgeCli(
  argv: readonly string[],
  options: BridgeCliOptions = {},
): Promise<number> {
  const name = options.name ?? 'hermes-tui-bridge';
  const command = program(name);
  try {
    command.parse([...argv], { from: 'user' });
  } catch (error) {
    // Commander printed the message (or the help / version); a mistake is a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    throw error;
  }
  const parsed = command.opts<{
    profile?: string;
    surface: BridgeSurface;
    port?: number;
    host?: string;
    token?: string;
    drainTimeout?: number;
    relayTurnWait?: number;
  }>();
  const fail = (message: string, code = 1): number => {
    process.stderr.write(`${name}: ${message}\n`);
    return code;
  };
  const botRelay =
    parsed.relayTurnWait !== undefined
      ? { botRelay: { turnWaitMs: parsed.relayTurnWait * 1000 } }
      : {};

  let home: string;
  try {
    // A named profile must exist (as for every `hermes -p`): a typo must not create one.
    home = parsed.profile
      ? selectProfileHome({ profile: parsed.profile }).home
      : (options.home ?? getProcessHermesHome());
    applyEnvFile(home);
  } catch (error) {
    // docs/cli.md: a malformed profile name is a usage mistake (2), a missing profile a failure (1).
    const usage = HermesConfigError.isInstance(error) && error.code === 'invalid_profile_name';
    return fail(error instanceof Error ? error.message : String(error), usage ? EXIT_USAGE : 1);
  }

  let stop: (() => Promise<void>) | undefined;
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    void (stop?.() ?? Promise.resolve()).catch(() => undefined).then(() => finish(0));
  };
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, shutdown);
  try {
    if (parsed.port === undefined) {
      // stdout is the protocol: every diagnostic goes to stderr.
      const running = runBridge({
        home,
        surface: parsed.surface,
        ...botRelay,
        ...(parsed.drainTimeout !== undefined
          ? { drainTimeoutMs: parsed.drainTimeout * 1000 }
          : {}),
      });
      stop = () => running.close();
      running.done.then(
        () => finish(0),
        (error: unknown) =>
          finish(fail(error instanceof Error ? (error.stack ?? error.message) : String(error))),
      );
    } else {
      const host = parsed.host ?? '127.0.0.1';
      if (!isLoopbackHost(host) && !parsed.token)
        return fail(
          `--host ${host} is not loopback: pass --token (or HERMES_TUI_BRIDGE_TOKEN)`,
          EXIT_USAGE,
        );
      const generated = parsed.token ? undefined : randomBytes(24).toString('base64url');
      try {
        const server = await startWebSocketBridge({
          home,
          surface: parsed.surface,
          ...botRelay,
          host,
          port: parsed.port,
          token: parsed.token ?? (generated as string),
        });
        stop = () => server.close();
        process.stdout.write(`${name} listening on ${server.url}\n`);
        if (generated) process.stdout.write(`token: ${generated}\n`);
      } catch (error) {
        // A token too short is a command-line mistake; a port in use or a bad address a failure.
        const usage = error instanceof WebSocketBridgeError;
        return fail(error instanceof Error ? error.message : String(error), usage ? EXIT_USAGE : 1);
      }
      // A signal that came while the server was starting stops it now that it exists.
      if (stopping) void stop().then(() => finish(0));
    }
    return await finished;
  } finally {
    for (const signal of signals) process.off(signal, shutdown);
  }
}
