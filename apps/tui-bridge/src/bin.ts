#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import {
  applyEnvFile,
  getDefaultHermesRoot,
  getProcessHermesHome,
  getProfileDir,
} from '@hermes/config';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { BridgeSurface } from './bridge.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from './constants.js';
import { runBridge, startWebSocketBridge } from './run-bridge.js';
import { isLoopbackHost } from './transport/websocket.js';
import { BRIDGE_VERSION } from './version.js';

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

const program = new Command('hermes-tui-bridge')
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
  .showHelpAfterError();

program.parse();
const options = program.opts<{
  profile?: string;
  surface: BridgeSurface;
  port?: number;
  host?: string;
  token?: string;
  drainTimeout?: number;
  relayTurnWait?: number;
}>();
const botRelay =
  options.relayTurnWait !== undefined
    ? { botRelay: { turnWaitMs: options.relayTurnWait * 1000 } }
    : {};

function fail(message: string, code = 1): never {
  process.stderr.write(`hermes-tui-bridge: ${message}\n`);
  process.exit(code);
}

let home: string;
try {
  home = options.profile
    ? getProfileDir(options.profile, getDefaultHermesRoot())
    : getProcessHermesHome();
  applyEnvFile(home);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error), 2);
}

let stop: (() => Promise<void>) | undefined;
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stop?.().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
process.on('SIGHUP', () => void shutdown());

if (options.port === undefined) {
  // stdout is the protocol: every diagnostic goes to stderr.
  const running = runBridge({
    home,
    surface: options.surface,
    ...botRelay,
    ...(options.drainTimeout !== undefined ? { drainTimeoutMs: options.drainTimeout * 1000 } : {}),
  });
  stop = () => running.close();
  running.done.then(
    () => process.exit(0),
    (error: unknown) =>
      fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
  );
} else {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.token)
    fail(`--host ${host} is not loopback: pass --token (or HERMES_TUI_BRIDGE_TOKEN)`, 2);
  const generated = options.token ? undefined : randomBytes(24).toString('base64url');
  try {
    const server = await startWebSocketBridge({
      home,
      surface: options.surface,
      ...botRelay,
      host,
      port: options.port,
      token: options.token ?? (generated as string),
    });
    stop = () => server.close();
    process.stdout.write(`hermes-tui-bridge listening on ${server.url}\n`);
    if (generated) process.stdout.write(`token: ${generated}\n`);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
}
