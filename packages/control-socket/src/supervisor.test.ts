import { describe, expect, it } from 'vitest';
import {
  detectContainer,
  detectSupervisorKind,
  EXTERNAL_SUPERVISOR_FLAG,
  GATEWAY_EXIT_CODES,
  isGatewaySupervisorProcess,
  restartMechanismFor,
} from './supervisor.js';

describe('detectSupervisorKind', () => {
  it('takes the first match: systemd, launchd, desktop, external, manual', () => {
    const argv = ['node', 'hermes', EXTERNAL_SUPERVISOR_FLAG];
    const all = {
      INVOCATION_ID: 'x',
      XPC_SERVICE_NAME: 'ai.hermes.gateway',
      HERMES_DESKTOP_MANAGED: '1',
    };
    expect(detectSupervisorKind({ env: all, argv, platform: 'darwin' })).toBe('systemd');
    const { INVOCATION_ID: _systemd, ...noSystemd } = all;
    expect(detectSupervisorKind({ env: noSystemd, argv, platform: 'darwin' })).toBe('launchd');
    expect(detectSupervisorKind({ env: noSystemd, argv, platform: 'linux' })).toBe('desktop');
    expect(detectSupervisorKind({ env: {}, argv, platform: 'linux', inContainer: true })).toBe(
      'external',
    );
    const plain = { env: {}, argv: ['node'], platform: 'linux' } as const;
    expect(detectSupervisorKind({ ...plain, inContainer: true })).toBe('docker');
    expect(detectSupervisorKind({ ...plain, env: { HERMES_S6_SUPERVISED_CHILD: '1' } })).toBe(
      'docker',
    );
    expect(detectSupervisorKind(plain)).toBe('manual');
  });

  it('needs a Hermes launchd label or a launchd socket on macOS', () => {
    const other = { XPC_SERVICE_NAME: 'com.apple.Terminal' };
    expect(detectSupervisorKind({ env: other, argv: [], platform: 'darwin' })).toBe('manual');
    expect(
      detectSupervisorKind({ env: { LAUNCHD_SOCKET: '/x' }, argv: [], platform: 'darwin' }),
    ).toBe('launchd');
  });
});

describe('detectContainer', () => {
  it('trusts the container variable', async () => {
    expect(await detectContainer({ container: 'podman' })).toBe(true);
  });
});

describe('isGatewaySupervisorProcess', () => {
  it('recognises systemd, s6, launchd and an explicit external supervisor', () => {
    expect(isGatewaySupervisorProcess({ INVOCATION_ID: 'a' })).toBe(true);
    expect(isGatewaySupervisorProcess({ HERMES_S6_SUPERVISED_CHILD: '1' })).toBe(true);
    expect(isGatewaySupervisorProcess({ XPC_SERVICE_NAME: 'ai.hermes.x' })).toBe(true);
    expect(isGatewaySupervisorProcess({ XPC_SERVICE_NAME: '0' })).toBe(false);
    expect(isGatewaySupervisorProcess({ HERMES_GATEWAY_EXTERNAL_SUPERVISOR: 'yes' })).toBe(true);
    expect(isGatewaySupervisorProcess({ HERMES_GATEWAY_EXTERNAL_SUPERVISOR: 'no' })).toBe(false);
    expect(isGatewaySupervisorProcess({})).toBe(false);
  });
});

describe('exit codes and restart hints', () => {
  it('uses 0, 1, 75 (EX_TEMPFAIL) and 78 (EX_CONFIG)', () => {
    expect(GATEWAY_EXIT_CODES).toEqual({
      clean: 0,
      failure: 1,
      serviceRestart: 75,
      fatalConfig: 78,
    });
  });

  it('names the restart command per supervisor and profile', () => {
    expect(restartMechanismFor('systemd', 'work')).toMatch(/^systemctl restart/);
    expect(restartMechanismFor('manual', 'work')).toBe('hermes -p work gateway restart');
    expect(restartMechanismFor('manual', 'default')).toBe('hermes gateway restart');
  });
});
