import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { getActiveProfileName, writeFileAtomicSync } from '@hermes/config';
import {
  launchdLabel,
  renderLaunchdPlist,
  renderSystemdUnit,
  systemdUnitName,
} from '@hermes/supervisor';
import type { CommandContext, CommandOptions, Positional } from '../../context.js';
import { CliError } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import {
  drainSecondsFor,
  findRunningGateway,
  gatewayArgs,
  gatewayBinPath,
} from './gateway-process.js';

export type Manager = 'systemd' | 'launchd';

/** The service-manager command that stops or restarts this profile's installed unit. */
export function controlCommand(
  manager: Manager,
  name: string,
  action: 'stop' | 'restart',
): [string, string[]] {
  if (manager === 'systemd') return ['systemctl', ['--user', action, name]];
  const target = `gui/${process.getuid?.() ?? 0}/${name}`;
  return action === 'stop'
    ? ['launchctl', ['bootout', target]]
    : ['launchctl', ['kickstart', '-k', target]];
}

/** Where this profile's unit lives, and which service manager runs it. */
export function serviceLocation(home: string): { manager: Manager; name: string; file: string } {
  const raw = getActiveProfileName(home);
  // A custom home gets a name of its own folder so two custom homes do not share one unit.
  const profile =
    raw === 'custom' ? `custom-${path.basename(home).replace(/[^a-z0-9_-]/gi, '') || 'home'}` : raw;
  if (process.platform === 'darwin') {
    const name = launchdLabel(profile);
    return {
      manager: 'launchd',
      name,
      file: path.join(homedir(), 'Library', 'LaunchAgents', `${name}.plist`),
    };
  }
  if (process.platform === 'linux') {
    const base = process.env.XDG_CONFIG_HOME?.trim() || path.join(homedir(), '.config');
    const name = systemdUnitName(profile);
    return { manager: 'systemd', name, file: path.join(base, 'systemd', 'user', name) };
  }
  throw new CliError({
    code: 'unsupported_platform',
    message: `hermes gateway install supports Linux (systemd) and macOS (launchd), not ${process.platform}`,
    hint: 'Run the gateway with your own service manager: hermes gateway run',
  });
}

function profileLabel(home: string): string {
  return getActiveProfileName(home);
}

/** Runs a service-manager command (no shell); never throws. */
export function runServiceCommand(
  command: string,
  args: readonly string[],
): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ ok: !error, output: `${stdout}${stderr}`.trim() || (error?.message ?? '') });
    });
  });
}

export function activationCommands(
  manager: Manager,
  name: string,
  file: string,
): [string, string[]][] {
  if (manager === 'systemd') {
    return [
      ['systemctl', ['--user', 'daemon-reload']],
      ['systemctl', ['--user', 'enable', '--now', name]],
    ];
  }
  const domain = `gui/${process.getuid?.() ?? 0}`;
  return [['launchctl', ['bootstrap', domain, file]]];
}

export function shellLine([command, args]: [string, string[]]): string {
  return [command, ...args.map((arg) => (/[^\w@%+=:,./-]/.test(arg) ? `'${arg}'` : arg))].join(' ');
}

export async function gatewayInstall(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const home = context.home;
  const location = serviceLocation(home);
  const args = gatewayArgs(options);
  const serviceOptions = {
    home,
    profile: profileLabel(home),
    nodePath: process.execPath,
    gatewayBin: gatewayBinPath(),
    args,
    drainS:
      typeof options.drainTimeout === 'number'
        ? options.drainTimeout
        : await drainSecondsFor(home, null),
    ...(process.env.PATH ? { path: process.env.PATH } : {}),
    consoleLog: path.join(home, 'logs', 'gateway.out.log'),
  };
  const text =
    location.manager === 'systemd'
      ? renderSystemdUnit(serviceOptions)
      : renderLaunchdPlist(serviceOptions);
  const { output } = context;
  if (options.dryRun === true) {
    if (output.json)
      output.printJson({
        status: 'dry_run',
        manager: location.manager,
        name: location.name,
        file: location.file,
        unit: text,
      });
    else {
      output.note(output.errorStyles.dim(`# would write ${location.file}`));
      process.stdout.write(text);
    }
    return EXIT.ok;
  }
  const existing = existsSync(location.file) ? readFileSync(location.file, 'utf8') : null;
  if (existing !== null && existing !== text && options.force !== true) {
    throw new CliError({
      code: 'unit_exists',
      message: `${location.file} exists and differs from the unit this install would write`,
      hint: 'Compare with: hermes gateway install --dry-run; replace it with --force',
    });
  }
  const start = options.start !== false;
  if (start) {
    const running = await findRunningGateway(home);
    if (running && running.identity?.supervisor !== location.manager) {
      throw new CliError({
        code: 'gateway_running',
        message: `a gateway (pid ${running.pid}) already runs for this profile outside the service`,
        hint: 'Stop it first (hermes gateway stop), or install without starting: --no-start',
      });
    }
  }
  mkdirSync(path.dirname(location.file), { recursive: true });
  mkdirSync(path.join(home, 'logs'), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(location.file, text, { mode: 0o644 });
  const commands = activationCommands(location.manager, location.name, location.file);
  if (!start) {
    if (output.json) {
      output.printJson({
        status: 'installed',
        manager: location.manager,
        name: location.name,
        file: location.file,
        commands: commands.map(shellLine),
      });
    } else {
      output.line(`Installed ${location.file}`);
      output.line(`Enable and start it with:\n  ${commands.map(shellLine).join('\n  ')}`);
    }
    return EXIT.ok;
  }
  for (const command of commands) {
    const result = await runServiceCommand(command[0], command[1]);
    if (!result.ok) {
      throw new CliError({
        code: 'service_manager_failed',
        message: `wrote ${location.file}, but \`${shellLine(command)}\` failed: ${result.output.split('\n')[0]}`,
        hint: `Run by hand once the service manager is reachable:\n  ${commands.map(shellLine).join('\n  ')}`,
      });
    }
  }
  if (output.json) {
    output.printJson({
      status: 'installed_and_started',
      manager: location.manager,
      name: location.name,
      file: location.file,
    });
    return EXIT.ok;
  }
  output.line(`Installed ${location.file}`);
  output.line(`Started ${location.name}.`);
  if (location.manager === 'systemd') {
    output.note(
      output.errorStyles.dim(
        `To keep it running after you log out: loginctl enable-linger ${process.env.USER ?? '$USER'}`,
      ),
    );
  }
  return EXIT.ok;
}

export async function gatewayUninstall(context: CommandContext): Promise<number> {
  const location = serviceLocation(context.home);
  const { output } = context;
  if (!existsSync(location.file)) {
    if (output.json) output.printJson({ status: 'not_installed', file: location.file });
    else output.line(`No service unit installed for this profile (${location.file}).`);
    return EXIT.ok;
  }
  const failures: string[] = [];
  const stop: [string, string[]] =
    location.manager === 'systemd'
      ? ['systemctl', ['--user', 'disable', '--now', location.name]]
      : ['launchctl', ['bootout', `gui/${process.getuid?.() ?? 0}/${location.name}`]];
  const stopped = await runServiceCommand(stop[0], stop[1]);
  if (!stopped.ok) failures.push(`${shellLine(stop)}: ${stopped.output.split('\n')[0]}`);
  rmSync(location.file, { force: true });
  if (location.manager === 'systemd') {
    const reload = await runServiceCommand('systemctl', ['--user', 'daemon-reload']);
    if (!reload.ok)
      failures.push(`systemctl --user daemon-reload: ${reload.output.split('\n')[0]}`);
  }
  if (output.json) {
    output.printJson({ status: 'removed', file: location.file, warnings: failures });
  } else {
    output.line(`Removed ${location.file}.`);
    for (const failure of failures) output.warn(failure);
  }
  return EXIT.ok;
}
