import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  getRunningPid,
  identifyGateway,
  isRecordedProcessLive,
  readRuntimeStatus,
  runtimeStatusPid,
} from '@hermes/control-socket';
import {
  querySystemdUnitTiming,
  resolveRestartExitWaitBudget,
  resolveShutdownWatchdogDelay,
  resolveSystemdRestartWaitS,
} from '@hermes/supervisor';
import type { CommandContext, CommandOptions, Positional } from '../../context.js';
import { CliError } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { withProgress } from '../../output/progress.js';
import {
  argsOf,
  drainSecondsFor,
  findRunningGateway,
  gatewayArgs,
  gatewayBinPath,
  type RunningGateway,
  waitForExit,
} from './gateway-process.js';
import {
  controlCommand,
  type Manager,
  runServiceCommand,
  serviceLocation,
  shellLine,
} from './service.js';

/** Where a background gateway's own stdout/stderr go (its structured log is logs/gateway.log). */
export const CONSOLE_LOG_NAME = 'gateway.out.log';
const DEFAULT_START_TIMEOUT_S = 60;
/** Added to the shutdown watchdog's delay: the watchdog itself ends a stop that hangs. */
const STOP_MARGIN_S = 10;

function consoleLogPath(home: string): string {
  return path.join(home, 'logs', CONSOLE_LOG_NAME);
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function readFrom(file: string, offset: number): string {
  try {
    return readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

interface Started {
  readonly pid: number;
  readonly url: string | null;
  readonly answeredBy: 'socket' | 'files';
}

async function launch(
  context: CommandContext,
  args: readonly string[],
  timeoutS: number,
): Promise<Started> {
  const home = context.home;
  const logFile = consoleLogPath(home);
  mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
  const offset = sizeOf(logFile);
  const fd = openSync(logFile, 'a', 0o600);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(process.execPath, [gatewayBinPath(), ...args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, HERMES_HOME: home },
      cwd: home,
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) {
    throw new CliError({
      code: 'gateway_start_failed',
      message: 'the gateway process could not be started',
    });
  }
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.once('exit', (code, signal) => {
    exit = { code, signal };
  });
  child.unref();
  const deadline = performance.now() + timeoutS * 1000;
  const urlOf = () =>
    /Hermes gateway listening on (\S+)/.exec(readFrom(logFile, offset))?.[1] ?? null;
  for (;;) {
    if (exit) {
      const output = readFrom(logFile, offset).trim().split('\n').slice(-15).join('\n');
      throw new CliError({
        code: 'gateway_start_failed',
        message: `the gateway exited during start (${exit.code !== null ? `code ${exit.code}` : `signal ${exit.signal}`})${output ? `:\n${output}` : ''}`,
        hint: `Full output: ${logFile}`,
      });
    }
    // The control socket answers before the HTTP listener is up (start order: socket, then HTTP,
    // then the banner), so the gateway counts as started once its banner names the URL.
    const url = urlOf();
    const identity = await identifyGateway(home, { timeoutMs: 1000 });
    if (identity?.pid === pid && url) return { pid, url, answeredBy: 'socket' };
    // A gateway runs without its control socket when it cannot bind one; its status file then
    // says it is serving.
    const status = await readRuntimeStatus(home);
    if (url && status && runtimeStatusPid(status) === pid && status.gateway_state === 'running') {
      return { pid, url, answeredBy: 'files' };
    }
    if (performance.now() >= deadline) {
      throw new CliError({
        code: 'timeout',
        message: `the gateway (pid ${pid}) did not report ready within ${timeoutS} s; it may still be starting`,
        hint: `Check: hermes gateway status, and ${logFile}`,
        exitCode: EXIT.timeout,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function printStarted(
  context: CommandContext,
  started: Started,
  extra: Record<string, unknown> = {},
) {
  const { output } = context;
  const logFile = path.join(context.home, 'logs', 'gateway.log');
  if (output.json) {
    output.printJson({
      status: 'started',
      pid: started.pid,
      url: started.url,
      answered_by: started.answeredBy,
      home: context.home,
      log_file: logFile,
      console_log: consoleLogPath(context.home),
      ...extra,
    });
    return;
  }
  output.line(
    `Gateway started (pid ${started.pid})${started.url ? ` on ${output.styles.bold(started.url)}` : ''}.`,
  );
  output.line(output.styles.dim(`  logs: ${logFile}`));
  if (started.answeredBy === 'files') {
    output.warn('it is not answering on its control socket; see the log for why');
  }
}

export async function gatewayStart(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const running = await findRunningGateway(context.home);
  if (running) {
    if (context.output.json) {
      context.output.printJson({
        status: 'already_running',
        pid: running.pid,
        source: running.source,
      });
    } else {
      context.output.line(`Gateway already running (pid ${running.pid}).`);
    }
    return EXIT.ok;
  }
  const timeoutS = typeof options.timeout === 'number' ? options.timeout : DEFAULT_START_TIMEOUT_S;
  const started = await withProgress(context.output, 'Starting the gateway', () =>
    launch(context, gatewayArgs(options), timeoutS),
  );
  printStarted(context, started);
  return EXIT.ok;
}

/**
 * The installed unit that runs this gateway, when its service manager runs it: stopping it by
 * signal would leave the service manager to restart it (or to think it crashed), so stop and
 * restart go through the service manager instead.
 */
function managedBy(
  context: CommandContext,
  running: RunningGateway,
): { manager: Manager; name: string } | undefined {
  const supervisor = running.identity?.supervisor;
  if (supervisor !== 'systemd' && supervisor !== 'launchd') return undefined;
  try {
    const location = serviceLocation(context.home);
    if (location.manager !== supervisor || !existsSync(location.file)) return undefined;
    return { manager: location.manager, name: location.name };
  } catch {
    return undefined;
  }
}

async function runManagerCommand(command: [string, string[]]): Promise<void> {
  const result = await runServiceCommand(command[0], command[1]);
  if (!result.ok) {
    throw new CliError({
      code: 'service_manager_failed',
      message: `\`${shellLine(command)}\` failed: ${result.output.split('\n')[0]}`,
      hint: 'Check the service: systemctl --user status <unit> (launchctl print on macOS)',
    });
  }
}

interface Stopped {
  readonly pid: number;
  readonly seconds: number;
  readonly killed: boolean;
}

async function stopGateway(
  context: CommandContext,
  running: RunningGateway,
  options: { timeoutS: number; force: boolean },
): Promise<Stopped> {
  const started = performance.now();
  const managed = managedBy(context, running);
  if (managed) {
    await withProgress(context.output, `Stopping ${managed.name}`, async () => {
      await runManagerCommand(controlCommand(managed.manager, managed.name, 'stop'));
    });
    if (await waitForExit(running.pid, options.timeoutS * 1000)) {
      return { pid: running.pid, seconds: (performance.now() - started) / 1000, killed: false };
    }
    throw new CliError({
      code: 'timeout',
      message: `${managed.name} was asked to stop, but its gateway (pid ${running.pid}) still runs after ${options.timeoutS} s`,
      hint: `Check: ${managed.manager === 'systemd' ? `systemctl --user status ${managed.name}` : `launchctl print gui/$(id -u)/${managed.name}`}`,
      exitCode: EXIT.timeout,
    });
  }
  // Never signal a recycled PID: the process must still be the one the record describes.
  if (
    running.startTime !== null &&
    !(await isRecordedProcessLive(running.pid, running.startTime))
  ) {
    return { pid: running.pid, seconds: 0, killed: false };
  }
  try {
    process.kill(running.pid, 'SIGTERM');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return { pid: running.pid, seconds: 0, killed: false };
    throw new CliError({
      code: 'gateway_stop_failed',
      message: `cannot signal the gateway (pid ${running.pid}): ${code ?? String(error)}`,
      hint: code === 'EPERM' ? 'It runs as another user; stop it as that user' : undefined,
      cause: error,
    });
  }
  const exited = await withProgress(
    context.output,
    `Stopping the gateway (pid ${running.pid}); running turns may finish first`,
    () => waitForExit(running.pid, options.timeoutS * 1000),
  );
  if (exited)
    return { pid: running.pid, seconds: (performance.now() - started) / 1000, killed: false };
  if (!options.force) {
    throw new CliError({
      code: 'timeout',
      message: `the gateway (pid ${running.pid}) did not exit within ${options.timeoutS} s`,
      hint: 'Wait and check hermes gateway status, or end it now: hermes gateway stop --force',
      exitCode: EXIT.timeout,
    });
  }
  try {
    process.kill(running.pid, 'SIGKILL');
  } catch {
    // Gone in the meantime.
  }
  await waitForExit(running.pid, 5000);
  // The killed gateway could not remove its PID files; drop them now that they are stale.
  await getRunningPid(context.home).catch(() => null);
  return { pid: running.pid, seconds: (performance.now() - started) / 1000, killed: true };
}

export async function gatewayStop(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const running = await findRunningGateway(context.home);
  const { output } = context;
  if (!running) {
    if (output.json) output.printJson({ status: 'not_running' });
    else output.line('Gateway is not running.');
    return EXIT.ok;
  }
  const drainS = await drainSecondsFor(context.home, running.argv);
  const timeoutS =
    typeof options.timeout === 'number'
      ? options.timeout
      : resolveShutdownWatchdogDelay(drainS) + STOP_MARGIN_S;
  const stopped = await stopGateway(context, running, { timeoutS, force: options.force === true });
  if (output.json) {
    output.printJson({
      status: stopped.killed ? 'killed' : 'stopped',
      pid: stopped.pid,
      seconds: Number(stopped.seconds.toFixed(2)),
    });
  } else if (stopped.killed) {
    output.warn(`the gateway (pid ${stopped.pid}) did not stop in time and was killed`);
  } else {
    output.line(`Gateway stopped (pid ${stopped.pid}).`);
  }
  return EXIT.ok;
}

export async function gatewayRestart(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const running = await findRunningGateway(context.home);
  const managed = running ? managedBy(context, running) : undefined;
  if (running && managed) return restartManaged(context, running, managed, options);
  const given = gatewayArgs(options);
  // Without new options the gateway comes back as it was started.
  const args = given.length > 0 ? given : (argsOf(running?.argv ?? null) ?? []);
  let previous: Stopped | null = null;
  if (running) {
    const drainS = await drainSecondsFor(context.home, running.argv);
    const timeoutS =
      typeof options.timeout === 'number'
        ? options.timeout
        : // The reference's restart wait: drain + after-turn (none here) + 15 s headroom.
          resolveRestartExitWaitBudget({ drainS, afterTurnS: 0 });
    previous = await stopGateway(context, running, { timeoutS, force: false });
  } else if (!context.output.json) {
    context.output.note('The gateway was not running; starting it.');
  }
  const timeoutS = typeof options.timeout === 'number' ? options.timeout : DEFAULT_START_TIMEOUT_S;
  const started = await withProgress(context.output, 'Starting the gateway', () =>
    launch(context, args, timeoutS),
  );
  printStarted(context, started, { previous_pid: previous?.pid ?? null });
  return EXIT.ok;
}

/** Restart through the service manager; waits for a new gateway to answer on its socket. */
async function restartManaged(
  context: CommandContext,
  running: RunningGateway,
  managed: { manager: Manager; name: string },
  options: CommandOptions,
): Promise<number> {
  if (gatewayArgs(options).length > 0) {
    context.output.warn(
      `${managed.name} runs with the options in its unit; reinstall it to change them (hermes gateway install --force)`,
    );
  }
  let waitS: number;
  if (typeof options.timeout === 'number') waitS = options.timeout;
  else if (managed.manager === 'systemd') {
    // The reference's systemd restart wait: 60 s + RestartUSec + TimeoutStartUSec of the unit.
    const timing = await querySystemdUnitTiming({ unit: managed.name, scope: 'user' }).catch(
      () => undefined,
    );
    waitS = timing ? resolveSystemdRestartWaitS(timing) : 90;
  } else {
    waitS =
      resolveRestartExitWaitBudget({
        drainS: await drainSecondsFor(context.home, running.argv),
        afterTurnS: 0,
      }) + 60;
  }
  const started = await withProgress(context.output, `Restarting ${managed.name}`, async () => {
    await runManagerCommand(controlCommand(managed.manager, managed.name, 'restart'));
    const deadline = performance.now() + waitS * 1000;
    for (;;) {
      const identity = await identifyGateway(context.home, { timeoutMs: 1000 });
      if (identity && identity.pid !== running.pid) return identity.pid;
      if (performance.now() >= deadline) {
        throw new CliError({
          code: 'timeout',
          message: `${managed.name} did not bring a new gateway up within ${Math.round(waitS)} s`,
          hint: `Check: ${managed.manager === 'systemd' ? `journalctl --user -u ${managed.name}` : 'the gateway.out.log in the logs folder'}`,
          exitCode: EXIT.timeout,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  if (context.output.json) {
    context.output.printJson({
      status: 'restarted',
      pid: started,
      previous_pid: running.pid,
      service: managed.name,
    });
  } else {
    context.output.line(
      `Gateway restarted by ${managed.name} (pid ${started}, was ${running.pid}).`,
    );
  }
  return EXIT.ok;
}
