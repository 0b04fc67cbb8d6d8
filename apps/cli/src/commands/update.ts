import { listProfiles } from '@hermes/config';
import {
  collectFleetVersions,
  collectRuntimeInventory,
  type FleetVersionRow,
  formatFleetVersionRow,
  type RuntimeRecord,
  readCodeIdentity,
} from '@hermes/control-socket';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { usageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

/**
 * `hermes update --plan`: every gateway on this machine (all profiles), found through its control
 * socket first, with the code it runs and how it restarts, and the fleet version matrix against
 * this hermes's version. Changes nothing.
 */
export async function updateCommand(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const installMethod = process.argv[1]?.includes('node_modules') ? 'npm' : 'source checkout';
  if (options.plan !== true) {
    throw usageError(
      'hermes update only plans so far: run hermes update --plan',
      installMethod === 'npm'
        ? 'Update hermes with the tool that installed it, then restart each gateway as hermes update --plan shows'
        : 'Update the checkout (git pull && pnpm install && pnpm build), then restart each gateway as hermes update --plan shows',
    );
  }
  const profiles = listProfiles();
  const homes = profiles.map((profile) => profile.home);
  // The commit this hermes would start now (HERMES_CODE_SHA, else its checkout's HEAD), read fresh.
  const expectedSha = readCodeIdentity({ from: import.meta.url, version: context.version }).sha;
  const [runtimes, fleet] = await Promise.all([
    collectRuntimeInventory(homes),
    collectFleetVersions(homes, { expectedSha }),
  ]);
  const plan = {
    expected_version: context.version,
    expected_sha: expectedSha,
    install_method: installMethod,
    profiles: profiles.map((profile) => ({
      name: profile.name,
      home: profile.home,
      parked: profile.parked,
    })),
    runtimes,
    fleet,
  };
  const { output } = context;
  if (output.json) {
    output.printJson(plan);
    return EXIT.ok;
  }
  const styles = output.styles;
  output.line(
    `${styles.bold('hermes')} ${context.version}${expectedSha ? ` (${expectedSha.slice(0, 8)})` : ''} · ${plan.install_method}`,
  );
  output.line(
    `${profiles.length} profile${profiles.length === 1 ? '' : 's'}; ${runtimes.length} running gateway${runtimes.length === 1 ? '' : 's'}`,
  );
  if (runtimes.length > 0) {
    output.line();
    output.table(
      [
        {
          header: 'PROFILE',
          value: (row: RuntimeRecord) => row.profile,
          style: (text) => styles.bold(text),
        },
        { header: 'PID', value: (row) => String(row.pid), align: 'right' },
        { header: 'SUPERVISOR', value: (row) => row.supervisor },
        {
          header: 'CODE',
          value: (row) =>
            [row.code_version, row.code_sha?.slice(0, 8)].filter(Boolean).join(' ') || 'unknown',
        },
        { header: 'FOUND BY', value: (row) => row.detail },
        { header: 'RESTART WITH', value: (row) => row.restart_via, flexible: true },
      ],
      runtimes,
    );
    output.line();
    for (const row of fleet as FleetVersionRow[]) output.line(formatFleetVersionRow(row));
  }
  output.line();
  output.line(
    styles.dim(
      'Plan: update hermes with the tool that installed it, then restart each gateway with the command above.',
    ),
  );
  return EXIT.ok;
}
