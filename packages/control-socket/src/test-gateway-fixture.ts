import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SpawnedProcess, spawnProcess } from '@hermes/testkit';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageRoot = path.resolve(here, '..');
const fixtures = path.join(here, 'test-fixtures');

export interface FixtureGatewayOptions {
  /** The fixture's HERMES_HOME. */
  readonly home: string;
  /** Claim the home's PID file before reporting ready (default false). */
  readonly claim?: boolean;
  /**
   * The command line after `node [loader options]`: the `hermes-gateway` bin (default) or the
   * `hermes` CLI with its arguments, e.g. `['hermes', 'gateway', 'run']`.
   */
  readonly command?: readonly string[];
  /** The environment (default this process's); HERMES_HOME is set on top. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Test helper: starts a process whose command line looks like a real gateway's —
 * `node … /…/test-fixtures/hermes-gateway` or `node … /…/test-fixtures/hermes gateway run` —
 * and waits until it reports ready. Node itself runs the script (tsx only as a loader, not the tsx
 * CLI, which would add a wrapper process), so the PID judged is the PID spawned.
 */
export function startFixtureGateway(options: FixtureGatewayOptions): Promise<SpawnedProcess> {
  const [bin = 'hermes-gateway', ...args] = options.command ?? ['hermes-gateway'];
  return spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', path.join(fixtures, bin), ...args],
    cwd: packageRoot,
    env: {
      ...(options.env ?? process.env),
      HERMES_HOME: options.home,
      HERMES_FIXTURE_CLAIM: options.claim ? '1' : '0',
    },
    readyLine: /ready claim=(null|\{.*\})/,
  });
}

/** What the fixture's claim came to (`null` when it was not asked to claim). */
export function fixtureClaimOutcome(
  child: SpawnedProcess,
): { claimed: boolean; reason: string | null } | null {
  return JSON.parse(child.stdout().match(/ready claim=(null|\{.*\})/)?.[1] ?? 'null');
}
