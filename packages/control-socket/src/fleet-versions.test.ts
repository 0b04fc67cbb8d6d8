import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startControlServer } from './control-server.js';
import {
  collectFleetVersions,
  defaultFleetHomes,
  type FleetVersionRow,
  fleetNeedsAttention,
  formatFleetVersionRow,
} from './fleet-versions.js';
import { readProcessStartTime } from './process-identity.js';
import { runtimeStatusPath } from './runtime-status.js';
import { startFixtureGateway } from './test-gateway-fixture.js';

const EXPECTED_SHA = 'c0ffee0000000000000000000000000000000000';

async function serveIdentity(home: string, identity: Record<string, unknown>) {
  const started = await startControlServer({ home, handlers: { identify: () => identity } });
  if (!started.started) throw started.error;
  onTestFinished(() => started.server.close());
}

function identityFor(home: string, pid: number, sha: string | null) {
  return {
    protocol: 1,
    kind: 'hermes-gateway',
    pid,
    start_time: null,
    hermes_home: home,
    profile: 'work',
    supervisor: 'systemd',
    code_sha: sha,
    code_version: '2.0.0',
  };
}

async function writeStatus(home: string, record: Record<string, unknown>) {
  await writeFile(runtimeStatusPath(home), JSON.stringify(record));
}

describe('collectFleetVersions', () => {
  it('prefers a live identify answer over a stale gateway_state.json', async () => {
    const home = await tempHome();
    await writeStatus(home.path, { pid: 1, gateway_state: 'running', code_sha: 'old' });
    await serveIdentity(home.path, identityFor(home.path, 4321, EXPECTED_SHA));
    const rows = await collectFleetVersions([home.path], { expectedSha: EXPECTED_SHA });
    expect(rows).toEqual([
      {
        home: home.path,
        profile: 'work',
        pid: 4321,
        code_sha: EXPECTED_SHA,
        code_version: '2.0.0',
        state: 'current',
        source: 'socket',
      },
    ]);
  });

  it('falls back to the state file of a live PID, marking old code stale and leaving out source', async () => {
    const home = await tempHome();
    const child = await startFixtureGateway({ home: home.path });
    onTestFinished(() => child.stop().then(() => {}));
    await writeStatus(home.path, {
      pid: child.pid,
      start_time: await readProcessStartTime(child.pid),
      gateway_state: 'running',
      code_sha: 'deadbeef00',
      code_version: '1.0.0',
    });
    const [row] = await collectFleetVersions([home.path], { expectedSha: EXPECTED_SHA });
    expect(row).toMatchObject({ pid: child.pid, state: 'stale', code_sha: 'deadbeef00' });
    expect(row).not.toHaveProperty('source');
  });

  it('reports down only for a PID that ran before the update and whose record says it served', async () => {
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    const startTime = await readProcessStartTime(child.pid);
    await child.stop();
    const record = { pid: child.pid, start_time: startTime, code_sha: 'x', code_version: '1' };
    const running = await tempHome();
    await writeStatus(running.path, { ...record, gateway_state: 'running' });
    const stopped = await tempHome();
    await writeStatus(stopped.path, { ...record, gateway_state: 'stopped' });

    const rows = await collectFleetVersions([running.path, stopped.path], {
      expectedSha: EXPECTED_SHA,
      preRestartPids: [child.pid],
    });
    expect(rows).toEqual([
      expect.objectContaining({ home: running.path, state: 'down', code_sha: null }),
    ]);
    expect(
      await collectFleetVersions([running.path], { expectedSha: EXPECTED_SHA, preRestartPids: [] }),
    ).toEqual([]);
  });

  it('reports down a gateway whose PID now belongs to a process that is not a gateway', async () => {
    const home = await tempHome();
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    onTestFinished(() => child.stop().then(() => {}));
    // A record without a start time cannot tell a reused PID; the command line can.
    await writeStatus(home.path, { pid: child.pid, gateway_state: 'running', code_sha: 'x' });
    expect(
      await collectFleetVersions([home.path], {
        expectedSha: EXPECTED_SHA,
        preRestartPids: [child.pid],
      }),
    ).toEqual([expect.objectContaining({ pid: child.pid, state: 'down' })]);
  });

  it('calls a gateway without a version stamp unknown, which does not need attention', async () => {
    const home = await tempHome();
    await serveIdentity(home.path, identityFor(home.path, 77, null));
    const rows = await collectFleetVersions([home.path], { expectedSha: EXPECTED_SHA });
    expect(rows.map((row) => row.state)).toEqual(['unknown']);
    expect(fleetNeedsAttention(rows)).toBe(false);
  });

  it('skips homes with nothing to report and never throws', async () => {
    const empty = await tempHome();
    await writeStatus(empty.path, { pid: 'not-a-pid' });
    const rows = await collectFleetVersions([empty.path, '/nonexistent/hermes/home', '\0'], {
      expectedSha: EXPECTED_SHA,
    });
    expect(rows).toEqual([]);
  });
});

describe('defaultFleetHomes', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('walks the default home and every valid named profile home, sorted', async () => {
    const root = await tempHome();
    for (const name of ['zeta', 'work', 'Bad!', 'default']) {
      await mkdir(path.join(root.path, 'profiles', name), { recursive: true });
    }
    await writeFile(path.join(root.path, 'profiles', 'notes'), 'a file, not a profile');
    vi.stubEnv('HERMES_HOME', root.path);
    expect(defaultFleetHomes()).toEqual([
      root.path,
      path.join(root.path, 'profiles', 'work'),
      path.join(root.path, 'profiles', 'zeta'),
    ]);
  });
});

describe('formatFleetVersionRow', () => {
  const base: FleetVersionRow = {
    home: '/h',
    profile: 'work',
    pid: 12,
    code_sha: `${EXPECTED_SHA}`,
    code_version: '2',
    state: 'current',
  };

  it('prints the reference wording for each state', () => {
    expect(formatFleetVersionRow(base)).toBe('✓ work (pid 12) @ c0ffee00 — up to date');
    expect(formatFleetVersionRow({ ...base, state: 'stale' })).toBe(
      '✗ work (pid 12) @ c0ffee00 — STALE (pre-update code)',
    );
    expect(formatFleetVersionRow({ ...base, state: 'down' })).toBe(
      '✗ work — DOWN (gateway was running before the update; pid 12 is gone and nothing replaced it)',
    );
    expect(formatFleetVersionRow({ ...base, state: 'unknown' })).toBe(
      '? work (pid 12) — version unknown (gateway predates version stamping; restart to enable)',
    );
  });

  it('escalates when any row is stale or down', () => {
    expect(fleetNeedsAttention([base, { ...base, state: 'stale' }])).toBe(true);
    expect(fleetNeedsAttention([{ ...base, state: 'down' }])).toBe(true);
    expect(fleetNeedsAttention([base])).toBe(false);
  });
});
