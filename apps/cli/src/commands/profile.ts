import { existsSync } from 'node:fs';
import {
  createProfile,
  DEFAULT_PROFILE_NAME,
  deleteProfile,
  getActiveProfileName,
  getDefaultHermesRoot,
  getProfileDir,
  listProfiles,
  loadConfig,
  readActiveProfile,
  setActiveProfile,
  validateProfileName,
} from '@hermes/config';
import { getRunningPid, identifyGateway } from '@hermes/control-socket';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { textArg } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { confirm } from '../prompt.js';

interface ProfileRow {
  readonly name: string;
  readonly home: string;
  /** The sticky default (`hermes profile use`). */
  readonly sticky: boolean;
  /** The profile this command runs in. */
  readonly current: boolean;
  readonly parked: boolean;
  readonly gateway_pid: number | null;
}

async function gatewayPid(home: string): Promise<number | null> {
  const identity = await identifyGateway(home, { timeoutMs: 1000 });
  if (identity) return identity.pid;
  return getRunningPid(home, { cleanupStale: false }).catch(() => null);
}

function stickyName(): string {
  return readActiveProfile() ?? DEFAULT_PROFILE_NAME;
}

export async function profileList(context: CommandContext): Promise<number> {
  const sticky = stickyName();
  const current = getActiveProfileName(context.home);
  const rows: ProfileRow[] = await Promise.all(
    listProfiles().map(async (profile) => ({
      name: profile.name,
      home: profile.home,
      sticky: profile.name === sticky,
      current: profile.name === current,
      parked: profile.parked,
      gateway_pid: await gatewayPid(profile.home),
    })),
  );
  const { output } = context;
  if (output.json) {
    output.printJson({ profiles: rows });
    return EXIT.ok;
  }
  const styles = output.styles;
  output.table(
    [
      { header: '', value: (row: ProfileRow) => (row.current ? '*' : '') },
      {
        header: 'PROFILE',
        value: (row) => row.name,
        style: (text, row) => (row.current ? styles.bold(text) : text),
      },
      {
        header: 'GATEWAY',
        value: (row) => (row.gateway_pid === null ? '-' : `running (pid ${row.gateway_pid})`),
        style: (text, row) => (row.gateway_pid === null ? styles.dim(text) : styles.green(text)),
      },
      {
        header: 'NOTE',
        value: (row) =>
          [row.sticky ? 'default for hermes' : '', row.parked ? 'parked' : '']
            .filter(Boolean)
            .join(', '),
      },
      { header: 'HOME', value: (row) => row.home, flexible: true },
    ],
    rows,
  );
  return EXIT.ok;
}

export async function profileCreate(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const name = validateProfileName(textArg(args, 0));
  const home = createProfile(name);
  if (options.use === true) setActiveProfile(name);
  const { output } = context;
  if (output.json) {
    output.printJson({ profile: name, home, sticky: options.use === true });
    return EXIT.ok;
  }
  output.line(`Created profile ${output.styles.bold(name)} at ${home}`);
  if (options.use === true) output.line(`Every hermes command now runs in "${name}".`);
  else
    output.note(
      `Use it with: hermes -p ${name} <command>, or make it the default: hermes profile use ${name}`,
    );
  return EXIT.ok;
}

export async function profileUse(context: CommandContext, args: Positional): Promise<number> {
  const name = setActiveProfile(textArg(args, 0));
  const home = getProfileDir(name);
  const { output } = context;
  if (output.json) {
    output.printJson({ profile: name, home, sticky: true });
    return EXIT.ok;
  }
  output.line(
    name === DEFAULT_PROFILE_NAME
      ? `hermes now runs in the default profile (${home}).`
      : `hermes now runs in profile ${output.styles.bold(name)} (${home}); -p <name> still picks another.`,
  );
  return EXIT.ok;
}

export async function profileShow(context: CommandContext, args: Positional): Promise<number> {
  const requested = textArg(args, 0);
  const name = requested ? validateProfileName(requested) : getActiveProfileName(context.home);
  const home = name === 'custom' ? context.home : getProfileDir(name);
  const exists = listProfiles().some((profile) => profile.name === name) || name === 'custom';
  if (!exists) {
    throw new CliError({
      code: 'profile_not_found',
      message: `profile "${name}" does not exist`,
      hint: `Create it with: hermes profile create ${name}`,
    });
  }
  const { config, exists: configExists, warnings } = loadConfig({ home });
  const identity = await identifyGateway(home, { timeoutMs: 1000 });
  const pid =
    identity?.pid ?? (await getRunningPid(home, { cleanupStale: false }).catch(() => null));
  const info = {
    profile: name,
    home,
    root: getDefaultHermesRoot(),
    sticky: stickyName() === name,
    config_file: configExists,
    config_warnings: warnings,
    model: {
      default: config.model.model || null,
      provider: config.model.provider || null,
      base_url: config.model.baseUrl || null,
    },
    gateway: pid === null ? null : { pid, answered_socket: identity !== null },
  };
  const { output } = context;
  if (output.json) {
    output.printJson(info);
    return EXIT.ok;
  }
  const styles = output.styles;
  const model =
    info.model.default || info.model.base_url
      ? `${info.model.default ?? '(no model.default)'} via ${info.model.base_url ?? info.model.provider ?? 'auto'}`
      : styles.yellow('not configured — hermes config set model.base_url … and model.default …');
  output.line(
    `${styles.bold('profile')}  ${name}${info.sticky ? styles.dim(' (default for hermes)') : ''}`,
  );
  output.line(
    `${styles.bold('home')}     ${home}${existsSync(home) ? '' : styles.yellow(' (does not exist yet)')}`,
  );
  output.line(
    `${styles.bold('config')}   ${configExists ? 'config.yaml' : styles.dim('no config.yaml (defaults)')}`,
  );
  output.line(`${styles.bold('model')}    ${model}`);
  output.line(
    `${styles.bold('gateway')}  ${pid === null ? styles.dim('not running') : styles.green(`running (pid ${pid})`)}`,
  );
  for (const warning of warnings) output.warn(warning);
  return EXIT.ok;
}

export async function profileDelete(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const name = validateProfileName(textArg(args, 0));
  if (name === DEFAULT_PROFILE_NAME) {
    throw new CliError({
      code: 'profile_not_deletable',
      message: 'the default profile cannot be deleted (it is the root that holds the others)',
    });
  }
  const home = getProfileDir(name);
  if (!listProfiles().some((profile) => profile.name === name)) {
    throw new CliError({
      code: 'profile_not_found',
      message: `profile "${name}" does not exist`,
      hint: 'List profiles with: hermes profile list',
    });
  }
  const pid = await gatewayPid(home);
  if (pid !== null) {
    throw new CliError({
      code: 'gateway_running',
      message: `a gateway (pid ${pid}) is running for profile "${name}"`,
      hint: `Stop it first: hermes -p ${name} gateway stop`,
    });
  }
  const confirmed = await confirm(`Delete profile "${name}" and everything in ${home}?`, {
    yes: options.yes === true,
  });
  if (!confirmed) {
    context.output.note('Nothing deleted.');
    return EXIT.failure;
  }
  deleteProfile(name);
  if (context.output.json) context.output.printJson({ profile: name, home, deleted: true });
  else context.output.line(`Deleted profile ${name} (${home}).`);
  return EXIT.ok;
}
