import {
  getRunningPid,
  identifyGateway,
  isRuntimeStatusStale,
  normalizeUpdatedAt,
  queryGatewayStatus,
  readRuntimeStatus,
} from '@hermes/control-socket';
import type { CommandContext } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import { formatAge } from '../../output/format.js';

interface PlatformEntry {
  readonly state?: unknown;
  readonly error_message?: unknown;
}

/**
 * `hermes gateway status`: the control socket first (a gateway that answers `identify` is alive
 * by definition), then `gateway_state.json` plus the PID record. Says which one answered.
 * Exit 0 when a gateway runs, 1 when none does or it does not answer.
 */
export async function gatewayStatus(context: CommandContext): Promise<number> {
  const home = context.home;
  const { output } = context;
  const identity = await identifyGateway(home, { timeoutMs: 2000 });
  if (identity) {
    const status = await queryGatewayStatus(home, { timeoutMs: 2000 });
    const record = (status ?? {}) as Record<string, unknown>;
    const result = {
      running: true,
      source: 'socket' as const,
      home,
      pid: identity.pid,
      profile: identity.profile,
      supervisor: identity.supervisor,
      code_version: identity.code_version ?? null,
      code_sha: identity.code_sha ?? null,
      served_profiles: identity.served_profiles ?? null,
      gateway_state: typeof record.gateway_state === 'string' ? record.gateway_state : null,
      active_agents: typeof record.active_agents === 'number' ? record.active_agents : null,
      platforms: (record.platforms ?? {}) as Record<string, PlatformEntry>,
      updated_at: record.updated_at ?? null,
    };
    if (output.json) {
      output.printJson(result);
      return EXIT.ok;
    }
    const styles = output.styles;
    output.line(
      `${styles.green('●')} Gateway ${styles.bold(result.gateway_state ?? 'running')} (pid ${result.pid}, profile ${result.profile ?? 'custom'}) ${styles.dim('— answered on its control socket')}`,
    );
    output.line(`  home:        ${home}`);
    output.line(`  supervisor:  ${result.supervisor}`);
    if (result.code_version) {
      output.line(
        `  version:     ${result.code_version}${result.code_sha ? ` (${result.code_sha.slice(0, 8)})` : ''}`,
      );
    }
    if (result.active_agents !== null) output.line(`  active turns: ${result.active_agents}`);
    for (const [name, platform] of Object.entries(result.platforms)) {
      const state = String(platform.state ?? 'unknown');
      const detail = platform.error_message ? ` — ${String(platform.error_message)}` : '';
      output.line(
        `  ${name}: ${state === 'connected' ? styles.green(state) : styles.yellow(state)}${detail}`,
      );
    }
    if (result.served_profiles?.length)
      output.line(`  serves:      ${result.served_profiles.join(', ')}`);
    return EXIT.ok;
  }

  const record = await readRuntimeStatus(home);
  const pid = await getRunningPid(home, { cleanupStale: false }).catch(() => null);
  const updatedAt = record ? normalizeUpdatedAt(record.updated_at) : null;
  const recorded = {
    gateway_state: record && typeof record.gateway_state === 'string' ? record.gateway_state : null,
    exit_reason: record?.exit_reason ?? null,
    updated_at: updatedAt,
    stale: record ? isRuntimeStatusStale(record) : null,
  };
  if (pid !== null) {
    // Alive by its files but silent on the socket: tell a wedged loop from a busy one.
    const { probeLiveness } = await import('@hermes/supervisor');
    const liveness = await probeLiveness(home, { pid });
    if (output.json) {
      output.printJson({
        running: true,
        source: 'runtime_files',
        home,
        pid,
        liveness,
        ...recorded,
      });
    } else {
      const styles = output.styles;
      output.line(
        `${styles.yellow('●')} Gateway running (pid ${pid}) but not answering on its control socket ${styles.dim('— from the runtime files')}`,
      );
      output.line(`  liveness:    ${liveness === 'wedged' ? styles.red(liveness) : liveness}`);
      if (recorded.gateway_state) output.line(`  last state:  ${recorded.gateway_state}`);
      output.note(styles.dim(`  Details: ${home}/logs/gateway.log · hermes doctor`));
    }
    return liveness === 'wedged' ? EXIT.failure : EXIT.ok;
  }
  if (output.json) {
    output.printJson({
      running: false,
      source: record ? 'runtime_files' : 'none',
      home,
      pid: null,
      ...recorded,
    });
  } else {
    const styles = output.styles;
    const last = recorded.gateway_state
      ? ` Last recorded state: ${recorded.gateway_state}${recorded.exit_reason ? ` (${String(recorded.exit_reason)})` : ''}, ${formatAge(updatedAt === null ? null : updatedAt / 1000)}.`
      : '';
    output.line(`${styles.dim('○')} Gateway is not running.${last}`);
    output.note(styles.dim('  Start it with: hermes gateway start'));
  }
  return EXIT.failure;
}
