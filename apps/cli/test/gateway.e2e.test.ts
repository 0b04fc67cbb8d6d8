import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pidFilePath, readPidRecord } from '@hermes/control-socket';
import { isProcessRunning, spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { CLI_BIN, killGatewayAfterTest, parseJson, runCli, testHome } from './helpers.js';

interface StartResult {
  status: string;
  pid: number;
  url: string;
  answered_by: string;
}

interface StatusResult {
  running: boolean;
  source: string;
  pid: number | null;
  gateway_state: string | null;
  profile?: string | null;
}

describe('hermes gateway', () => {
  it('start → status (answered by the socket) → start again (nothing to do) → stop → status (not running)', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const start = await runCli(['gateway', 'start', '--port', '0', '--json'], { env });
    expect(start.code, start.stderr).toBe(0);
    const started = parseJson<StartResult>(start);
    expect(started).toMatchObject({ status: 'started', answered_by: 'socket' });
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(isProcessRunning(started.pid)).toBe(true);

    const status = await runCli(['gateway', 'status', '--json'], { env });
    expect(status.code).toBe(0);
    expect(parseJson<StatusResult>(status)).toMatchObject({
      running: true,
      source: 'socket',
      pid: started.pid,
      gateway_state: 'running',
      profile: 'default',
    });
    const human = await runCli(['gateway', 'status'], { env });
    expect(human.stdout).toContain(`pid ${started.pid}`);
    expect(human.stdout).toContain('answered on its control socket');

    const again = await runCli(['gateway', 'start', '--json'], { env });
    expect(parseJson(again)).toEqual({
      status: 'already_running',
      pid: started.pid,
      source: 'socket',
    });

    const health = await fetch(`${started.url}/health`);
    expect(health.status).toBe(200);

    const stop = await runCli(['gateway', 'stop', '--json'], { env });
    expect(stop.code).toBe(0);
    expect(parseJson(stop)).toMatchObject({ status: 'stopped', pid: started.pid });
    expect(isProcessRunning(started.pid)).toBe(false);
    expect(existsSync(path.join(home, 'gateway.sock'))).toBe(false);

    const after = await runCli(['gateway', 'status', '--json'], { env });
    expect(after.code).toBe(EXIT.failure);
    expect(parseJson<StatusResult>(after)).toMatchObject({
      running: false,
      pid: null,
      gateway_state: 'stopped',
    });
    const human2 = await runCli(['gateway', 'status'], { env });
    expect(human2.stdout).toContain('Gateway is not running.');
    expect(human2.stderr).toContain('hermes gateway start');
    const stopAgain = await runCli(['gateway', 'stop'], { env });
    expect(stopAgain).toMatchObject({ code: 0, stdout: 'Gateway is not running.\n' });
  });

  it('falls back to the runtime files when the socket does not answer, and says so', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const started = parseJson<StartResult>(
      await runCli(['gateway', 'start', '--port', '0', '--json'], { env }),
    );
    // The gateway runs on, but nobody can reach its control socket any more.
    await rm(path.join(home, 'gateway.sock'));
    const status = await runCli(['gateway', 'status', '--json'], { env });
    expect(status.code).toBe(0);
    expect(parseJson<StatusResult & { liveness: string }>(status)).toMatchObject({
      running: true,
      source: 'runtime_files',
      pid: started.pid,
      liveness: 'alive',
    });
    const human = await runCli(['gateway', 'status'], { env });
    expect(human.stdout).toContain('not answering on its control socket');
    expect(human.stdout).toContain('from the runtime files');
    // stop still finds it through its PID record.
    expect(parseJson(await runCli(['gateway', 'stop', '--json'], { env }))).toMatchObject({
      status: 'stopped',
      pid: started.pid,
    });
  });

  it('restarts with the options the gateway was started with', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const first = parseJson<StartResult>(
      await runCli(['gateway', 'start', '--port', '0', '--drain-timeout', '2', '--json'], { env }),
    );
    const restart = await runCli(['gateway', 'restart', '--json'], { env });
    expect(restart.code, restart.stderr).toBe(0);
    const second = parseJson<StartResult & { previous_pid: number }>(restart);
    expect(second.previous_pid).toBe(first.pid);
    expect(second.pid).not.toBe(first.pid);
    expect(isProcessRunning(first.pid)).toBe(false);
    // The new gateway got the first one's options back (read from its command line).
    const record = await readPidRecord(pidFilePath(home));
    expect(record?.pid).toBe(second.pid);
    expect(record?.argv?.slice(-4)).toEqual(['--port', '0', '--drain-timeout', '2']);
    const status = parseJson<StatusResult>(await runCli(['gateway', 'status', '--json'], { env }));
    expect(status).toMatchObject({ running: true, pid: second.pid });
    expect((await runCli(['gateway', 'stop'], { env })).code).toBe(0);
  });

  it('reports a gateway that cannot start, with its own message (exit 1)', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    // Listening beyond loopback without an API key is refused by the gateway.
    const result = await runCli(['gateway', 'start', '--host', '0.0.0.0', '--port', '0'], { env });
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toContain('the gateway exited during start (code 78)');
    expect(result.stderr).toContain('no API key is configured');
  });

  it('runs in the foreground and stops cleanly when hermes gets SIGTERM', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const run = await spawnProcess({
      command: process.execPath,
      args: [CLI_BIN, 'gateway', 'run', '--port', '0'],
      env,
      readyLine: /Hermes gateway listening on/,
      readyTimeoutMs: 30_000,
    });
    const status = parseJson<StatusResult>(await runCli(['gateway', 'status', '--json'], { env }));
    expect(status).toMatchObject({ running: true, source: 'socket' });
    expect(status.pid).not.toBe(run.pid);
    const second = await runCli(['gateway', 'run', '--port', '0'], { env });
    expect(second.code).toBe(EXIT.failure);
    expect(second.stderr).toContain('already runs');
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
    expect(isProcessRunning(status.pid ?? 0)).toBe(false);
  });

  it('makes a running gateway list toolsets as hermes tools enables and disables them', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const started = parseJson<StartResult>(
      await runCli(['gateway', 'start', '--port', '0', '--json'], { env }),
    );
    const enabled = async () => {
      const response = await fetch(`${started.url}/v1/toolsets`);
      const body = (await response.json()) as { data: { name: string; enabled: boolean }[] };
      return body.data.filter((toolset) => toolset.enabled).map((toolset) => toolset.name);
    };
    expect(await enabled()).toContain('terminal');
    const disabled = await runCli(
      ['tools', 'disable', 'terminal', '--platform', 'api_server', '--json'],
      { env },
    );
    expect(disabled.code).toBe(0);
    expect(
      parseJson<{ platform: string; toolsets: { name: string; enabled: boolean }[] }>(disabled),
    ).toMatchObject({
      platform: 'api_server',
      source: 'platform_toolsets.api_server',
    });
    expect(await enabled()).not.toContain('terminal');
    expect(await enabled()).toContain('file');
    await runCli(['tools', 'enable', 'terminal', '--platform', 'api_server'], { env });
    expect(await enabled()).toContain('terminal');
    await runCli(['gateway', 'stop'], { env });
  });
});

describe('hermes tools', () => {
  it('lists toolsets and edits platform_toolsets for the cli by default', async () => {
    const { env } = await testHome();
    const listed = parseJson<{
      platform: string;
      source: string;
      toolsets: { name: string; enabled: boolean }[];
    }>(await runCli(['tools', 'list', '--json'], { env }));
    expect(listed.platform).toBe('cli');
    expect(listed.source).toBe('default');
    expect(listed.toolsets.find((toolset) => toolset.name === 'todo')?.enabled).toBe(true);
    await runCli(['tools', 'disable', 'todo', 'skills'], { env });
    const after = parseJson<{ toolsets: { name: string; enabled: boolean }[] }>(
      await runCli(['tools', 'list', '--json'], { env }),
    );
    expect(
      after.toolsets.filter((toolset) => !toolset.enabled).map((toolset) => toolset.name),
    ).toEqual(expect.arrayContaining(['todo', 'skills']));
    expect(
      (await runCli(['config', 'get', 'platform_toolsets.cli'], { env })).stdout,
    ).not.toContain('todo');
    const unknown = await runCli(['tools', 'enable', 'telepathy'], { env });
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toContain('Known toolsets: file, terminal');
  });

  it('refuses names that are only properties of an object, such as constructor', async () => {
    const { env } = await testHome();
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const enabled = await runCli(['tools', 'enable', name], { env });
      expect(enabled.code, name).toBe(EXIT.usage);
      expect(enabled.stderr).toContain(`unknown toolset: ${name.toLowerCase()}`);
    }
    expect((await runCli(['config', 'get', 'platform_toolsets.cli'], { env })).code).toBe(
      EXIT.failure,
    );
  });

  it('says why disabling safe leaves its tools on, and changes nothing then', async () => {
    const { env } = await testHome();
    const disabled = await runCli(['tools', 'disable', 'safe'], { env });
    expect(disabled.code).toBe(EXIT.failure);
    expect(disabled.stderr).toContain(
      'safe is not enabled on cli; its tools stay on through file, skills, todo',
    );
    expect((await runCli(['config', 'get', 'platform_toolsets.cli'], { env })).code).toBe(
      EXIT.failure,
    );
    // Enabled on its own next to file: disabling it takes it out, and says file keeps two tools.
    await runCli(['config', 'set', 'platform_toolsets.cli', '[safe, file]'], { env });
    const taken = await runCli(['tools', 'disable', 'safe'], { env });
    expect(taken.code).toBe(EXIT.failure);
    expect(taken.stderr).toContain('read_file, search_files stay on through file');
    expect((await runCli(['config', 'get', 'platform_toolsets.cli'], { env })).stdout).toBe(
      '- file\n',
    );
    // Only read-only tools: disabling safe turns them off.
    await runCli(['config', 'set', 'platform_toolsets.cli', '[safe, terminal]'], { env });
    expect((await runCli(['tools', 'disable', 'safe'], { env })).code).toBe(EXIT.ok);
    expect((await runCli(['config', 'get', 'platform_toolsets.cli'], { env })).stdout).toBe(
      '- terminal\n',
    );
  });
});
