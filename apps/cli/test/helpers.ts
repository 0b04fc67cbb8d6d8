import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isProcessRunning, tempHome } from '@hermes/testkit';
import { onTestFinished } from 'vitest';

/** The built `hermes` bin: every e2e test runs it as a user would. */
export const CLI_BIN = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'dist',
  'bin.js',
);

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A fresh HERMES_HOME plus a fake user folder (HOME, XDG_CONFIG_HOME) inside the temp folder. */
export interface TestHome {
  readonly home: string;
  readonly userHome: string;
  readonly env: NodeJS.ProcessEnv;
}

export async function testHome(): Promise<TestHome> {
  const root = (await tempHome('hermes-cli-')).path;
  const home = path.join(root, 'h');
  const userHome = path.join(root, 'u');
  await mkdir(home, { mode: 0o700 });
  await mkdir(userHome, { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'LANG', 'TMPDIR', 'SYSTEMROOT']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  Object.assign(env, {
    HOME: userHome,
    XDG_CONFIG_HOME: path.join(userHome, '.config'),
    HERMES_HOME: home,
    NO_COLOR: '1',
    HERMES_LOG_LEVEL: 'info',
  });
  return { home, userHome, env };
}

/** Runs `hermes <args>` to the end. */
export function runCli(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; input?: string; cwd?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      env: options.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `hermes ${args.join(' ')} did not finish in time\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 45_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Parses the JSON a `--json` command printed (the whole of stdout). */
export function parseJson<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  }
}

/** `config.yaml` pointing the model at the testkit server. */
export async function writeModelConfig(home: string, baseUrl: string, extra = ''): Promise<void> {
  await writeFile(
    path.join(home, 'config.yaml'),
    `model:\n  default: test-model\n  base_url: ${baseUrl}\n  api_key: sk-test-model-key-0123456789\n${extra}`,
    { mode: 0o600 },
  );
}

/** Kills a background gateway a test started (by its PID record) when the test ends. */
export function killGatewayAfterTest(home: string): void {
  onTestFinished(async () => {
    try {
      const record = JSON.parse(await readFile(path.join(home, 'gateway.pid'), 'utf8')) as {
        pid?: number;
      };
      if (record.pid && isProcessRunning(record.pid)) process.kill(record.pid, 'SIGKILL');
    } catch {
      // No gateway left.
    }
  });
}

export interface PtySession {
  /** Sends keys (`\u0003` is Ctrl-C, `\u0004` Ctrl-D). */
  write(keys: string): void;
  /** Everything the terminal showed so far, escapes removed. */
  screen(): string;
  /** Resolves with the first match in what the terminal shows from `fromIndex` on. */
  waitFor(
    pattern: RegExp,
    options?: { timeoutMs?: number; from?: number },
  ): Promise<RegExpMatchArray>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are the point
const ESCAPES = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\r/g;

/**
 * Runs `hermes <args>` in a pseudo-terminal through util-linux `script`, so the chat sees a TTY
 * (its prompt, Ctrl-C turned into SIGINT by the line discipline). Keys go to `script`'s stdin.
 * The whole process group is killed when the test ends.
 */
export function spawnInPty(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): PtySession {
  const command = [process.execPath, CLI_BIN, ...args]
    .map((word) => `'${word.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    env: { ...env, TERM: 'xterm-256color', COLUMNS: '120', LINES: '40' },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...(cwd ? { cwd } : {}),
  });
  let raw = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: string) => {
    raw += chunk;
    for (const waiter of waiters) waiter();
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      done = true;
      for (const waiter of waiters) waiter();
      resolve({ code, signal });
    });
  });
  const screen = () => raw.replace(ESCAPES, '');
  onTestFinished(async () => {
    if (done) return;
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // gone
    }
    await exited;
  });
  return {
    write(keys) {
      child.stdin.write(keys);
    },
    screen,
    exited,
    waitFor(pattern, options = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = screen()
            .slice(options.from ?? 0)
            .match(pattern);
          if (match) {
            cleanup();
            resolve(match);
          } else if (done) {
            cleanup();
            reject(new Error(`the chat exited before showing ${pattern}; screen:\n${screen()}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; screen:\n${screen()}`));
        }, options.timeoutMs ?? 20_000);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
