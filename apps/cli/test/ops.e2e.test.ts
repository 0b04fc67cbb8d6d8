import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessRunning, startModelServer } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { killGatewayAfterTest, parseJson, runCli, testHome, writeModelConfig } from './helpers.js';

interface Finding {
  check: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  message: string;
  fix?: string;
  fixed?: boolean;
}

function statuses(findings: Finding[], check: string): string[] {
  return findings.filter((finding) => finding.check === check).map((finding) => finding.status);
}

describe('hermes update --plan', () => {
  it('lists the running gateway of every profile, found through its socket, with how to restart it', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    await runCli(['profile', 'create', 'work'], { env });
    const started = parseJson<{ pid: number }>(
      await runCli(['gateway', 'start', '--port', '0', '--json'], { env }),
    );
    const plan = await runCli(['update', '--plan', '--json'], { env });
    expect(plan.code).toBe(0);
    const body = parseJson<{
      expected_version: string;
      expected_sha: string | null;
      profiles: { name: string }[];
      runtimes: { profile: string; pid: number; detail: string; restart_via: string }[];
      fleet: { pid: number; state: string; source?: string }[];
    }>(plan);
    expect(body.profiles.map((profile) => profile.name)).toEqual(['default', 'work']);
    expect(body.runtimes).toEqual([
      expect.objectContaining({ profile: 'default', pid: started.pid, detail: 'socket' }),
    ]);
    // Both run from this checkout, so both name its HEAD and the gateway is up to date.
    expect(body.expected_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(body.fleet).toEqual([
      expect.objectContaining({
        pid: started.pid,
        source: 'socket',
        code_sha: body.expected_sha,
        state: 'current',
      }),
    ]);
    // After an update the CLI names another commit: the running gateway is stale.
    const after = await runCli(['update', '--plan'], {
      env: { ...env, HERMES_CODE_SHA: 'f'.repeat(40) },
    });
    expect(after.stdout).toContain(
      `default (pid ${started.pid}) @ ${body.expected_sha?.slice(0, 8)} — STALE`,
    );
    const table = await runCli(['update', '--plan'], { env });
    expect(table.stdout).toMatch(/PROFILE\s+PID\s+SUPERVISOR/);
    expect(table.stdout).toContain(String(started.pid));
    const bare = await runCli(['update'], { env });
    expect(bare.code).toBe(EXIT.usage);
    expect(bare.stderr).toContain('hermes update --plan');
    // @hermes/cli is not on npm: a source checkout is told how to update itself.
    expect(bare.stderr).toContain('git pull && pnpm install && pnpm build');
    expect(bare.stderr).not.toContain('npm install -g');
    await runCli(['gateway', 'stop'], { env });
  });
});

describe('hermes doctor', () => {
  it('passes a healthy home with a reachable model and a running gateway', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    const model = await startModelServer({ script: [] });
    await writeModelConfig(home, model.baseUrl);
    await runCli(['gateway', 'start', '--port', '0'], { env });
    const result = await runCli(['doctor', '--json'], { env });
    const body = parseJson<{ ok: boolean; checks: Finding[] }>(result);
    expect(result.code, JSON.stringify(body.checks, null, 2)).toBe(0);
    expect(body.ok).toBe(true);
    expect(statuses(body.checks, 'model')).toEqual(['ok']);
    expect(statuses(body.checks, 'state_db')).toEqual(['ok']);
    expect(body.checks.find((finding) => finding.check === 'gateway')?.message).toContain(
      'answers on its control socket',
    );
    expect(model.requests.some((request) => request.path === '/v1/models')).toBe(true);
    await runCli(['gateway', 'stop'], { env });
  });

  it('finds what is wrong (exit 1), says how to fix it, and --fix repairs the safe things', async () => {
    const { env, home } = await testHome();
    killGatewayAfterTest(home);
    await writeModelConfig(home, 'http://127.0.0.1:9/v1');
    await writeFile(path.join(home, '.env'), 'OPENAI_API_KEY=sk-x\n');
    await chmod(path.join(home, '.env'), 0o644);
    await chmod(home, 0o755);
    // A gateway that died without cleaning up: its PID record and socket file stay behind.
    const started = parseJson<{ pid: number }>(
      await runCli(['gateway', 'start', '--port', '0', '--json'], { env }),
    );
    process.kill(started.pid, 'SIGKILL');
    while (isProcessRunning(started.pid)) await new Promise((resolve) => setTimeout(resolve, 50));

    const before = await runCli(['doctor', '--json'], { env });
    expect(before.code).toBe(EXIT.failure);
    const found = parseJson<{ ok: boolean; checks: Finding[] }>(before).checks;
    expect(statuses(found, 'model')).toEqual(['fail']);
    expect(found.find((finding) => finding.check === 'model')?.message).toMatch(/unreachable/);
    expect(statuses(found, 'secrets')).toEqual(['fail']);
    expect(statuses(found, 'home')).toEqual(['warn']);
    expect(statuses(found, 'runtime_files')).toContain('warn');
    for (const finding of found.filter((item) => item.status !== 'ok' && item.status !== 'skip')) {
      expect(finding.fix, finding.check).toBeTruthy();
    }
    const human = await runCli(['doctor', '--offline'], { env });
    expect(human.stdout).toContain('✗ secrets');
    expect(human.stdout).toContain('→ chmod 0600');

    const fixed = await runCli(['doctor', '--fix', '--offline', '--json'], { env });
    const after = parseJson<{ ok: boolean; checks: Finding[] }>(fixed);
    expect(fixed.code, JSON.stringify(after.checks, null, 2)).toBe(0);
    expect(after.checks.filter((finding) => finding.fixed).map((finding) => finding.check)).toEqual(
      expect.arrayContaining(['home', 'secrets', 'runtime_files']),
    );
    const { statSync, existsSync } = await import('node:fs');
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(home, '.env')).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(home, 'gateway.pid'))).toBe(false);
  });

  it('checks state.db without changing it: a damaged file fails, a stale search index is rebuilt by --fix', async () => {
    const { env, home } = await testHome();
    const file = path.join(home, 'state.db');
    const { openSessionStore } = await import('@hermes/session-store');
    const store = await openSessionStore({ path: file });
    const session = await store.createSession({ source: 'cli' });
    await store.appendMessages(
      session.id,
      Array.from({ length: 400 }, (_, index) => ({
        role: 'user' as const,
        content: `note ${index} ${'y'.repeat(400)}`,
      })),
    );
    await store.withWriteTransaction((database) =>
      database
        .prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('fts_stale', '1')")
        .run(),
    );
    await store.close();

    const stale = parseJson<{ checks: Finding[] }>(
      await runCli(['doctor', '--offline', '--json'], { env }),
    );
    expect(statuses(stale.checks, 'state_db')).toEqual(['ok']);
    expect(statuses(stale.checks, 'search_index')).toEqual(['warn']);
    const fixed = parseJson<{ checks: Finding[] }>(
      await runCli(['doctor', '--offline', '--fix', '--json'], { env }),
    );
    expect(fixed.checks.find((finding) => finding.check === 'search_index')).toMatchObject({
      status: 'ok',
      fixed: true,
    });
    expect(
      statuses(
        parseJson<{ checks: Finding[] }>(await runCli(['doctor', '--offline', '--json'], { env }))
          .checks,
        'search_index',
      ),
    ).toEqual(['ok']);

    // Scribble over pages in the middle of the file: doctor finds it and leaves the file as it is.
    const { closeSync, openSync, readFileSync, statSync, writeSync } = await import('node:fs');
    const pages = statSync(file).size / 4096;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096 * 4, 0x5a), 0, 4096 * 4, 4096 * Math.floor(pages / 2));
    closeSync(fd);
    const damaged = readFileSync(file);
    const result = await runCli(['doctor', '--offline', '--json'], { env });
    expect(result.code).toBe(EXIT.failure);
    const finding = parseJson<{ checks: Finding[] }>(result).checks.find(
      (item) => item.check === 'state_db',
    );
    expect(finding).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('is damaged'),
    });
    expect(finding?.fix).toContain('move');
    expect(readFileSync(file).equals(damaged)).toBe(true);
  });

  it('reports a broken config.yaml with file, line and column', async () => {
    const { env, home } = await testHome();
    await writeFile(path.join(home, 'config.yaml'), 'model:\n  default: [oops\n');
    const result = await runCli(['doctor', '--offline', '--json'], { env });
    expect(result.code).toBe(EXIT.failure);
    const config = parseJson<{ checks: Finding[] }>(result).checks.find(
      (finding) => finding.check === 'config',
    );
    expect(config).toMatchObject({ status: 'fail', fix: 'Fix the file: hermes config edit' });
    expect(config?.message).toMatch(/config\.yaml:\d+:\d+: invalid YAML/);
  });
});

describe('hermes gateway install / uninstall', () => {
  it('writes a systemd user unit that names the home and holds no secret, and doctor audits it', async () => {
    const { env, home, userHome } = await testHome();
    await writeFile(path.join(home, '.env'), 'OPENAI_API_KEY=sk-live-abcdef0123456789\n', {
      mode: 0o600,
    });
    const dry = await runCli(['gateway', 'install', '--dry-run', '--port', '8650'], { env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`Environment="HERMES_HOME=${home}"`);
    expect(dry.stdout).toMatch(
      /ExecStart=".*node.*" ".*gateway.bin.hermes-gateway\.js" "--port" "8650"/,
    );
    expect(dry.stdout).not.toContain('sk-live');

    const installed = await runCli(['gateway', 'install', '--no-start', '--json'], { env });
    expect(installed.code, installed.stderr).toBe(0);
    const unitFile = path.join(userHome, '.config', 'systemd', 'user', 'hermes-gateway.service');
    expect(parseJson(installed)).toMatchObject({
      status: 'installed',
      name: 'hermes-gateway.service',
      file: unitFile,
    });
    const unit = await readFile(unitFile, 'utf8');
    expect(unit).not.toContain('sk-live');
    // Installing again over a different unit needs --force.
    const differs = await runCli(['gateway', 'install', '--no-start', '--port', '9999'], { env });
    expect(differs.code).toBe(EXIT.failure);
    expect(differs.stderr).toContain('--force');

    const clean = parseJson<{ checks: Finding[] }>(
      await runCli(['doctor', '--offline', '--json'], { env }),
    );
    expect(statuses(clean.checks, 'service_unit')).toEqual(['ok']);
    // Someone pastes a key into the unit: doctor fails and does not print it.
    await writeFile(
      unitFile,
      unit.replace('[Service]', '[Service]\nEnvironment="OPENAI_API_KEY=sk-live-abcdef0123456789"'),
    );
    const audit = await runCli(['doctor', '--offline', '--json'], { env });
    expect(audit.code).toBe(EXIT.failure);
    expect(statuses(parseJson<{ checks: Finding[] }>(audit).checks, 'service_unit')).toContain(
      'fail',
    );
    expect(audit.stdout).not.toContain('sk-live-abcdef0123456789');

    const removed = await runCli(['gateway', 'uninstall', '--json'], { env });
    expect(parseJson(removed)).toMatchObject({ status: 'removed', file: unitFile });
    const { existsSync } = await import('node:fs');
    expect(existsSync(unitFile)).toBe(false);
    expect(parseJson(await runCli(['gateway', 'uninstall', '--json'], { env }))).toMatchObject({
      status: 'not_installed',
    });
  });

  it('says how to finish when the service manager cannot be reached (exit 1)', async () => {
    const { env, userHome } = await testHome();
    // A systemctl that always fails stands in for a machine without a user bus.
    const bin = path.join(userHome, 'bin');
    await mkdir(bin);
    await writeFile(
      path.join(bin, 'systemctl'),
      '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n',
    );
    await chmod(path.join(bin, 'systemctl'), 0o755);
    const result = await runCli(['gateway', 'install'], {
      env: { ...env, PATH: `${bin}:${env.PATH}` },
    });
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toContain('Failed to connect to bus');
    expect(result.stderr).toContain('systemctl --user enable --now hermes-gateway.service');
    await rm(path.join(userHome, '.config'), { recursive: true, force: true });
  });
});
