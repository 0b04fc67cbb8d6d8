import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { CommandContext, CommandOptions, Positional } from '../../context.js';
import { CliError } from '../../errors.js';
import { findRunningGateway, gatewayArgs, gatewayBinPath } from './gateway-process.js';

/**
 * `hermes gateway run`: the gateway in the foreground, as a child with this terminal. Signals sent
 * to `hermes` are passed on; its exit code becomes ours (128 + n when a signal ended it).
 */
export async function gatewayRun(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const running = await findRunningGateway(context.home);
  if (running) {
    throw new CliError({
      code: 'gateway_running',
      message: `a gateway (pid ${running.pid}) already runs for ${context.home}`,
      hint: 'Stop it first (hermes gateway stop), or use -p <profile> for another profile',
    });
  }
  const child = spawn(process.execPath, [gatewayBinPath(), ...gatewayArgs(options)], {
    stdio: 'inherit',
    env: { ...process.env, HERMES_HOME: context.home },
  });
  const forward = (signal: NodeJS.Signals) => () => {
    // Ctrl-C reaches the gateway directly (same process group); a second copy is harmless, as
    // its shutdown runs once.
    if (child.exitCode === null) child.kill(signal);
  };
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
    const handler = forward(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        if (code !== null) resolve(code);
        else resolve(128 + (signal ? (constants.signals[signal] ?? 1) : 1));
      });
    });
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}
