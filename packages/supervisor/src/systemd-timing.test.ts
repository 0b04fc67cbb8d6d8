import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { resolveSystemdTimeoutStopSec } from './budgets.js';
import { messages } from './constants.js';
import { SupervisorError } from './errors.js';
import {
  checkSystemdTimingAlignment,
  detectSystemdTimingAlignment,
  parseSystemctlShow,
  parseSystemdDurationToMicroseconds,
  parseSystemdTimespan,
  querySystemdUnitTiming,
  readSystemdUnitTiming,
  resolveSystemdRestartWaitS,
  systemdUnitFromCgroup,
} from './systemd-timing.js';

/** What `systemctl show hermes-gateway.service -p …` prints for a typical unit. */
const showOutput = (timeoutStop: string, loadState = 'loaded') =>
  `LoadState=${loadState}\nRestartUSec=100ms\nTimeoutStartUSec=1min 30s\nTimeoutStopUSec=${timeoutStop}\n`;

/**
 * A real executable standing in for `systemctl`: records its arguments and prints `output`
 * (or fails with `exitCode`).
 */
async function fakeSystemctl(output: string, exitCode = 0) {
  const home = await tempHome();
  const argsFile = path.join(home.path, 'args');
  const executable = path.join(home.path, 'systemctl');
  await writeFile(
    executable,
    `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nprintf '%s' '${output}'\nexit ${exitCode}\n`,
  );
  await chmod(executable, 0o755);
  return {
    executable,
    args: async () => (await readFile(argsFile, 'utf8')).trimEnd().split('\n'),
    home: home.path,
  };
}

describe('parseSystemdTimespan', () => {
  it('reads the spans systemctl show prints', () => {
    expect(parseSystemdTimespan('100ms')).toBe(100_000);
    expect(parseSystemdTimespan('1min 30s')).toBe(90_000_000);
    expect(parseSystemdTimespan('2h 30min')).toBe(9_000_000_000);
    expect(parseSystemdTimespan('1d 2h')).toBe(93_600_000_000);
    expect(parseSystemdTimespan('1w 2d')).toBe(777_600_000_000);
    expect(parseSystemdTimespan('1y 1month')).toBe((31_557_600 + 2_629_800) * 1e6);
    expect(parseSystemdTimespan('1.500s')).toBe(1_500_000);
    expect(parseSystemdTimespan('250us')).toBe(250);
    expect(parseSystemdTimespan('0')).toBe(0);
    expect(parseSystemdTimespan('infinity')).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads what unit files accept: bare seconds, no spaces, long names, m vs M', () => {
    expect(parseSystemdTimespan('90')).toBe(90_000_000);
    expect(parseSystemdTimespan('2h30min')).toBe(9_000_000_000);
    expect(parseSystemdTimespan('5 minutes 3 seconds')).toBe(303_000_000);
    expect(parseSystemdTimespan('20µs')).toBe(20);
    expect(parseSystemdTimespan('1m')).toBe(60_000_000);
    expect(parseSystemdTimespan('1M')).toBe(2_629_800_000_000);
  });

  it('refuses junk', () => {
    for (const junk of [
      '',
      '   ',
      'forever',
      '10 parsecs',
      '-5s',
      '1.2.3s',
      '5s x',
      'infinity s',
    ]) {
      expect(parseSystemdTimespan(junk), junk).toBeUndefined();
    }
  });

  it('keeps the reference parser: positive and finite only', () => {
    expect(parseSystemdDurationToMicroseconds('90s')).toBe(90_000_000);
    expect(parseSystemdDurationToMicroseconds('3min')).toBe(180_000_000);
    expect(parseSystemdDurationToMicroseconds('1min 30s')).toBe(90_000_000);
    expect(parseSystemdDurationToMicroseconds('45')).toBe(45_000_000);
    for (const none of ['', 'forever', '10 parsecs', '0s', '0', 'infinity']) {
      expect(parseSystemdDurationToMicroseconds(none), none).toBeUndefined();
    }
  });
});

describe('systemctl show', () => {
  it('reads the timing properties, keeping values with spaces and = whole', () => {
    const properties = parseSystemctlShow(
      'A=1\nExecStart={ path=/bin/x ; argv[]=x a=b }\n\nA=2\njunk\n',
    );
    expect(properties.get('A')).toBe('1');
    expect(properties.get('ExecStart')).toBe('{ path=/bin/x ; argv[]=x a=b }');
    expect(readSystemdUnitTiming(showOutput('infinity'))).toEqual({
      loadState: 'loaded',
      restartUSec: 100_000,
      timeoutStartUSec: 90_000_000,
      timeoutStopUSec: Number.POSITIVE_INFINITY,
    });
    expect(readSystemdUnitTiming('RestartUSec=soon\n')).toEqual({});
  });

  it('sizes the restart wait as 60 + RestartUSec + TimeoutStartUSec', () => {
    expect(resolveSystemdRestartWaitS(readSystemdUnitTiming(showOutput('1min 30s')))).toBe(150.1);
    expect(
      resolveSystemdRestartWaitS(readSystemdUnitTiming('RestartUSec=5s\nTimeoutStartUSec=2min\n')),
    ).toBe(185);
    // An unbounded start timeout, or nothing known, leaves a bounded wait.
    expect(
      resolveSystemdRestartWaitS(
        readSystemdUnitTiming('RestartUSec=100ms\nTimeoutStartUSec=infinity\n'),
      ),
    ).toBe(60.1);
    expect(resolveSystemdRestartWaitS({})).toBe(60);
  });

  it('flags a TimeoutStopSec that would SIGKILL the gateway before its shutdown watchdog', () => {
    const required = resolveSystemdTimeoutStopSec({ drainS: 60 });
    expect(required).toBe(130);
    const stale = checkSystemdTimingAlignment({
      timing: readSystemdUnitTiming(showOutput('1min 30s')),
      drainS: 60,
      unit: 'hermes-gateway.service',
    });
    expect(stale).toEqual({
      status: 'stale',
      timeoutStopS: 90,
      requiredTimeoutStopS: 130,
      message: messages.staleSystemdUnit('hermes-gateway.service', 90, 130),
    });
    expect(stale.status === 'stale' && stale.message).toMatch(/^Stale systemd unit detected: /);
    expect(
      checkSystemdTimingAlignment({
        timing: readSystemdUnitTiming(showOutput('3min')),
        drainS: 60,
      }),
    ).toEqual({ status: 'aligned', timeoutStopS: 180, requiredTimeoutStopS: 130 });
    expect(
      checkSystemdTimingAlignment({
        timing: readSystemdUnitTiming(showOutput('infinity')),
        drainS: 60,
      }).status,
    ).toBe('aligned');
    // A cron drain raises what is needed: 300 + 10 + 30.
    expect(
      checkSystemdTimingAlignment({
        timing: readSystemdUnitTiming(showOutput('3min')),
        drainS: 60,
        cronDrainS: 300,
      }),
    ).toMatchObject({ status: 'stale', requiredTimeoutStopS: 340 });
    // systemctl show answers for a unit that does not exist, with defaults: not evidence.
    expect(
      checkSystemdTimingAlignment({
        timing: readSystemdUnitTiming(showOutput('1min 30s', 'not-found')),
        drainS: 60,
      }),
    ).toMatchObject({ status: 'unknown', reason: 'unit load state is not-found' });
    expect(checkSystemdTimingAlignment({ timing: {}, drainS: 60 }).status).toBe('unknown');
  });

  it('finds the service unit and its manager in /proc/<pid>/cgroup', () => {
    expect(systemdUnitFromCgroup('0::/system.slice/hermes-gateway.service\n')).toEqual({
      unit: 'hermes-gateway.service',
      scope: 'system',
    });
    expect(
      systemdUnitFromCgroup(
        '0::/user.slice/user-1000.slice/user@1000.service/app.slice/hermes-gateway-work.service\n',
      ),
    ).toEqual({ unit: 'hermes-gateway-work.service', scope: 'user' });
    expect(
      systemdUnitFromCgroup(
        '12:cpu,cpuacct:/system.slice/hermes.service\n1:name=systemd:/system.slice/hermes.service\n',
      ),
    ).toEqual({ unit: 'hermes.service', scope: 'system' });
    expect(
      systemdUnitFromCgroup('0::/user.slice/user-1000.slice/session-3.scope\n'),
    ).toBeUndefined();
    expect(systemdUnitFromCgroup('')).toBeUndefined();
  });
});

describe('querySystemdUnitTiming (a real executable as systemctl)', () => {
  it('asks for the timing properties of the unit, with --user for a user unit', async () => {
    const systemctl = await fakeSystemctl(showOutput('1min 30s'));
    const timing = await querySystemdUnitTiming({
      unit: 'hermes-gateway.service',
      scope: 'user',
      systemctl: systemctl.executable,
    });
    expect(await systemctl.args()).toEqual([
      '--user',
      'show',
      'hermes-gateway.service',
      '-p',
      'LoadState',
      '-p',
      'RestartUSec',
      '-p',
      'TimeoutStartUSec',
      '-p',
      'TimeoutStopUSec',
    ]);
    expect(timing).toEqual({
      loadState: 'loaded',
      restartUSec: 100_000,
      timeoutStartUSec: 90_000_000,
      timeoutStopUSec: 90_000_000,
    });
  });

  it('fails with a SupervisorError when systemctl fails or is missing, and refuses a non-unit', async () => {
    const failing = await fakeSystemctl('', 1);
    for (const executable of [failing.executable, path.join(failing.home, 'missing')]) {
      const error = await querySystemdUnitTiming({
        unit: 'hermes-gateway.service',
        scope: 'system',
        systemctl: executable,
      }).catch((caught: unknown) => caught);
      expect(SupervisorError.isInstance(error) && error.code).toBe('systemctl_failed');
    }
    const refused = await querySystemdUnitTiming({
      unit: '--host=evil',
      scope: 'system',
      systemctl: failing.executable,
    }).catch((caught: unknown) => caught);
    expect(SupervisorError.isInstance(refused) && refused.code).toBe('invalid_systemd_unit');
  });

  it('runs the startup check only under systemd and reports a stale unit', async () => {
    const systemctl = await fakeSystemctl(showOutput('1min 30s'));
    const cgroupFile = path.join(systemctl.home, 'cgroup');
    await writeFile(cgroupFile, '0::/system.slice/hermes-gateway.service\n');
    const check = (env: NodeJS.ProcessEnv) =>
      detectSystemdTimingAlignment({
        drainS: 60,
        env,
        cgroupFile,
        systemctl: systemctl.executable,
      });
    expect(await check({ PATH: process.env.PATH })).toBeUndefined();
    expect(await check({ PATH: process.env.PATH, INVOCATION_ID: 'abc123' })).toEqual({
      status: 'stale',
      timeoutStopS: 90,
      requiredTimeoutStopS: 130,
      message: messages.staleSystemdUnit('hermes-gateway.service', 90, 130),
    });
    await writeFile(cgroupFile, '0::/user.slice/user-1000.slice/session-3.scope\n');
    expect(await check({ PATH: process.env.PATH, INVOCATION_ID: 'abc123' })).toMatchObject({
      status: 'unknown',
      reason: 'not running inside a systemd service unit',
    });
  });
});
