import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SpawnedProcess, spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { GATEWAY_KIND } from './constants.js';
import {
  alreadyRunningMessage,
  claimPidFile,
  getRunningPid,
  pidFilePath,
  removePidFile,
} from './pid-file.js';
import { buildPidRecord, parsePidRecord } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { acquireRuntimeLock, runtimeLockPath } from './runtime-lock.js';
import { runtimeStatusPath } from './runtime-status.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageRoot = path.resolve(here, '..');
const claimFixture = path.join(here, 'test-fixtures', 'claim-gateway.ts');

async function startClaimingGateway(home: string): Promise<SpawnedProcess> {
  // Node itself with tsx as a loader (not the tsx CLI, which would add a wrapper process), so
  // the PID that claims is the PID we spawned.
  return spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', claimFixture, home],
    cwd: packageRoot,
    readyLine: /claim=\{.*\}/,
  });
}

function claimOutcome(child: SpawnedProcess): { claimed: boolean; reason: string | null } {
  return JSON.parse(child.stdout().match(/claim=(\{.*\})/)?.[1] ?? '{}');
}

/** A live process that is not us, with the record a gateway would have written for it. */
async function liveStranger(home: string) {
  const child = await spawnProcess({ command: 'sleep', args: ['30'] });
  const startTime = await readProcessStartTime(child.pid);
  return { child, record: buildPidRecord({ pid: child.pid, argv: ['x'], startTime, home }) };
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  );
}

describe('claimPidFile', () => {
  it('claims a fresh home: gateway.pid and gateway.lock hold this process’s record', async () => {
    const home = await tempHome();
    const claim = await claimPidFile({ home: home.path, argv: ['hermes', 'gateway', 'run'] });
    expect(claim.claimed).toBe(true);
    if (!claim.claimed) return;
    const expected = {
      pid: process.pid,
      kind: GATEWAY_KIND,
      argv: ['hermes', 'gateway', 'run'],
      start_time: await readProcessStartTime(process.pid),
      hermes_home: home.path,
    };
    expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))).toEqual(expected);
    expect(parsePidRecord(await readFile(runtimeLockPath(home.path), 'utf8'))).toEqual(expected);
    expect(await getRunningPid(home.path)).toBe(process.pid);
    await claim.release();
    expect(await exists(pidFilePath(home.path))).toBe(false);
    expect(await exists(runtimeLockPath(home.path))).toBe(false);
  });

  it('refuses while another live gateway owns the home, with the exact message', async () => {
    const home = await tempHome();
    const gateway = await startClaimingGateway(home.path);
    expect(claimOutcome(gateway)).toEqual({ claimed: true, reason: null });
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim).toEqual({
      claimed: false,
      reason: 'already_running',
      pid: gateway.pid,
      message: alreadyRunningMessage(gateway.pid, home.path),
    });
    expect(claim.claimed === false && claim.message).toMatch(
      /^Another gateway instance is already running \(PID \d+, HERMES_HOME=.*\)\. Use 'hermes gateway restart'/,
    );
  });

  it('takes over the PID file and lock of a gateway that died', async () => {
    const home = await tempHome();
    const { child, record } = await liveStranger(home.path);
    await writeFile(pidFilePath(home.path), JSON.stringify(record));
    await writeFile(runtimeLockPath(home.path), JSON.stringify(record));
    await child.stop();
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))?.pid).toBe(process.pid);
    if (claim.claimed) await claim.release();
  });

  it('does not mistake a recycled PID (same number, different start time) for the gateway', async () => {
    const home = await tempHome();
    const { record } = await liveStranger(home.path);
    const recycled = { ...record, start_time: (record.start_time as number) + 1000 };
    await writeFile(pidFilePath(home.path), JSON.stringify(recycled));
    await writeFile(runtimeLockPath(home.path), JSON.stringify(recycled));
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    if (claim.claimed) await claim.release();
  });

  it('ignores a live process recorded for another home', async () => {
    const home = await tempHome();
    const other = await tempHome();
    const { record } = await liveStranger(other.path);
    await writeFile(pidFilePath(home.path), JSON.stringify(record));
    expect(await getRunningPid(home.path)).toBeNull();
    expect(await exists(pidFilePath(home.path))).toBe(false);
  });

  it('reads a legacy bare-integer PID file', async () => {
    const home = await tempHome();
    const { child } = await liveStranger(home.path);
    await writeFile(pidFilePath(home.path), `${child.pid}\n`);
    expect(await getRunningPid(home.path)).toBe(child.pid);
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed === false && claim.reason).toBe('already_running');
  });

  it('lets exactly one of several racing gateway processes win', async () => {
    const home = await tempHome();
    const racers = await Promise.all(
      Array.from({ length: 4 }, () => startClaimingGateway(home.path)),
    );
    const outcomes = racers.map(claimOutcome);
    expect(outcomes.filter((outcome) => outcome.claimed)).toHaveLength(1);
    const winner = racers[outcomes.findIndex((outcome) => outcome.claimed)] as SpawnedProcess;
    expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))?.pid).toBe(winner.pid);
    for (const outcome of outcomes.filter((item) => !item.claimed)) {
      expect(['already_running', 'lock_held', 'race_lost']).toContain(outcome.reason);
    }
  }, 30_000);
});

describe('getRunningPid', () => {
  it('falls back to a live runtime-status writer, but not one that says it stopped', async () => {
    const home = await tempHome();
    const { record } = await liveStranger(home.path);
    const status = { ...record, gateway_state: 'running' };
    await writeFile(runtimeStatusPath(home.path), JSON.stringify(status));
    expect(await getRunningPid(home.path)).toBe(record.pid);
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({ ...status, gateway_state: 'stopped' }),
    );
    expect(await getRunningPid(home.path)).toBeNull();
  });

  it('leaves files in place when asked not to clean up', async () => {
    const home = await tempHome();
    await writeFile(pidFilePath(home.path), 'garbage');
    expect(await getRunningPid(home.path, { cleanupStale: false })).toBeNull();
    expect(await exists(pidFilePath(home.path))).toBe(true);
    expect(await getRunningPid(home.path)).toBeNull();
    expect(await exists(pidFilePath(home.path))).toBe(false);
  });
});

describe('removePidFile', () => {
  it('removes the PID file only when it names this process', async () => {
    const home = await tempHome();
    await writeFile(pidFilePath(home.path), JSON.stringify({ pid: 999_999_9 }));
    await removePidFile(home.path);
    expect(await exists(pidFilePath(home.path))).toBe(true);
    await writeFile(pidFilePath(home.path), JSON.stringify({ pid: process.pid }));
    await removePidFile(home.path);
    expect(await exists(pidFilePath(home.path))).toBe(false);
  });
});

describe('acquireRuntimeLock', () => {
  it('refuses while a live holder has it and clears a dead holder’s lock', async () => {
    const home = await tempHome();
    const { child, record } = await liveStranger(home.path);
    await writeFile(runtimeLockPath(home.path), JSON.stringify(record));
    const mine = buildPidRecord({ pid: process.pid, argv: [], startTime: null, home: home.path });
    expect(await acquireRuntimeLock(home.path, mine)).toEqual({ acquired: false, holder: record });
    await child.stop();
    expect(await acquireRuntimeLock(home.path, mine)).toEqual({ acquired: true });
  });
});
