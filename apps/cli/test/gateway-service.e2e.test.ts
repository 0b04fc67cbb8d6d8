import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessRunning } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { gatewayBinPath } from '../src/commands/gateway/gateway-process.js';
import { killGatewayAfterTest, parseJson, runCli, testHome } from './helpers.js';

/**
 * A `systemctl` that does what systemd would for the installed unit: `stop` ends the gateway,
 * `restart` ends it and starts a new one as the unit would (with INVOCATION_ID set).
 */
const FAKE_SYSTEMCTL = `#!/bin/sh
echo "$*" >> "$FAKE_SYSTEMCTL_LOG"
pid() { "$FAKE_NODE" -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.env.HERMES_HOME + "/gateway.pid", "utf8")).pid))'; }
case "$2" in
  stop) kill -TERM "$(pid)" ;;
  restart)
    old="$(pid)"; kill -TERM "$old"
    while kill -0 "$old" 2>/dev/null; do sleep 0.1; done
    INVOCATION_ID=fake-restart nohup "$FAKE_NODE" "$FAKE_GATEWAY_BIN" --port 0 >/dev/null 2>&1 &
    ;;
  show) exit 1 ;;
esac
exit 0
`;

async function systemdLike() {
  const test = await testHome();
  killGatewayAfterTest(test.home);
  const bin = path.join(test.userHome, 'bin');
  await mkdir(bin);
  await writeFile(path.join(bin, 'systemctl'), FAKE_SYSTEMCTL);
  await chmod(path.join(bin, 'systemctl'), 0o755);
  const log = path.join(test.userHome, 'systemctl.log');
  const env = {
    ...test.env,
    PATH: `${bin}:${test.env.PATH}`,
    FAKE_SYSTEMCTL_LOG: log,
    FAKE_NODE: process.execPath,
    FAKE_GATEWAY_BIN: gatewayBinPath(),
  };
  expect((await runCli(['gateway', 'install', '--no-start'], { env })).code).toBe(0);
  // The gateway as systemd runs it: INVOCATION_ID makes it declare supervisor "systemd".
  const started = parseJson<{ pid: number }>(
    await runCli(['gateway', 'start', '--port', '0', '--json'], {
      env: { ...env, INVOCATION_ID: 'fake' },
    }),
  );
  return { ...test, env, log, pid: started.pid };
}

describe('a gateway run by its installed systemd unit', () => {
  it('is stopped through systemctl, not by a signal systemd would not expect', async () => {
    const { env, log, pid } = await systemdLike();
    const status = parseJson<{ supervisor: string }>(
      await runCli(['gateway', 'status', '--json'], { env }),
    );
    expect(status.supervisor).toBe('systemd');
    const stop = await runCli(['gateway', 'stop', '--json'], { env });
    expect(stop.code, stop.stderr).toBe(0);
    expect(parseJson(stop)).toMatchObject({ status: 'stopped', pid });
    expect(await readFile(log, 'utf8')).toBe('--user stop hermes-gateway.service\n');
    expect(isProcessRunning(pid)).toBe(false);
  });

  it('is restarted through systemctl and waited for until the new gateway answers', async () => {
    const { env, log, pid } = await systemdLike();
    const restart = await runCli(['gateway', 'restart', '--json'], { env });
    expect(restart.code, restart.stderr).toBe(0);
    const body = parseJson<{ status: string; pid: number; previous_pid: number; service: string }>(
      restart,
    );
    expect(body).toMatchObject({
      status: 'restarted',
      previous_pid: pid,
      service: 'hermes-gateway.service',
    });
    expect(body.pid).not.toBe(pid);
    expect(await readFile(log, 'utf8')).toContain('--user restart hermes-gateway.service\n');
    expect(parseJson(await runCli(['gateway', 'status', '--json'], { env }))).toMatchObject({
      running: true,
      pid: body.pid,
      supervisor: 'systemd',
    });
    await runCli(['gateway', 'stop'], { env });
  });
});
