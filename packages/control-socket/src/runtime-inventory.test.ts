import { chmod, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SOCKET_FILE_NAME, SOCKET_POINTER_FILE_NAME } from './constants.js';
import { startControlServer } from './control-server.js';
import { pidFilePath } from './pid-file.js';
import { buildPidRecord } from './pid-record.js';
import { readProcessStartTime } from './process-identity.js';
import { classifySupervisorForPid, collectRuntimeInventory } from './runtime-inventory.js';
import { runtimeStatusPath } from './runtime-status.js';
import { startFixtureGateway } from './test-gateway-fixture.js';

async function serveIdentity(home: string, identity: Record<string, unknown>) {
  const started = await startControlServer({ home, handlers: { identify: () => identity } });
  if (!started.started) throw started.error;
  onTestFinished(() => started.server.close());
}

async function leaveDeadSocket(socketPath: string) {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, 0o600);
  await rename(socketPath, `${socketPath}.aside`);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rename(`${socketPath}.aside`, socketPath);
}

describe('collectRuntimeInventory', () => {
  it('lists one multiplexing gateway once even when it answers for two homes', async () => {
    const primary = await tempHome();
    const secondary = await tempHome();
    const identity = {
      protocol: 1,
      kind: 'hermes-gateway',
      pid: 9001,
      start_time: null,
      hermes_home: primary.path,
      profile: 'default',
      supervisor: 'systemd',
      code_sha: 'abc',
      code_version: '3.1.0',
      served_profiles: ['default', 'work'],
    };
    await serveIdentity(primary.path, identity);
    await serveIdentity(secondary.path, identity);
    expect(await collectRuntimeInventory([primary.path, secondary.path])).toEqual([
      {
        kind: 'gateway',
        profile: 'default',
        home: primary.path,
        pid: 9001,
        supervisor: 'systemd',
        code_sha: 'abc',
        code_version: '3.1.0',
        restart_via: 'systemctl restart (drain-first SIGUSR1 when supported)',
        detail: 'socket',
      },
    ]);
  });

  it('falls back to the state file when the socket is a crash leftover, classifying the supervisor from outside', async () => {
    const home = await tempHome();
    await leaveDeadSocket(path.join(home.path, SOCKET_FILE_NAME));
    const child = await startFixtureGateway({
      home: home.path,
      env: { ...process.env, INVOCATION_ID: 'unit-1' },
    });
    onTestFinished(() => child.stop().then(() => {}));
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({
        pid: child.pid,
        start_time: await readProcessStartTime(child.pid),
        gateway_state: 'running',
        code_sha: 'old',
      }),
    );
    const started = performance.now();
    const runtimes = await collectRuntimeInventory([home.path], { timeoutMs: 5000 });
    expect(performance.now() - started).toBeLessThan(2500);
    expect(runtimes).toEqual([
      expect.objectContaining({
        pid: child.pid,
        supervisor: 'systemd',
        code_sha: 'old',
        detail: 'runtime-status',
      }),
    ]);
  });

  it('falls back to a live PID file when the pointer points nowhere and no state file exists', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, SOCKET_POINTER_FILE_NAME), '/tmp/hermes-gw-missing.sock');
    // A clean environment, so a test runner under systemd does not leak INVOCATION_ID into it.
    const child = await startFixtureGateway({
      home: home.path,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    onTestFinished(() => child.stop().then(() => {}));
    const record = buildPidRecord({
      pid: child.pid,
      argv: ['hermes-gateway'],
      startTime: await readProcessStartTime(child.pid),
      home: home.path,
    });
    await writeFile(pidFilePath(home.path), JSON.stringify(record));
    expect(await collectRuntimeInventory([home.path], { inContainer: false })).toEqual([
      expect.objectContaining({ pid: child.pid, supervisor: 'manual', detail: 'pid-file' }),
    ]);
    expect(await collectRuntimeInventory([home.path], { inContainer: true })).toEqual([
      expect.objectContaining({
        pid: child.pid,
        supervisor: 'docker',
        restart_via: expect.stringMatching(/^docker restart/),
      }),
    ]);
  });

  it('does not list a live process that is not a gateway, whatever its files say', async () => {
    const home = await tempHome();
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    onTestFinished(() => child.stop().then(() => {}));
    const startTime = await readProcessStartTime(child.pid);
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({ pid: child.pid, start_time: startTime, gateway_state: 'running' }),
    );
    await writeFile(pidFilePath(home.path), `${child.pid}\n`);
    expect(await collectRuntimeInventory([home.path])).toEqual([]);
    // The same files name a gateway for an embedder whose predicate recognises it.
    const isGatewayCommandLine = (argv: readonly string[]) => argv[0] === 'sleep';
    expect(await collectRuntimeInventory([home.path], { isGatewayCommandLine })).toEqual([
      expect.objectContaining({ pid: child.pid, detail: 'runtime-status' }),
    ]);
  });

  it('returns nothing for homes without a gateway and never throws', async () => {
    const home = await tempHome();
    expect(await collectRuntimeInventory([home.path, '/nonexistent', '\0'])).toEqual([]);
  });
});

describe('classifySupervisorForPid', () => {
  it('reads the supervisor from the process environment, or says manual when it cannot', async () => {
    const child = await spawnProcess({
      command: 'sleep',
      args: ['30'],
      env: { ...process.env, HERMES_DESKTOP_MANAGED: '1', INVOCATION_ID: '' },
    });
    expect(await classifySupervisorForPid(child.pid)).toBe('desktop');
    expect(await classifySupervisorForPid(999_999_999, { inContainer: false })).toBe('manual');
    expect(await classifySupervisorForPid(999_999_999, { inContainer: true })).toBe('docker');
  });
});
