import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  LOOP_WATCHDOG_FALLBACK_SIGNAL,
  messages,
  SHUTDOWN_WATCHDOG_EXIT_CODE,
  SHUTDOWN_WATCHDOG_EXIT_REASON,
} from './constants.js';
import {
  armShutdownWatchdog,
  SHUTDOWN_DUMP_END,
  SHUTDOWN_DUMP_START,
} from './shutdown-watchdog.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(packageRoot, 'test/fixtures/shutdown-watchdog-child.ts');

async function runChild(home: string, behaviour: string) {
  const child = await spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', fixture],
    cwd: packageRoot,
    env: { ...process.env, SHUTDOWN_HOME: home, SHUTDOWN_BEHAVIOUR: behaviour },
    readyLine: 'ready',
  });
  const exit = await Promise.race([
    child.exited,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000)),
  ]);
  return { child, exit };
}

describe('shutdown watchdog (real processes)', () => {
  for (const behaviour of ['wedge', 'hang']) {
    it(`forces exit code 1 with forensics when teardown does not finish (${behaviour})`, async () => {
      const home = await tempHome();
      const { child, exit } = await runChild(home.path, behaviour);
      expect(exit).toEqual({ code: SHUTDOWN_WATCHDOG_EXIT_CODE, signal: null });
      const logFile = path.join(home.path, 'logs/gateway-shutdown-watchdog.log');
      const log = await readFile(logFile, 'utf8');
      const [headerLine, dumpStart, ...rest] = log.split('\n');
      expect(JSON.parse(headerLine ?? '')).toMatchObject({
        event: 'shutdown_watchdog_fired',
        pid: child.pid,
        delay_s: 0.5,
        snapshot: { draining: true, active_agents: 2 },
      });
      expect(dumpStart).toBe(SHUTDOWN_DUMP_START);
      expect(rest).toContain(SHUTDOWN_DUMP_END);
      if (behaviour === 'wedge') expect(log).toContain('drainForever');
      expect((await stat(logFile)).mode & 0o777).toBe(0o600);
      expect(child.stderr()).toContain(messages.shutdownWatchdogStderr(0.5, child.pid));
      expect(child.stderr()).toContain(messages.shutdownWatchdogCritical(0.5, logFile));
      expect(existsSync(path.join(home.path, 'gateway.pid'))).toBe(false);
      const status = JSON.parse(await readFile(path.join(home.path, 'gateway_state.json'), 'utf8'));
      expect(status).toMatchObject({
        gateway_state: 'degraded',
        exit_reason: SHUTDOWN_WATCHDOG_EXIT_REASON,
      });
    });
  }

  it('records a throwing state capture as snapshot_error and still exits', async () => {
    const home = await tempHome();
    const { exit } = await runChild(home.path, 'snapshot-throws');
    expect(exit).toEqual({ code: SHUTDOWN_WATCHDOG_EXIT_CODE, signal: null });
    const log = await readFile(path.join(home.path, 'logs/gateway-shutdown-watchdog.log'), 'utf8');
    expect(JSON.parse(log.split('\n')[0] ?? '')).toMatchObject({
      event: 'shutdown_watchdog_fired',
      snapshot: { snapshot_error: 'Error: state unavailable' },
    });
    expect(existsSync(path.join(home.path, 'gateway.pid'))).toBe(false);
  });

  it('falls back to a signal, with the last published state, when teardown is stuck in a native call', async () => {
    const home = await tempHome();
    const { child, exit } = await runChild(home.path, 'native');
    // The `sleep` child outlives its SIGKILLed parent: end the whole group.
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    expect(exit).toEqual({ code: null, signal: LOOP_WATCHDOG_FALLBACK_SIGNAL });
    const logFile = path.join(home.path, 'logs/gateway-shutdown-watchdog.log');
    const log = await readFile(logFile, 'utf8');
    const [headerLine, dumpStart, stackLine, dumpEnd] = log.split('\n');
    expect(JSON.parse(headerLine ?? '')).toMatchObject({
      event: 'shutdown_watchdog_fired',
      pid: child.pid,
      delay_s: 0.5,
      snapshot: { draining: true, active_agents: 2 },
    });
    expect(dumpStart).toBe(SHUTDOWN_DUMP_START);
    expect(stackLine).toMatch(/^\(main thread stack unavailable: .*native call/);
    expect(dumpEnd).toBe(SHUTDOWN_DUMP_END);
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
    expect(child.stderr()).toContain(messages.shutdownWatchdogStderr(0.5, child.pid));
    expect(child.stderr()).toContain(messages.shutdownWatchdogCritical(0.5, logFile));
    // The PID file is gone before the signal, so a successor can claim it.
    expect(existsSync(path.join(home.path, 'gateway.pid'))).toBe(false);
    const status = JSON.parse(await readFile(path.join(home.path, 'gateway_state.json'), 'utf8'));
    expect(status).toMatchObject({
      gateway_state: 'degraded',
      exit_reason: SHUTDOWN_WATCHDOG_EXIT_REASON,
      restart_requested: false,
    });
  });

  it('stays quiet when teardown finishes in time', async () => {
    const home = await tempHome();
    const { child, exit } = await runChild(home.path, 'finish');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('clean exit');
    expect(existsSync(path.join(home.path, 'logs/gateway-shutdown-watchdog.log'))).toBe(false);
    expect(existsSync(path.join(home.path, 'gateway.pid'))).toBe(true);
  });
});

describe('shutdown watchdog (in process)', () => {
  it('is not armed for a non-positive delay or when disabled', async () => {
    const home = await tempHome();
    expect(armShutdownWatchdog({ delayS: 0, home: home.path }).armed).toBe(false);
    expect(armShutdownWatchdog({ delayS: -1, home: home.path }).armed).toBe(false);
    expect(armShutdownWatchdog({ delayS: 60, home: home.path, enabled: false }).armed).toBe(false);
  });
});
