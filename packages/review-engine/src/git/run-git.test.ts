import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  utimesSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeExecutableScript } from '../../test/executable-script.js';
import { type TempRepository, tempRepository } from '../../test/git-repository.js';
import { ReviewRefusal } from '../review-refusal.js';
import { runGit } from './run-git.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function repository(): TempRepository {
  const repo = tempRepository();
  cleanups.push(() => repo.remove());
  return repo;
}

function tempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'review-run-git-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/**
 * Runs `action` with these variables set (or removed, for `undefined`) in this process's
 * environment — the one a session's gateway would hand down to git — and restores them after.
 */
async function withEnvironment<T>(
  variables: Record<string, string | undefined>,
  action: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(variables);
  try {
    return await action();
  } finally {
    apply(saved);
  }
}

async function failureOf(promise: Promise<unknown>): Promise<ReviewRefusal> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (ReviewRefusal.isInstance(outcome)) return outcome;
  throw new Error(`expected a refusal, got ${String(outcome)}`);
}

function script(body: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'review-fake-git-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const file = join(folder, 'git');
  writeExecutableScript(file, body);
  return file;
}

describe('runGit', () => {
  it('stops a command as soon as it has printed more than it may keep', async () => {
    // `yes` never ends: only stopping it at the cap lets this finish before the timeout.
    const endless = script('exec yes "a line of diff output"');
    const started = performance.now();
    const output = await runGit(['diff'], {
      cwd: tmpdir(),
      executable: endless,
      maxChars: 1_000,
      timeoutMs: 15_000,
    });
    expect(output.truncated).toBe(true);
    expect(output.stdout).toHaveLength(1_000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('reports git’s own first error line, without the fatal: prefix', async () => {
    const repo = tempRepository();
    cleanups.push(() => repo.remove());
    const failure = await runGit(['cat-file', '-p', 'no-such-object'], { cwd: repo.path }).catch(
      (error: unknown) => error,
    );
    expect(ReviewRefusal.isInstance(failure) && failure.code).toBe('git_failed');
    expect((failure as Error).message).toBe(
      'Unable to prepare git review: git cat-file failed: Not a valid object name no-such-object',
    );
  });

  it('accepts the exit codes it is told mean success', async () => {
    const differs = script('echo "diff output"; exit 1');
    const output = await runGit(['diff', '--no-index'], {
      cwd: tmpdir(),
      executable: differs,
      okExitCodes: [0, 1],
    });
    expect(output).toMatchObject({ stdout: 'diff output\n', exitCode: 1, truncated: false });
    const refused = await runGit(['diff'], { cwd: tmpdir(), executable: differs }).catch(
      (error: unknown) => error,
    );
    expect((refused as Error).message).toBe(
      'Unable to prepare git review: git diff failed: exit code 1',
    );
  });

  it('passes arguments to git as they are, never through a shell', async () => {
    const echo = script('for argument in "$@"; do printf "%s\\n" "$argument"; done');
    const output = await runGit(['show', '$(touch /tmp/x)', 'a;b', '*'], {
      cwd: tmpdir(),
      executable: echo,
    });
    expect(output.stdout).toBe(
      '-c\ncore.quotePath=false\n-c\ndiff.autoRefreshIndex=false\nshow\n$(touch /tmp/x)\na;b\n*\n',
    );
  });

  it('keeps output of exactly maxChars characters whole, not truncated', async () => {
    const exact = script('printf "0123456789"');
    const output = await runGit(['diff'], { cwd: tmpdir(), executable: exact, maxChars: 10 });
    expect(output).toMatchObject({ stdout: '0123456789', truncated: false, exitCode: 0 });
  });

  it('never cuts between the two halves of a surrogate pair, and only looks at the cut', async () => {
    // "ab😀cd": the emoji is two UTF-16 units; a cut after 3 would keep half of it.
    const straddling = script(String.raw`printf 'ab\360\237\230\200cd'`);
    const cut = await runGit(['diff'], { cwd: tmpdir(), executable: straddling, maxChars: 3 });
    expect(cut).toMatchObject({ stdout: 'ab', truncated: true });
    // An emoji before the cut does not shorten what is kept.
    const early = script(String.raw`printf '\360\237\230\200abcdef'`);
    const kept = await runGit(['diff'], { cwd: tmpdir(), executable: early, maxChars: 4 });
    expect(kept).toMatchObject({ stdout: '😀ab', truncated: true });
  });

  it('keeps only the start of a flood of stderr', async () => {
    const noisy = script("head -c 1000000 /dev/zero | tr '\\0' e >&2");
    const output = await runGit(['diff'], { cwd: tmpdir(), executable: noisy });
    expect(output.exitCode).toBe(0);
    expect(output.stderr.length).toBeGreaterThan(0);
    expect(output.stderr.length).toBeLessThan(200_000);
  });
});

describe('runGit: failures', () => {
  it('reports the first non-blank stderr line, trimmed, without a leading fatal: or error:', async () => {
    const fatal = script(
      "printf '\\n   \\n  fatal: bad revision HEAD~9  \\nhint: more\\n' >&2; exit 128",
    );
    expect((await failureOf(runGit(['log'], { cwd: tmpdir(), executable: fatal }))).message).toBe(
      'Unable to prepare git review: git log failed: bad revision HEAD~9',
    );
    const error = script("echo 'error: pathspec did not match' >&2; exit 1");
    expect((await failureOf(runGit(['diff'], { cwd: tmpdir(), executable: error }))).message).toBe(
      'Unable to prepare git review: git diff failed: pathspec did not match',
    );
    // Only a prefix is git's label; the same words later in the line are the message.
    const inner = script("echo 'hook reported error: disk full' >&2; exit 1");
    expect((await failureOf(runGit(['diff'], { cwd: tmpdir(), executable: inner }))).message).toBe(
      'Unable to prepare git review: git diff failed: hook reported error: disk full',
    );
  });

  it('calls a git killed by a signal a failure, not a success', async () => {
    const crashing = script('kill -9 $$');
    const refusal = await failureOf(runGit(['diff'], { cwd: tmpdir(), executable: crashing }));
    expect(refusal.code).toBe('git_failed');
    expect(refusal.message).toBe(
      'Unable to prepare git review: git diff failed: exit code unknown',
    );
  });

  it('says git is missing, with the spawn error as the cause', async () => {
    const refusal = await failureOf(
      runGit(['status'], { cwd: tmpdir(), executable: join(tempFolder(), 'no-git') }),
    );
    expect(refusal.code).toBe('git_failed');
    expect(refusal.message).toBe(
      'Unable to prepare git review: git was not found — install git or put it on PATH.',
    );
    expect((refusal.cause as NodeJS.ErrnoException | undefined)?.code).toBe('ENOENT');
  });

  it('says git could not be run when the program is there but cannot be started', async () => {
    const notExecutable = join(tempFolder(), 'git');
    writeExecutableScript(notExecutable, 'exit 0', 0o644);
    const refusal = await failureOf(
      runGit(['status'], { cwd: tmpdir(), executable: notExecutable }),
    );
    expect(refusal.code).toBe('git_failed');
    expect(refusal.message).toBe(
      `Unable to prepare git review: could not run git (spawn ${notExecutable} EACCES).`,
    );
    expect((refusal.cause as NodeJS.ErrnoException | undefined)?.code).toBe('EACCES');
  });

  it.skipIf(process.platform !== 'linux')(
    'says git could not be run when starting it fails at once (a program still open for writing)',
    async () => {
      // Linux refuses to run a file that is open for writing (ETXTBSY), and node's spawn throws
      // that error instead of emitting it: it must still become a refusal.
      const busy = script('exit 0');
      const descriptor = openSync(busy, 'r+');
      cleanups.push(() => closeSync(descriptor));
      const refusal = await failureOf(runGit(['status'], { cwd: tmpdir(), executable: busy }));
      expect(refusal.code).toBe('git_failed');
      expect(refusal.message).toBe(
        'Unable to prepare git review: could not run git (spawn ETXTBSY).',
      );
    },
  );

  it('names the command and the limit when git does not finish in time', async () => {
    const hanging = script('exec sleep 30');
    const refusal = await failureOf(
      runGit(['diff'], { cwd: tmpdir(), executable: hanging, timeoutMs: 300 }),
    );
    expect(refusal.code).toBe('git_failed');
    expect(refusal.message).toBe(
      'Unable to prepare git review: git diff did not finish within 0.3 s.',
    );
  });
});

describe('runGit: the environment git runs in', () => {
  it('reads the repository in cwd even when GIT_DIR points at another one', async () => {
    const repo = repository();
    repo.commit('in the session repository', { 'a.txt': 'a\n' });
    const other = repository();
    other.commit('in another repository', { 'b.txt': 'b\n' });
    const output = await withEnvironment({ GIT_DIR: join(other.path, '.git') }, () =>
      runGit(['log', '-1', '--format=%s'], { cwd: repo.path }),
    );
    expect(output.stdout).toBe('in the session repository\n');
  });

  it('uses the working tree of cwd even when GIT_WORK_TREE points elsewhere', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    const output = await withEnvironment({ GIT_WORK_TREE: tempFolder() }, () =>
      runGit(['rev-parse', '--show-toplevel'], { cwd: repo.path }),
    );
    expect(output.stdout.trim()).toBe(repo.git('rev-parse', '--show-toplevel').trim());
  });

  it('reads the repository’s own index even when GIT_INDEX_FILE points elsewhere', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const output = await withEnvironment(
      { GIT_INDEX_FILE: join(tempFolder(), 'other-index') },
      () => runGit(['ls-files'], { cwd: repo.path }),
    );
    expect(output.stdout).toBe('a.txt\nb.txt\n');
  });

  it('never runs an external diff program named in GIT_EXTERNAL_DIFF', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.write('a.txt', 'changed\n');
    const marker = join(tempFolder(), 'external-diff-ran');
    const externalDiff = script(`touch '${marker}'`);
    const output = await withEnvironment({ GIT_EXTERNAL_DIFF: externalDiff }, () =>
      runGit(['diff'], { cwd: repo.path }),
    );
    expect(existsSync(marker)).toBe(false);
    expect(output.stdout).toContain('+changed');
  });

  it('never waits for a password on the terminal', async () => {
    // A remote that asks for credentials: git would prompt for a user name unless told not to.
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(401, { 'www-authenticate': 'Basic realm="review"' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const { port } = server.address() as AddressInfo;
    // No askpass program and no credential helper from this machine's configuration, so only
    // the terminal could answer.
    const refusal = await withEnvironment(
      {
        GIT_ASKPASS: undefined,
        SSH_ASKPASS: undefined,
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
      },
      () =>
        failureOf(runGit(['ls-remote', `http://127.0.0.1:${port}/repo.git`], { cwd: tmpdir() })),
    );
    expect(refusal.message).toBe(
      `Unable to prepare git review: git ls-remote failed: could not read Username for 'http://127.0.0.1:${port}': terminal prompts disabled`,
    );
  });

  it('does not rewrite the index as a side effect of git status (optional locks off)', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    // New timestamps, same content: git status would refresh the index and write it back.
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(join(repo.path, 'a.txt'), past, past);
    const index = join(repo.path, '.git', 'index');
    const before = readFileSync(index);
    const output = await runGit(['status', '--porcelain'], { cwd: repo.path });
    expect(output.stdout).toBe('');
    expect(readFileSync(index).equals(before)).toBe(true);
  });
});
