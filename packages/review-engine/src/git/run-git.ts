import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { GIT_TIMEOUT_MS } from '../constants.js';
import { GIT_ERROR_PREFIX } from '../review-messages.js';
import { ReviewRefusal } from '../review-refusal.js';

export interface RunGitOptions {
  readonly cwd: string;
  /** The git program (default `git`, looked up on `PATH`). */
  readonly executable?: string | undefined;
  /** Killed after this long (default 20 s). */
  readonly timeoutMs?: number | undefined;
  /** Keep at most this many characters of stdout; git is stopped once they are read. */
  readonly maxChars?: number | undefined;
  /** Exit codes that mean success (default `[0]`; `git diff --no-index` uses 1 for "differs"). */
  readonly okExitCodes?: readonly number[] | undefined;
}

export interface GitOutput {
  readonly stdout: string;
  /** True when stdout was longer than `maxChars` and was cut. */
  readonly truncated: boolean;
  readonly exitCode: number | null;
  readonly stderr: string;
}

const STDERR_KEEP_CHARS = 4_096;

/**
 * Before every command: paths as they are (not octal-quoted), and no index refresh by `git diff`.
 * `git diff` otherwise rewrites the index (holding `index.lock`, so a git command the user runs at
 * that moment fails) whenever a tracked file's timestamps changed — GIT_OPTIONAL_LOCKS=0 does not
 * cover it. The diff itself is the same: content, not timestamps, decides what changed.
 */
const GLOBAL_OPTIONS = ['-c', 'core.quotePath=false', '-c', 'diff.autoRefreshIndex=false'];

/** The environment git runs with: no prompts, no optional index writes, no inherited repository. */
function gitEnvironment(): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
  };
  // These would point git at another repository than the session's working directory.
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_EXTERNAL_DIFF'])
    delete environment[name];
  return environment;
}

/** git could not be started at all: missing, not executable, busy. */
function startFailure(error: NodeJS.ErrnoException): ReviewRefusal {
  return new ReviewRefusal(
    'git_failed',
    error.code === 'ENOENT'
      ? `${GIT_ERROR_PREFIX}git was not found — install git or put it on PATH.`
      : `${GIT_ERROR_PREFIX}could not run git (${error.message}).`,
    error,
  );
}

function firstLine(text: string): string {
  const line =
    text
      .split('\n')
      .map((candidate) => candidate.trim())
      .find((candidate) => candidate.length > 0) ?? '';
  return line.replace(/^(fatal|error): /, '');
}

/**
 * Runs git with an argument array (never a shell) and collects stdout up to `maxChars`, stopping
 * git when there is more. Every failure is a `ReviewRefusal` (`git_failed`) whose message a person
 * can act on: git missing, a timeout, or git's own first error line.
 */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutput> {
  const executable = options.executable ?? 'git';
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const maxChars = Math.max(0, options.maxChars ?? Number.POSITIVE_INFINITY);
  const okExitCodes = options.okExitCodes ?? [0];
  const subcommand = `git ${args[0] ?? ''}`.trim();
  return new Promise((resolve, reject) => {
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(executable, [...GLOBAL_OPTIONS, ...args], {
        cwd: options.cwd,
        env: gitEnvironment(),
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      // spawn reports most start failures as an 'error' event, but throws some (ETXTBSY, E2BIG).
      return reject(startFailure(error as NodeJS.ErrnoException));
    }
    let stdout = '';
    let stderr = '';
    let truncated = false;
    let timedOut = false;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    timer.unref();
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (truncated) return;
      stdout += chunk;
      if (stdout.length > maxChars) {
        truncated = true;
        // Do not split a surrogate pair at the cut.
        const cut = /[\uD800-\uDBFF]/.test(stdout.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
        stdout = stdout.slice(0, cut);
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_KEEP_CHARS) stderr += chunk;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(() => reject(startFailure(error)));
    });
    child.on('close', (exitCode) => {
      finish(() => {
        if (timedOut)
          return reject(
            new ReviewRefusal(
              'git_failed',
              `${GIT_ERROR_PREFIX}${subcommand} did not finish within ${Math.round(timeoutMs / 100) / 10} s.`,
            ),
          );
        if (truncated || (exitCode !== null && okExitCodes.includes(exitCode)))
          return resolve({ stdout, truncated, exitCode, stderr });
        const reason = firstLine(stderr) || `exit code ${exitCode ?? 'unknown'}`;
        reject(
          new ReviewRefusal('git_failed', `${GIT_ERROR_PREFIX}${subcommand} failed: ${reason}`),
        );
      });
    });
  });
}
