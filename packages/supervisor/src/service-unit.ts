import { resolveLaunchdStopBudget, resolveSystemdTimeoutStopSec } from './budgets.js';
import { LAUNCHD_EXIT_TIMEOUT_S } from './constants.js';
import { redactSecrets } from './redact-secrets.js';

/**
 * Service units for a Hermes gateway: a systemd user unit (Linux) or a launchd agent (macOS), as
 * `hermes gateway install` writes them and `hermes doctor` audits them. Pure text in, text out.
 *
 * A unit never carries a secret: it names the home (`HERMES_HOME`) and the gateway reads its keys
 * from `<home>/.env` itself. Unit files are world-readable by convention and `systemctl show`
 * prints every `Environment=` line to any local user.
 */
export interface GatewayServiceOptions {
  /** The profile home the gateway serves (`HERMES_HOME`). */
  readonly home: string;
  /** `default` or the profile's name: it names the unit. */
  readonly profile: string;
  /** The Node.js binary (`process.execPath`). */
  readonly nodePath: string;
  /** The gateway's entry script (absolute). */
  readonly gatewayBin: string;
  /** Extra gateway arguments (`--port 8642`). Never put a secret here. */
  readonly args?: readonly string[];
  /** The gateway's drain budget (`restart_drain_timeout`), which sizes the stop timeout. */
  readonly drainS: number;
  /** `PATH` for the service (tools the agent runs need one); default none. */
  readonly path?: string;
  /** Where launchd writes the gateway's stdout/stderr (default `<home>/logs/gateway.out.log`). */
  readonly consoleLog?: string;
}

/** `hermes-gateway.service`, or `hermes-gateway-<profile>.service` for a named profile. */
export function systemdUnitName(profile: string): string {
  return profile === 'default' ? 'hermes-gateway.service' : `hermes-gateway-${profile}.service`;
}

/** `ai.hermes.gateway`, or `ai.hermes.gateway.<profile>` (a prefix the gateway recognises as launchd). */
export function launchdLabel(profile: string): string {
  return profile === 'default' ? 'ai.hermes.gateway' : `ai.hermes.gateway.${profile}`;
}

/** One systemd word: double-quoted, `\` and `"` escaped, `%` doubled (specifiers), `$` doubled. */
function systemdWord(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** An `Environment=` assignment: quoted, `%` doubled (values are not `$`-expanded there). */
function systemdAssignment(name: string, value: string): string {
  return `"${`${name}=${value}`.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')}"`;
}

function assertNoNewline(label: string, value: string): void {
  if (/[\r\n]/.test(value)) throw new TypeError(`${label} must not contain a line break`);
}

/** The systemd user unit that runs the gateway of one profile. */
export function renderSystemdUnit(options: GatewayServiceOptions): string {
  const words = [options.nodePath, options.gatewayBin, ...(options.args ?? [])];
  for (const word of words) assertNoNewline('a unit argument', word);
  assertNoNewline('the home', options.home);
  const lines = [
    `# Written by \`hermes gateway install\` for profile "${options.profile}".`,
    `# Secrets stay in ${options.home}/.env (the gateway reads it); never add them here.`,
    '[Unit]',
    `Description=Hermes gateway (profile ${options.profile})`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${words.map(systemdWord).join(' ')}`,
    `Environment=${systemdAssignment('HERMES_HOME', options.home)}`,
    ...(options.path ? [`Environment=${systemdAssignment('PATH', options.path)}`] : []),
    // A path to the end of the line: no quoting, only specifiers escaped.
    `WorkingDirectory=${options.home.replace(/%/g, '%%')}`,
    'Restart=on-failure',
    'RestartSec=5',
    // 78 (EX_CONFIG): a configuration the gateway cannot run with; restarting will not fix it.
    'RestartPreventExitStatus=78',
    // SIGTERM to the gateway alone, so it drains its own children; the group only at the end.
    'KillMode=mixed',
    `TimeoutStopSec=${resolveSystemdTimeoutStopSec({ drainS: options.drainS })}`,
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ];
  return lines.join('\n');
}

function xml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/**
 * The launchd agent (`~/Library/LaunchAgents/<label>.plist`) that runs the gateway of one profile:
 * kept alive after a failure (not after a clean stop), `ExitTimeOut` 60 s, the drain capped 10 s
 * below it (`resolveLaunchdStopBudget`) and passed as `--drain-timeout`.
 */
export function renderLaunchdPlist(options: GatewayServiceOptions): string {
  const budget = resolveLaunchdStopBudget({
    drainS: options.drainS,
    exitTimeOutS: LAUNCHD_EXIT_TIMEOUT_S,
  });
  const args = [...(options.args ?? [])];
  if (!args.includes('--drain-timeout')) args.push('--drain-timeout', String(budget.drainS));
  const program = [options.nodePath, options.gatewayBin, ...args];
  const consoleLog = options.consoleLog ?? `${options.home}/logs/gateway.out.log`;
  const string = (value: string) => `<string>${xml(value)}</string>`;
  const environment = [
    `    <key>HERMES_HOME</key>${string(options.home)}`,
    ...(options.path ? [`    <key>PATH</key>${string(options.path)}`] : []),
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    `<!-- Written by \`hermes gateway install\` for profile "${xml(options.profile)}". Secrets stay in the home's .env; never add them here. -->`,
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key>${string(launchdLabel(options.profile))}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...program.map((word) => `    ${string(word)}`),
    '  </array>',
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...environment,
    '  </dict>',
    `  <key>WorkingDirectory</key>${string(options.home)}`,
    '  <key>RunAtLoad</key><true/>',
    '  <key>KeepAlive</key>',
    '  <dict><key>SuccessfulExit</key><false/></dict>',
    `  <key>ExitTimeOut</key><integer>${budget.exitTimeOutS}</integer>`,
    `  <key>StandardOutPath</key>${string(consoleLog)}`,
    `  <key>StandardErrorPath</key>${string(consoleLog)}`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/**
 * Lines of a unit file that embed a secret (a key, token or password value, a `Bearer` header, a
 * URL password, a string shaped like a well-known token), masked so the report itself leaks
 * nothing. Empty when the unit is clean.
 */
export function findEmbeddedSecrets(unitText: string): string[] {
  const found: string[] = [];
  for (const line of unitText.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(line) || line.trimStart().startsWith('<!--')) continue;
    const masked = redactSecrets(line);
    if (masked !== line) found.push(masked.trim());
  }
  return found;
}
