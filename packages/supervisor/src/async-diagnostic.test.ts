import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { spawnAsyncDiagnostic } from './async-diagnostic.js';
import { SHUTDOWN_DIAGNOSTIC_LOG_FILE } from './constants.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const apiKey = 'sk-live-0123456789abcdefghijKLMNOP';
const botToken = '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0';
const envSecret = 'env-secret-value-that-must-not-travel';

/** A long-running process whose command line carries secrets, as a carelessly started gateway. */
async function processWithSecretsInArgv() {
  return spawnProcess({
    command: process.execPath,
    args: [
      '-e',
      'console.log("ready"); setTimeout(() => {}, 60000)',
      '--',
      `--api-key=${apiKey}`,
      '--telegram-token',
      botToken,
    ],
    readyLine: 'ready',
  });
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return undefined;
  }
}

describe('spawnAsyncDiagnostic', () => {
  it('appends ps, pstree, load and journal sections to a 0600 log, with argv secrets masked', async () => {
    const home = await tempHome();
    const victim = await processWithSecretsInArgv();
    const diagnostic = spawnAsyncDiagnostic({
      home: home.path,
      signal: 'SIGTERM',
      pid: victim.pid,
    });
    expect(diagnostic).toBeDefined();
    expect(diagnostic?.logFile).toBe(path.join(home.path, SHUTDOWN_DIAGNOSTIC_LOG_FILE));
    await diagnostic?.finished;
    const log = await readFile(diagnostic?.logFile ?? '', 'utf8');
    expect((await stat(diagnostic?.logFile ?? '')).mode & 0o777).toBe(0o600);
    expect(log).toMatch(
      new RegExp(
        `^=== gateway shutdown diagnostic pid=${victim.pid} signal=SIGTERM at \\S+ ===$`,
        'm',
      ),
    );
    for (const title of [
      'ps auxf (top 60 lines, kernel threads left out)',
      `pstree ${victim.pid}`,
      'loadavg',
      'dmesg',
      'journal',
    ]) {
      expect(log).toContain(`--- ${title}`);
    }
    expect(log).toContain('=== end of diagnostic ===');
    // The victim's tree is shown, its secrets are not: they are masked where ps and pstree print them.
    expect(log).toContain('--api-key=[REDACTED]');
    expect(log).toContain('--telegram-token [REDACTED]');
    expect(log).not.toContain(apiKey);
    expect(log).not.toContain(botToken);
    await victim.stop();
  });

  it("keeps this process's secrets off the diagnostic's own command line and environment", async () => {
    const home = await tempHome();
    const previous = process.env.HERMES_TEST_API_KEY;
    process.env.HERMES_TEST_API_KEY = envSecret;
    try {
      const diagnostic = spawnAsyncDiagnostic({ home: home.path, signal: 'SIGTERM' });
      const pid = diagnostic?.pid ?? 0;
      expect(pid).toBeGreaterThan(0);
      const cmdline = readProc(pid, 'cmdline');
      const environ = readProc(pid, 'environ');
      await diagnostic?.finished;
      if (process.platform === 'linux' && cmdline !== undefined && environ !== undefined) {
        // A constant loader, not the script and not a value of ours.
        expect(cmdline.trim()).toBe(
          `${process.execPath} -e new Function(process.env.HERMES_DIAGNOSTIC_SCRIPT)()`,
        );
        expect(environ).not.toContain(envSecret);
        expect(environ).not.toContain('HERMES_TEST_API_KEY');
      }
      const log = await readFile(diagnostic?.logFile ?? '', 'utf8');
      expect(log).not.toContain(envSecret);
    } finally {
      if (previous === undefined) delete process.env.HERMES_TEST_API_KEY;
      else process.env.HERMES_TEST_API_KEY = previous;
    }
  });

  it('tightens an existing log to 0600 and appends to it', async () => {
    const home = await tempHome();
    const logFile = path.join(home.path, SHUTDOWN_DIAGNOSTIC_LOG_FILE);
    await mkdir(path.dirname(logFile), { recursive: true });
    await writeFile(logFile, 'earlier run\n');
    await chmod(logFile, 0o644);
    const diagnostic = spawnAsyncDiagnostic({ logFile, signal: 'not a signal; rm -rf /' });
    await diagnostic?.finished;
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
    const log = await readFile(logFile, 'utf8');
    expect(log.startsWith('earlier run\n=== gateway shutdown diagnostic')).toBe(true);
    // Anything but a signal name is reported as UNKNOWN.
    expect(log).toContain(' signal=UNKNOWN at ');
  });

  it('outlives a gateway whose whole process group is SIGKILLed right after asking for it', async () => {
    const home = await tempHome();
    const logFile = path.join(home.path, SHUTDOWN_DIAGNOSTIC_LOG_FILE);
    const gateway = await spawnProcess({
      command: process.execPath,
      args: [
        '--conditions=@hermes/source',
        '--import',
        'tsx',
        path.join(packageRoot, 'test/fixtures/diagnostic-then-sigkill-child.ts'),
      ],
      cwd: packageRoot,
      env: { ...process.env, DIAGNOSTIC_LOG: logFile },
      readyLine: /^diagnostic pid=\d+$/m,
    });
    // Its own session, so a signal to the gateway's process group does not reach it.
    gateway.kill('SIGKILL');
    expect(await gateway.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The diagnostic finishes on its own, within its 5 s budget (plus its start).
    let log = '';
    const deadline = performance.now() + 15_000;
    while (!log.includes('=== end of diagnostic ===') && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      log = await readFile(logFile, 'utf8').catch(() => '');
    }
    expect(log).toContain('--- ps auxf');
    expect(log).toContain('=== end of diagnostic ===');
  });

  it('spawns nothing on Windows', async () => {
    const home = await tempHome();
    expect(spawnAsyncDiagnostic({ home: home.path, platform: 'win32' })).toBeUndefined();
  });
});
