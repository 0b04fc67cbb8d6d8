import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempRepository } from '../../test/git-repository.js';
import { ReviewRefusal } from '../review-refusal.js';
import { runGit } from './run-git.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function script(body: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'review-fake-git-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const file = join(folder, 'git');
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
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
    expect(output.stdout).toBe('-c\ncore.quotePath=false\nshow\n$(touch /tmp/x)\na;b\n*\n');
  });
});
