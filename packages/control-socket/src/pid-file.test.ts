import { readFile, writeFile } from 'node:fs/promises';
import { type SpawnedProcess, spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { GATEWAY_KIND } from './constants.js';
import {
  alreadyRunningMessage,
  claimPidFile,
  getRunningPid,
  pidFilePath,
  removePidFile,
} from './pid-file.js';
import { buildPidRecord, type PidRecord, parsePidRecord } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { acquireRuntimeLock, runtimeLockPath } from './runtime-lock.js';
import { runtimeStatusPath } from './runtime-status.js';
import { fixtureClaimOutcome, startFixtureGateway } from './test-gateway-fixture.js';

function stopWhenDone(child: SpawnedProcess): SpawnedProcess {
  onTestFinished(async () => {
    await child.stop();
  });
  return child;
}

/** A live process whose command line is a gateway's, with the record it would have written. */
async function liveGateway(home: string, command?: readonly string[]) {
  const child = stopWhenDone(
    await startFixtureGateway(command === undefined ? { home } : { home, command }),
  );
  const startTime = await readProcessStartTime(child.pid);
  const argv = command ?? ['hermes-gateway'];
  return { child, record: buildPidRecord({ pid: child.pid, argv, startTime, home }) };
}

/** A live process that is not a gateway (`sleep 30`), with a record naming it. */
async function liveStranger(home: string) {
  const child = stopWhenDone(await spawnProcess({ command: 'sleep', args: ['30'] }));
  const startTime = await readProcessStartTime(child.pid);
  return { child, record: buildPidRecord({ pid: child.pid, argv: ['x'], startTime, home }) };
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  );
}

async function writeRecord(file: string, record: PidRecord | string): Promise<void> {
  await writeFile(file, typeof record === 'string' ? record : JSON.stringify(record));
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
    const gateway = stopWhenDone(await startFixtureGateway({ home: home.path, claim: true }));
    expect(fixtureClaimOutcome(gateway)).toEqual({ claimed: true, reason: null });
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

  it('refuses while a gateway started as `hermes -p work gateway run` owns the home', async () => {
    const home = await tempHome();
    const gateway = stopWhenDone(
      await startFixtureGateway({
        home: home.path,
        claim: true,
        command: ['hermes', '-p', 'work', 'gateway', 'run'],
      }),
    );
    expect(fixtureClaimOutcome(gateway)).toEqual({ claimed: true, reason: null });
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed === false && [claim.reason, claim.pid]).toEqual([
      'already_running',
      gateway.pid,
    ]);
  });

  it('takes over the PID file and lock of a gateway that died', async () => {
    const home = await tempHome();
    const { child, record } = await liveGateway(home.path);
    await writeRecord(pidFilePath(home.path), record);
    await writeRecord(runtimeLockPath(home.path), record);
    await child.stop();
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))?.pid).toBe(process.pid);
    if (claim.claimed) await claim.release();
  });

  it('does not mistake a recycled PID (same number, different start time) for the gateway', async () => {
    const home = await tempHome();
    const { record } = await liveGateway(home.path);
    const recycled = { ...record, start_time: (record.start_time as number) + 1000 };
    await writeRecord(pidFilePath(home.path), recycled);
    await writeRecord(runtimeLockPath(home.path), recycled);
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    if (claim.claimed) await claim.release();
  });

  it('ignores a live gateway recorded for another home', async () => {
    const home = await tempHome();
    const other = await tempHome();
    const { record } = await liveGateway(other.path);
    await writeRecord(pidFilePath(home.path), record);
    expect(await getRunningPid(home.path)).toBeNull();
    expect(await exists(pidFilePath(home.path))).toBe(false);
  });

  it('reads a legacy bare-integer PID file naming a live gateway', async () => {
    const home = await tempHome();
    const { child } = await liveGateway(home.path);
    await writeRecord(pidFilePath(home.path), `${child.pid}\n`);
    expect(await getRunningPid(home.path)).toBe(child.pid);
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed === false && claim.reason).toBe('already_running');
  });

  it('takes over stale records naming a live process that is not a gateway, in every record form', async () => {
    const home = await tempHome();
    const { child, record } = await liveStranger(home.path);
    const { start_time: _startTime, ...withoutStartTime } = record;
    // A legacy bare integer, a record without a start time (both unprovable by start time), and a
    // full record whose start time matches the live process: none of them is a gateway.
    for (const stale of [`${child.pid}\n`, withoutStartTime, record]) {
      await writeRecord(pidFilePath(home.path), stale);
      await writeRecord(runtimeLockPath(home.path), stale);
      expect(await getRunningPid(home.path, { cleanupStale: false })).toBeNull();
      const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
      expect(claim.claimed, JSON.stringify(stale)).toBe(true);
      expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))?.pid).toBe(process.pid);
      expect(parsePidRecord(await readFile(runtimeLockPath(home.path), 'utf8'))?.pid).toBe(
        process.pid,
      );
      if (claim.claimed) await claim.release();
    }
  });

  it('is not held by a live `hermes gateway status` (a CLI command, not a gateway)', async () => {
    const home = await tempHome();
    const { record } = await liveGateway(home.path, ['hermes', 'gateway', 'status']);
    await writeRecord(pidFilePath(home.path), record);
    await writeRecord(runtimeLockPath(home.path), record);
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    if (claim.claimed) await claim.release();
  });

  it('takes a custom predicate for a gateway embedded under another command line', async () => {
    const home = await tempHome();
    const { child, record } = await liveStranger(home.path);
    await writeRecord(pidFilePath(home.path), record);
    await writeRecord(runtimeLockPath(home.path), record);
    const isGatewayCommandLine = (argv: readonly string[]) => argv[0] === 'sleep';
    expect(await getRunningPid(home.path, { isGatewayCommandLine })).toBe(child.pid);
    const claim = await claimPidFile({ home: home.path, isGatewayCommandLine });
    expect(claim.claimed === false && [claim.reason, claim.pid]).toEqual([
      'already_running',
      child.pid,
    ]);
    const mine = buildPidRecord({ pid: process.pid, argv: [], startTime: null, home: home.path });
    expect(await acquireRuntimeLock(home.path, mine, { isGatewayCommandLine })).toEqual({
      acquired: false,
      holder: record,
    });
  });

  it('shares the claim when this process claims a home it already holds', async () => {
    const home = await tempHome();
    const first = await claimPidFile({ home: home.path, releaseOnExit: false });
    const second = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(first.claimed).toBe(true);
    expect(second).toMatchObject({ claimed: true, record: { pid: process.pid } });
    if (!first.claimed || !second.claimed) return;
    expect(second.record).toEqual(first.record);
    expect(await getRunningPid(home.path)).toBe(process.pid);
    // The files stay until the last claim goes; releasing one claim twice counts once.
    await second.release();
    await second.release();
    expect(await exists(pidFilePath(home.path))).toBe(true);
    expect(await exists(runtimeLockPath(home.path))).toBe(true);
    await first.release();
    expect(await exists(pidFilePath(home.path))).toBe(false);
    expect(await exists(runtimeLockPath(home.path))).toBe(false);
    // And the home can be claimed afresh.
    const third = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(third.claimed).toBe(true);
    if (third.claimed) await third.release();
  });

  it('takes back its own lock left behind by a claim that was never released', async () => {
    const home = await tempHome();
    const record = buildPidRecord({
      pid: process.pid,
      argv: ['earlier'],
      startTime: await readProcessStartTime(process.pid),
      home: home.path,
    });
    await writeRecord(runtimeLockPath(home.path), record);
    const claim = await claimPidFile({ home: home.path, releaseOnExit: false });
    expect(claim.claimed).toBe(true);
    if (claim.claimed) await claim.release();
  });

  it('lets exactly one of several racing gateway processes win', async () => {
    const home = await tempHome();
    const racers = await Promise.all(
      Array.from({ length: 4 }, () => startFixtureGateway({ home: home.path, claim: true })),
    );
    for (const racer of racers) stopWhenDone(racer);
    const outcomes = racers.map(fixtureClaimOutcome);
    expect(outcomes.filter((outcome) => outcome?.claimed)).toHaveLength(1);
    const winner = racers[outcomes.findIndex((outcome) => outcome?.claimed)] as SpawnedProcess;
    expect(parsePidRecord(await readFile(pidFilePath(home.path), 'utf8'))?.pid).toBe(winner.pid);
    for (const outcome of outcomes.filter((item) => !item?.claimed)) {
      expect(['already_running', 'lock_held', 'race_lost']).toContain(outcome?.reason);
    }
  }, 30_000);
});

describe('getRunningPid', () => {
  it('falls back to a live runtime-status writer, but not one that says it stopped', async () => {
    const home = await tempHome();
    const { record } = await liveGateway(home.path);
    const status = { ...record, gateway_state: 'running' };
    await writeFile(runtimeStatusPath(home.path), JSON.stringify(status));
    expect(await getRunningPid(home.path)).toBe(record.pid);
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({ ...status, gateway_state: 'stopped' }),
    );
    expect(await getRunningPid(home.path)).toBeNull();
  });

  it('does not take a runtime-status writer that is not a gateway for one', async () => {
    const home = await tempHome();
    const { record } = await liveStranger(home.path);
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({ ...record, gateway_state: 'running' }),
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
  it('refuses while a live gateway holds it and clears a dead holder’s lock', async () => {
    const home = await tempHome();
    const { child, record } = await liveGateway(home.path);
    await writeRecord(runtimeLockPath(home.path), record);
    const mine = buildPidRecord({ pid: process.pid, argv: [], startTime: null, home: home.path });
    expect(await acquireRuntimeLock(home.path, mine)).toEqual({ acquired: false, holder: record });
    await child.stop();
    expect(await acquireRuntimeLock(home.path, mine)).toEqual({ acquired: true });
  });

  it('clears a lock held by a live process that is not a gateway', async () => {
    const home = await tempHome();
    const { record } = await liveStranger(home.path);
    await writeRecord(runtimeLockPath(home.path), record);
    const mine = buildPidRecord({ pid: process.pid, argv: [], startTime: null, home: home.path });
    expect(await acquireRuntimeLock(home.path, mine)).toEqual({ acquired: true });
  });
});
