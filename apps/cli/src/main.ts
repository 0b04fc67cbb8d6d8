import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { jsonRequested } from './bootstrap/profile-argv.js';
import type { CommandContext, Positional } from './context.js';
import { EXIT } from './exit-codes.js';
import { helpArguments } from './help-request.js';
import { requireNamedHome } from './home-check.js';
import { createOutput } from './output/output.js';
import { reportError } from './report-error.js';

type Options = Record<string, unknown>;
type Handler = (context: CommandContext, args: Positional, options: Options) => Promise<unknown>;

export interface MainOptions {
  readonly version: string;
  /** `HERMES_HOME` chose the home (see `CommandContext.homeNamed`). */
  readonly homeNamed?: boolean;
}

function integerOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || number < min || number > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    }
    return number;
  };
}

function secondsOption(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0) {
    throw new InvalidArgumentError('must be a number of seconds above 0');
  }
  return number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** `--port`, `--host`, `--log-level`, `--drain-timeout`: passed to the gateway as given. */
function addGatewayOptions(command: Command): Command {
  return command
    .option(
      '--port <port>',
      'listen port (default api_server.port, else 8642; 0 = any free port)',
      integerOption('--port', 0, 65_535),
    )
    .option('--host <host>', 'listen address (default api_server.host, else 127.0.0.1)')
    .addOption(new Option('--log-level <level>', 'gateway log level').choices(LOG_LEVELS))
    .option(
      '--drain-timeout <seconds>',
      'how long running turns may finish when the gateway stops (default restart_drain_timeout)',
      secondsOption,
    );
}

export async function main(argv: readonly string[], options: MainOptions): Promise<number> {
  let exitCode: number = EXIT.ok;
  let json = jsonRequested(argv);
  let debug = argv.includes('--debug');
  const program = new Command('hermes');

  /**
   * Wraps a lazily imported command body: parse → context → run → exit code or error report.
   * `readsHome`: the command reads what the home holds, so a home that is not there is refused
   * when it was named (a mistyped `HERMES_HOME`) rather than shown as empty.
   */
  const run =
    (load: () => Promise<Handler>, runOptions: { readsHome?: boolean } = {}) =>
    async (...actionArgs: unknown[]): Promise<void> => {
      const command = actionArgs.at(-1) as Command;
      const commandOptions = command.opts<Options>();
      const globals = command.optsWithGlobals<Options>();
      json = commandOptions.json === true;
      debug = globals.debug === true;
      if (globals.color === false) process.env.NO_COLOR = '1';
      const output = createOutput({ json });
      const positional = actionArgs.slice(0, -2) as Positional;
      const context: CommandContext = {
        output,
        debug,
        version: options.version,
        home: process.env.HERMES_HOME ?? '',
        homeNamed: options.homeNamed === true,
      };
      try {
        if (runOptions.readsHome) requireNamedHome(context);
        const handler = await load();
        const result = await handler(context, positional, commandOptions);
        exitCode = typeof result === 'number' ? result : EXIT.ok;
      } catch (error) {
        exitCode = reportError(error, { output, debug });
      }
    };

  // Commands that work on what the home holds (rather than create it, or describe it).
  const reads = { readsHome: true } as const;

  program
    .description(
      'Hermes: chat with your agent in the terminal, and run and manage its gateway, sessions, profiles, peers, tools and config.',
    )
    .version(options.version, '-V, --version', 'print the version')
    .option('-p, --profile <name>', 'run in this profile (sticky default: hermes profile use)')
    .option('--debug', 'show stack traces for errors')
    .option('--no-color', 'plain output even on a terminal (also NO_COLOR=1)')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 failure (not found, refused, unreachable, check failed), 2 usage, 3 timeout, 130 interrupted.\nDocs: docs/cli.md',
    );

  // chat ------------------------------------------------------------------------------------
  program
    .command('chat')
    .description('chat with the agent here, in this process (no gateway needed)')
    .option(
      '-q, --query <message>',
      'ask once, print the answer on stdout and exit ("-" reads stdin)',
    )
    .option('--resume <session>', 'continue a session by id or title')
    .option('-c, --continue', 'continue the most recent terminal session')
    .option('--wait', 'with -q: wait for background work the answer started (e.g. /review)')
    .option('--json', 'with -q: print the result as JSON instead of streaming it')
    .action(run(async () => (await import('./commands/chat/chat-command.js')).chatCommand));

  // gateway ---------------------------------------------------------------------------------
  const gateway = program
    .command('gateway')
    .description('run and manage the gateway of this profile');
  addGatewayOptions(
    gateway.command('run').description('run the gateway in the foreground (Ctrl-C stops it)'),
  ).action(run(async () => (await import('./commands/gateway/run.js')).gatewayRun));
  addGatewayOptions(
    gateway
      .command('start')
      .description('start the gateway in the background (does nothing when it already runs)'),
  )
    .option('--timeout <seconds>', 'how long to wait for it to answer (default 60)', secondsOption)
    .option('--json', 'print the result as JSON')
    .action(run(async () => (await import('./commands/gateway/start-stop.js')).gatewayStart));
  gateway
    .command('stop')
    .description('stop the background gateway (drains running turns first)')
    .option(
      '--timeout <seconds>',
      'how long to wait for it to exit (default: drain + 70)',
      secondsOption,
    )
    .option('--force', 'kill it (SIGKILL) if it has not exited by then')
    .option('--json', 'print the result as JSON')
    .action(run(async () => (await import('./commands/gateway/start-stop.js')).gatewayStop));
  addGatewayOptions(gateway.command('restart').description('stop the gateway, then start it again'))
    .option('--timeout <seconds>', 'how long to wait for each step', secondsOption)
    .option('--json', 'print the result as JSON')
    .action(run(async () => (await import('./commands/gateway/start-stop.js')).gatewayRestart));
  gateway
    .command('status')
    .description('is the gateway running? asks its control socket, then the runtime files')
    .option('--json', 'print the status as JSON')
    .action(run(async () => (await import('./commands/gateway/status.js')).gatewayStatus));
  addGatewayOptions(
    gateway
      .command('install')
      .description(
        'install a systemd user unit (Linux) or a launchd agent (macOS) for this profile',
      ),
  )
    .option('--dry-run', 'print the unit instead of writing it')
    .option('--no-start', 'write the unit only, and print the commands that enable and start it')
    .option('--force', 'overwrite a unit that differs')
    .option('--json', 'print the result as JSON')
    .action(run(async () => (await import('./commands/gateway/service.js')).gatewayInstall));
  gateway
    .command('uninstall')
    .description('stop and remove the service unit of this profile')
    .option('--json', 'print the result as JSON')
    .action(run(async () => (await import('./commands/gateway/service.js')).gatewayUninstall));

  // sessions --------------------------------------------------------------------------------
  const sessions = program.command('sessions').description('conversations in this profile');
  const sessionsModule = async () => import('./commands/sessions.js');
  sessions
    .command('list')
    .description('list recent sessions (newest activity first)')
    .option(
      '-n, --limit <n>',
      'how many (default 20, at most 200)',
      integerOption('--limit', 1, 200),
    )
    .option('--offset <n>', 'skip this many', integerOption('--offset', 0, 1_000_000))
    .option('--archived', 'only archived sessions')
    .option('--all', 'include archived and hidden sessions')
    .option('--source <source>', 'only this source (cli, api_server, telegram, …)')
    .option('--search <text>', 'only titles or ids containing this')
    .option('--json', 'print as JSON')
    .action(run(async () => (await sessionsModule()).sessionsList, reads));
  sessions
    .command('show')
    .description('show a session and its messages')
    .argument('<session>', 'id, id prefix or title')
    .option(
      '-n, --limit <n>',
      'show the last n messages (default 50; 0 = metadata only)',
      integerOption('--limit', 0, 100_000),
    )
    .option('--json', 'print as JSON')
    .action(run(async () => (await sessionsModule()).sessionsShow, reads));
  sessions
    .command('search')
    .description('search message text (words, "phrases", prefix*)')
    .argument('<query...>', 'what to look for')
    .option('-n, --limit <n>', 'how many hits (default 20)', integerOption('--limit', 1, 200))
    .option('--json', 'print as JSON')
    .action(run(async () => (await sessionsModule()).sessionsSearch, reads));
  sessions
    .command('rename')
    .description('give a session a new title')
    .argument('<session>', 'id, id prefix or title')
    .argument('<title...>', 'the new title')
    .option('--json', 'print as JSON')
    .action(run(async () => (await sessionsModule()).sessionsRename, reads));
  for (const [name, description] of [
    ['archive', 'archive a session (and its compression lineage)'],
    ['unarchive', 'bring an archived session back'],
    ['hide', 'hide a session from listings'],
    ['unhide', 'show a hidden session again'],
  ] as const) {
    sessions
      .command(name)
      .description(description)
      .argument('<session>', 'id, id prefix or title')
      .option('--json', 'print as JSON')
      .action(run(async () => (await sessionsModule()).sessionsFlag(name), reads));
  }
  sessions
    .command('delete')
    .description('delete a session and its messages for good')
    .argument('<session>', 'id, id prefix or title')
    .option('--cascade', 'delete the whole compressed conversation the session is part of')
    .option('-y, --yes', 'do not ask (required when not on a terminal)')
    .option('--json', 'print as JSON')
    .action(run(async () => (await sessionsModule()).sessionsDelete, reads));
  sessions
    .command('export')
    .description('export a session as JSON lines or Markdown')
    .argument('<session>', 'id, id prefix or title')
    .addOption(
      new Option('--format <format>', 'output format').choices(['jsonl', 'md']).default('jsonl'),
    )
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(run(async () => (await sessionsModule()).sessionsExport, reads));

  // peer ------------------------------------------------------------------------------------
  const peer = program.command('peer').description('other Hermes installs you can message');
  const peerModule = async () => import('./commands/peer.js');
  peer
    .command('add')
    .description('register a peer (its key goes to .env, never config.yaml)')
    .argument('<name>', 'a short name: a-z, 0-9, "-", "_"')
    .argument('<url>', "the peer's API server, e.g. http://host:8642")
    .option('--key <key>', "the peer's API key (API_SERVER_KEY there)")
    .addOption(new Option('--key-stdin', 'read the key from stdin').conflicts('key'))
    .option('--json', 'print as JSON')
    .action(run(async () => (await peerModule()).peerAdd));
  peer
    .command('list')
    .description('list registered peers')
    .option('--json', 'print as JSON')
    .action(run(async () => (await peerModule()).peerList, reads));
  peer
    .command('remove')
    .description('forget a peer (and its key)')
    .argument('<name>', 'the peer')
    .option('--json', 'print as JSON')
    .action(run(async () => (await peerModule()).peerRemove, reads));
  peer
    .command('dm')
    .description("send a message to a peer's Bot Chat and print the reply")
    .argument('<target>', '<peer> or <peer>/<profile>')
    .argument('<message...>', 'the message')
    .option('--author <name>', 'who is writing (default $HERMES_PEER_AUTHOR)')
    .option('--timeout <seconds>', 'how long to wait for the reply (default 600)', secondsOption)
    .option('--json', 'print as JSON')
    .action(run(async () => (await peerModule()).peerDm, reads));

  // profile ---------------------------------------------------------------------------------
  const profile = program
    .command('profile')
    .description('profiles: separate homes for separate agents');
  const profileModule = async () => import('./commands/profile.js');
  profile
    .command('list')
    .description('list profiles')
    .option('--json', 'print as JSON')
    .action(run(async () => (await profileModule()).profileList));
  profile
    .command('create')
    .description('create a profile')
    .argument('<name>', 'a-z, 0-9, "-", "_" (up to 64)')
    .option('--use', 'make it the default afterwards')
    .option('--json', 'print as JSON')
    .action(run(async () => (await profileModule()).profileCreate));
  profile
    .command('use')
    .description('make a profile the default for every hermes command ("default" to go back)')
    .argument('<name>', 'the profile')
    .option('--json', 'print as JSON')
    .action(run(async () => (await profileModule()).profileUse));
  profile
    .command('show')
    .description('show a profile (default: the one in use)')
    .argument('[name]', 'the profile')
    .option('--json', 'print as JSON')
    .action(run(async () => (await profileModule()).profileShow));
  profile
    .command('delete')
    .description('delete a profile and everything in it')
    .argument('<name>', 'the profile')
    .option('-y, --yes', 'do not ask (required when not on a terminal)')
    .option('--json', 'print as JSON')
    .action(run(async () => (await profileModule()).profileDelete));

  // tools -----------------------------------------------------------------------------------
  const tools = program.command('tools').description('which toolsets the agent may use');
  const toolsModule = async () => import('./commands/tools.js');
  const platformOption = () =>
    new Option('--platform <name>', 'the surface: cli, api_server, tui, telegram, …').default(
      'cli',
    );
  tools
    .command('list')
    .description('list toolsets and whether they are enabled')
    .addOption(platformOption())
    .option('--json', 'print as JSON')
    .action(run(async () => (await toolsModule()).toolsList, reads));
  tools
    .command('enable')
    .description('enable toolsets for a platform')
    .argument('<toolset...>', 'toolset names (see hermes tools list)')
    .addOption(platformOption())
    .option('--json', 'print as JSON')
    .action(run(async () => (await toolsModule()).toolsEdit('enable')));
  tools
    .command('disable')
    .description('disable toolsets for a platform')
    .argument('<toolset...>', 'toolset names')
    .addOption(platformOption())
    .option('--json', 'print as JSON')
    .action(run(async () => (await toolsModule()).toolsEdit('disable')));

  // config ----------------------------------------------------------------------------------
  const config = program.command('config').description('config.yaml and .env of this profile');
  const configModule = async () => import('./commands/config.js');
  config
    .command('get')
    .description('print a setting (or the whole config.yaml)')
    .argument('[key]', 'dotted key, e.g. model.default')
    .option('--reveal', 'print secret values instead of masking them')
    .option('--json', 'print as JSON')
    .action(run(async () => (await configModule()).configGet, reads));
  config
    .command('set')
    .description('change a setting (comments and other keys are kept); UPPER_CASE names go to .env')
    .argument('<key>', 'dotted key (model.default) or an environment name (OPENAI_API_KEY)')
    .argument('<value>', 'the value (YAML: 30, true, [a, b]; anything else is text)')
    .option('--json', 'print as JSON')
    .action(run(async () => (await configModule()).configSet));
  config
    .command('path')
    .description('print where config.yaml, .env and state.db are')
    .option('--json', 'print as JSON')
    .action(run(async () => (await configModule()).configPath));
  config
    .command('edit')
    .description('open config.yaml in $VISUAL / $EDITOR and check it afterwards')
    .action(run(async () => (await configModule()).configEdit));

  // tui-bridge ------------------------------------------------------------------------------
  program
    .command('tui-bridge')
    .description(
      'serve JSON-RPC to a terminal or desktop front end over stdio (or a WebSocket with --port); its options: hermes tui-bridge --help',
    )
    .argument(
      '[options...]',
      'the bridge options (--surface, --port, --host, --token, --drain-timeout)',
    )
    // The bridge parses its own options (one implementation with the hermes-tui-bridge bin).
    .helpOption(false)
    .allowUnknownOption()
    .action(run(async () => (await import('./commands/tui-bridge.js')).tuiBridgeCommand));

  // update, doctor --------------------------------------------------------------------------
  program
    .command('update')
    .description('plan an update: which gateways run, on which code, and how each restarts')
    .option('--plan', 'show the plan (the only mode so far)')
    .option('--json', 'print as JSON')
    .action(run(async () => (await import('./commands/update.js')).updateCommand));
  program
    .command('doctor')
    .description('check this profile: home, config, model, state.db, gateway, service unit')
    .option('--fix', 'repair what is safe to repair')
    .option('--offline', 'skip the model reachability check')
    .option('--json', 'print the findings as JSON')
    .action(run(async () => (await import('./commands/doctor.js')).doctorCommand));

  const args = helpArguments(program, argv);
  const meaningful = args.filter((arg) => arg !== '--debug' && arg !== '--no-color');
  if (meaningful.length === 0) {
    if (process.stdin.isTTY && process.stdout.isTTY) {
      args.push('chat');
    } else {
      process.stderr.write(program.helpInformation());
      return EXIT.usage;
    }
  }
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help / version) already.
      if (error.exitCode === 0) return EXIT.ok;
      // A usage mistake under --json still answers with the error document (commander printed
      // the line on stderr); help shown for a missing subcommand has no message to give.
      if (json && error.code !== 'commander.help' && error.code !== 'commander.helpDisplayed') {
        createOutput({ json }).printJson({
          error: {
            code: 'usage',
            message: error.message.replace(/^error: /, ''),
            hint: 'Run with --help for usage',
          },
        });
      }
      return EXIT.usage;
    }
    return reportError(error, { output: createOutput({ json }), debug });
  }
  return exitCode;
}
