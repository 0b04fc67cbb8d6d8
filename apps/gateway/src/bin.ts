#!/usr/bin/env node
import { GATEWAY_EXIT_CODES } from '@hermes/control-socket';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  GatewayStartError,
  type RunningGateway,
  type StopOptions,
  startGateway,
} from './gateway.js';
import { isTransientNetworkError } from './lifecycle/transient-errors.js';
import { LOG_LEVELS, type LogLevel } from './logging/logger.js';
import { GATEWAY_VERSION } from './version.js';

// Numbers are written in decimal: `Number()` alone would also take `0x10`, `1e1` and `+5`.
const WHOLE_NUMBER = /^[0-9]+$/;
const DECIMAL_NUMBER = /^[0-9]+(?:\.[0-9]+)?$/;

function integer(name: string, min: number, max: number) {
  return (value: string) => {
    const number = Number(value);
    if (!WHOLE_NUMBER.test(value) || number < min || number > max)
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    return number;
  };
}

function seconds(value: string): number {
  if (!DECIMAL_NUMBER.test(value))
    throw new InvalidArgumentError('must be a number of seconds (0 or more), such as 30 or 0.5');
  return Number(value);
}

const program = new Command('hermes-gateway')
  .description(
    'Run the Hermes gateway: the OpenAI-compatible API server, the sessions API and the control socket for $HERMES_HOME (default ~/.hermes).',
  )
  .version(GATEWAY_VERSION)
  .option(
    '--port <port>',
    'listen port (default api_server.port / API_SERVER_PORT / 8642; 0 = any free port)',
    integer('--port', 0, 65_535),
  )
  .option('--host <host>', 'listen address (default api_server.host / API_SERVER_HOST / 127.0.0.1)')
  .addOption(
    new Option('--log-level <level>', 'log level')
      .choices(LOG_LEVELS)
      .env('HERMES_LOG_LEVEL')
      .default('info'),
  )
  .option(
    '--drain-timeout <seconds>',
    'how long running turns may finish on SIGTERM/SIGINT (default restart_drain_timeout, 30)',
    seconds,
  )
  .addOption(
    new Option(
      '--time-scale <factor>',
      'run supervision time (reconnect backoff, retries, housekeeping) this many times faster (tests)',
    )
      .argParser((value: string) => {
        const factor = Number(value);
        if (!(factor > 0 && factor <= 1))
          throw new InvalidArgumentError('must be a number in (0, 1]');
        return factor;
      })
      .hideHelp(),
  )
  .addOption(
    new Option(
      '--sse-keepalive <seconds>',
      'keep-alive comment period of every event stream (default 10 s for session chat, 30 s for the OpenAI streams)',
    )
      .argParser(seconds)
      .hideHelp(),
  )
  .showHelpAfterError();

program.parse();
const options = program.opts<{
  port?: number;
  host?: string;
  logLevel: LogLevel;
  drainTimeout?: number;
  sseKeepalive?: number;
  timeScale?: number;
}>();

let gateway: RunningGateway | undefined;
let stopping = false;
/** A stop asked for while the gateway was still starting: run once it is up. */
let deferred: { reason: string; options: StopOptions } | undefined;

async function shutdown(reason: string, options: StopOptions = {}): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (!gateway) {
    deferred = { reason, options };
    return;
  }
  const exitCode = await gateway.stop(reason, options).catch(() => GATEWAY_EXIT_CODES.failure);
  process.exit(exitCode);
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGHUP', () => void shutdown('SIGHUP'));
// A restart for the service manager: drain, leave .restart_pending.json, exit 75.
process.on('SIGUSR1', () => void shutdown('SIGUSR1', { restart: true }));
process.on('unhandledRejection', (reason) => {
  gateway?.logger.error({ err: reason }, 'unhandled promise rejection');
});
process.on('uncaughtException', (error) => {
  if (isTransientNetworkError(error)) {
    gateway?.logger.warn({ err: error }, 'transient network error ignored');
    return;
  }
  if (gateway) gateway.logger.fatal({ err: error }, 'uncaught exception; stopping');
  else process.stderr.write(`hermes-gateway: ${error.stack ?? error.message}\n`);
  if (!gateway) process.exit(GATEWAY_EXIT_CODES.failure);
  void shutdown('uncaught_exception', { exitCode: GATEWAY_EXIT_CODES.failure });
});

try {
  const keepalive =
    options.sseKeepalive !== undefined
      ? { chatStreamMs: options.sseKeepalive * 1000, apiStreamMs: options.sseKeepalive * 1000 }
      : undefined;
  gateway = await startGateway({
    port: options.port,
    host: options.host,
    logLevel: options.logLevel,
    drainTimeoutS: options.drainTimeout,
    timeScale: options.timeScale,
    onExitRequested: (code, reason) => void shutdown(reason, { exitCode: code }),
    ...(keepalive ? { keepaliveMs: keepalive } : {}),
  });
  if (deferred) {
    // A signal (or an exit verdict) arrived while starting: stop now that there is something to stop.
    stopping = false;
    await shutdown(deferred.reason, deferred.options);
  }
} catch (error) {
  if (error instanceof GatewayStartError) {
    process.stderr.write(`hermes-gateway: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  process.stderr.write(
    `hermes-gateway: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(GATEWAY_EXIT_CODES.failure);
}
