import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeExecutableScript } from '../../test/executable-script.js';
import { type TempRepository, tempRepository } from '../../test/git-repository.js';
import { GIT_DIFF_MAX_CHARS, GIT_TIMEOUT_MS } from '../constants.js';
import { ReviewRefusal } from '../review-refusal.js';
import { collectGitChanges } from './collect-git-changes.js';
import type { GitReviewTarget } from './review-target.js';

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
  const folder = mkdtempSync(join(tmpdir(), 'review-plain-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}
async function refusalOf(promise: Promise<unknown>): Promise<ReviewRefusal> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (ReviewRefusal.isInstance(outcome)) return outcome;
  throw new Error(`expected a refusal, got ${String(outcome)}`);
}

describe('collectGitChanges: uncommitted', () => {
  it('shows staged, unstaged and untracked changes against HEAD, from any folder of the repository', async () => {
    const repo = repository();
    repo.commit('initial', { 'src/app.ts': 'export const a = 1;\n', 'README.md': '# demo\n' });
    repo.write('src/app.ts', 'export const a = 2;\n');
    repo.write('README.md', '# demo\nstaged line\n');
    repo.git('add', 'README.md');
    repo.write('notes/café.txt', 'brand new file\n');
    const changes = await collectGitChanges(
      { kind: 'uncommitted' },
      { cwd: join(repo.path, 'src') },
    );
    expect(changes.repository).toBe(repo.git('rev-parse', '--show-toplevel').trim());
    expect(changes.label).toBe('uncommitted changes');
    expect(changes.stat).toMatch(/README\.md +\| 1 \+/);
    expect(changes.stat).toMatch(/src\/app\.ts +\| 2 \+-/);
    expect(changes.stat).toContain('Untracked files (1):\n  notes/café.txt');
    expect(changes.patch).toContain('+export const a = 2;');
    expect(changes.patch).toContain('+staged line');
    expect(changes.patch).toContain('+brand new file');
    expect(changes.truncated).toBe(false);
    expect(changes.inspectCommand).toBe('git diff HEAD');
  });

  it('works in a repository without commits yet', async () => {
    const repo = repository();
    repo.write('first.txt', 'first\n');
    repo.git('add', 'first.txt');
    repo.write('second.txt', 'second\n');
    const changes = await collectGitChanges({ kind: 'uncommitted' }, { cwd: repo.path });
    expect(changes.patch).toContain('+first');
    expect(changes.patch).toContain('+second');
    expect(changes.description).toContain('an empty repository');
  });

  it('says the diff is clean when nothing changed, ignored files included', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n', '.gitignore': 'build/\n' });
    repo.write('build/out.js', 'ignored');
    const refusal = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: repo.path }));
    expect(refusal.message).toBe('Nothing to review — the selected git diff is clean.');
    expect(refusal.code).toBe('git_clean');
  });

  it('bounds the section to 100,000 characters, stops at the cap and says so', async () => {
    const repo = repository();
    repo.commit('initial', { 'big.txt': 'old\n' });
    repo.write('big.txt', `${'a line of changed content that goes on\n'.repeat(10_000)}`);
    for (let index = 0; index < 5; index += 1)
      repo.write(`extra-${index}.txt`, 'x\n'.repeat(20_000));
    // A git that logs each call, to see what ran after the budget was spent.
    const folder = tempFolder();
    const log = join(folder, 'calls.log');
    const loggingGit = join(folder, 'git');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeExecutableScript(loggingGit, `echo "$*" >> '${log}'\nexec '${realGit}' "$@"`);
    const changes = await collectGitChanges(
      { kind: 'uncommitted' },
      { cwd: repo.path, executable: loggingGit },
    );
    expect(changes.truncated).toBe(true);
    expect(changes.maxChars).toBe(GIT_DIFF_MAX_CHARS);
    expect(changes.stat.length + changes.patch.length).toBeLessThanOrEqual(GIT_DIFF_MAX_CHARS);
    expect(changes.stat.length + changes.patch.length).toBeGreaterThan(GIT_DIFF_MAX_CHARS - 100);
    expect(changes.patch).not.toContain('extra-4.txt');
    expect(readFileSync(log, 'utf8')).toContain('diff --patch');
    expect(readFileSync(log, 'utf8')).not.toContain('--no-index');
  });
});

describe('collectGitChanges: read-only', () => {
  it('never writes the repository’s index, even for a file whose timestamps changed', async () => {
    // `git diff` refreshes stale index entries and writes the index back (taking index.lock, so
    // a git command the user runs at that moment fails); GIT_OPTIONAL_LOCKS=0 does not stop it.
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    repo.git('checkout', '--quiet', '-b', 'feature');
    repo.commit('feature work', { 'c.txt': 'c\n' });
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(join(repo.path, 'a.txt'), past, past);
    repo.write('b.txt', 'b changed\n');
    const index = join(repo.path, '.git', 'index');
    const before = readFileSync(index);
    const uncommitted = await collectGitChanges({ kind: 'uncommitted' }, { cwd: repo.path });
    expect(readFileSync(index).equals(before)).toBe(true);
    const since = await collectGitChanges({ kind: 'base', branch: 'main' }, { cwd: repo.path });
    expect(readFileSync(index).equals(before)).toBe(true);
    // A timestamp alone is not a change.
    expect(uncommitted.stat).not.toContain('a.txt');
    expect(uncommitted.patch).toContain('+b changed');
    expect(since.stat).not.toContain('a.txt');
    expect(since.patch).toContain('+c');
  });
});

describe('collectGitChanges: base <branch>', () => {
  it('shows the current branch since it left the base, not what the base did since', async () => {
    const repo = repository();
    repo.commit('initial', { 'shared.txt': 'shared\n' });
    repo.git('checkout', '--quiet', '-b', 'feature');
    repo.commit('feature work', { 'feature.txt': 'feature change\n' });
    repo.git('checkout', '--quiet', 'main');
    repo.commit('main moves on', { 'main-only.txt': 'main change\n' });
    repo.git('checkout', '--quiet', 'feature');
    repo.write('shared.txt', 'shared\nuncommitted edit\n');
    const changes = await collectGitChanges({ kind: 'base', branch: 'main' }, { cwd: repo.path });
    expect(changes.label).toBe('changes since main');
    expect(changes.patch).toContain('+feature change');
    expect(changes.patch).toContain('+uncommitted edit');
    expect(changes.patch).not.toContain('main change');
    expect(changes.description).toMatch(/merge base [0-9a-f]{12}/);
  });

  it('names an unknown branch, and a branch with nothing new is clean', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    const unknown = await refusalOf(
      collectGitChanges({ kind: 'base', branch: 'nope' }, { cwd: repo.path }),
    );
    expect(unknown.message).toBe(
      `Unable to prepare git review: "nope" is not a branch, tag or commit in ${repo.path}.`,
    );
    const clean = await refusalOf(
      collectGitChanges({ kind: 'base', branch: 'main' }, { cwd: repo.path }),
    );
    expect(clean.code).toBe('git_clean');
  });

  it('never lets a branch argument act as a git option', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.write('a.txt', 'changed\n');
    const target = join(tempFolder(), 'written-by-git.txt');
    const hostile: GitReviewTarget = { kind: 'base', branch: `--output=${target}` };
    const refusal = await refusalOf(collectGitChanges(hostile, { cwd: repo.path }));
    expect(refusal.code).toBe('git_failed');
    expect(existsSync(target)).toBe(false);
  });
});

describe('collectGitChanges: commit <sha>', () => {
  it('shows one commit with its message and patch', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    const sha = repo.commit('Fix the parser\n\nHandles empty input.', { 'a.txt': 'a\nfixed\n' });
    repo.commit('later', { 'b.txt': 'later change\n' });
    const changes = await collectGitChanges(
      { kind: 'commit', sha: sha.slice(0, 7) },
      { cwd: repo.path },
    );
    expect(changes.label).toBe(`commit ${sha.slice(0, 12)}`);
    expect(changes.stat).toMatch(/a\.txt \| 1 \+/);
    expect(changes.patch).toContain('Fix the parser');
    expect(changes.patch).toContain('+fixed');
    expect(changes.patch).not.toContain('later change');
  });

  it('names an unknown commit, and an empty commit is clean', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    const empty = repo.commit('nothing', {});
    const unknown = await refusalOf(
      collectGitChanges({ kind: 'commit', sha: 'deadbeef' }, { cwd: repo.path }),
    );
    expect(unknown.message).toBe(
      `Unable to prepare git review: commit deadbeef is not in ${repo.path} (or the short SHA is ambiguous — give more digits).`,
    );
    const clean = await refusalOf(
      collectGitChanges({ kind: 'commit', sha: empty }, { cwd: repo.path }),
    );
    expect(clean.message).toBe('Nothing to review — the selected git diff is clean.');
  });
});

describe('collectGitChanges: failures a person can act on', () => {
  it('says when the folder is not in a repository or does not exist', async () => {
    const folder = tempFolder();
    const outside = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: folder }));
    expect(outside.message).toBe(
      `Unable to prepare git review: ${folder} is not inside a git repository.`,
    );
    const missing = join(folder, 'gone');
    const absent = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: missing }));
    expect(absent.message).toBe(
      `Unable to prepare git review: the working directory ${missing} does not exist.`,
    );
  });

  it('says when git is not installed', async () => {
    const repo = repository();
    const refusal = await refusalOf(
      collectGitChanges(
        { kind: 'uncommitted' },
        { cwd: repo.path, executable: join(tempFolder(), 'no-git') },
      ),
    );
    expect(refusal.message).toBe(
      'Unable to prepare git review: git was not found — install git or put it on PATH.',
    );
  });

  it('kills a git that hangs once the timeout passes', async () => {
    const repo = repository();
    const folder = tempFolder();
    const pidFile = join(folder, 'pid');
    const hangingGit = join(folder, 'git');
    writeExecutableScript(hangingGit, `echo $$ > '${pidFile}'\nexec sleep 30`);
    const started = performance.now();
    const refusal = await refusalOf(
      collectGitChanges(
        { kind: 'uncommitted' },
        { cwd: repo.path, executable: hangingGit, timeoutMs: 1_500 },
      ),
    );
    expect(refusal.message).toBe(
      'Unable to prepare git review: git rev-parse did not finish within 1.5 s.',
    );
    expect(performance.now() - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('gives git 20 seconds by default', () => {
    expect(GIT_TIMEOUT_MS).toBe(20_000);
  });
});
