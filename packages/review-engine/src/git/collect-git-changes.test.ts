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
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
/** A git that runs `prelude` (shell, with the arguments in "$@") and then the real git. */
function wrappedGit(prelude: string): string {
  const file = join(tempFolder(), 'git');
  writeExecutableScript(file, `${prelude}\nexec '${realGit}' "$@"`);
  return file;
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
    expect(changes.description).toBe(
      `uncommitted changes (staged, unstaged and untracked files) against an empty repository in ${changes.repository}`,
    );
    expect(changes.inspectCommand).toBe('git status');
  });

  it('says the diff is clean when nothing changed, ignored files included', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n', '.gitignore': 'build/\n' });
    repo.write('build/out.js', 'ignored');
    const refusal = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: repo.path }));
    expect(refusal.message).toBe('Nothing to review — the selected git diff is clean.');
    expect(refusal.code).toBe('git_clean');
  });

  it('puts git’s own --stat first, then every untracked file, with a patch for each', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.write('a.txt', 'a\nmore\n');
    repo.write('new-1.txt', 'first new file\n');
    repo.write('new-2.txt', 'second new file\n');
    const changes = await collectGitChanges({ kind: 'uncommitted' }, { cwd: repo.path });
    const gitStat = repo.git('diff', '--stat=200', 'HEAD', '--').trimEnd();
    expect(changes.stat).toBe(`${gitStat}\nUntracked files (2):\n  new-1.txt\n  new-2.txt`);
    expect(changes.patch).toContain('+more');
    expect(changes.patch).toContain('+first new file');
    expect(changes.patch).toContain('+second new file');
    expect(changes.description).toBe(
      `uncommitted changes (staged, unstaged and untracked files) against HEAD in ${changes.repository}`,
    );
    expect(changes.inspectCommand).toBe('git diff HEAD');
  });

  it('reviews untracked files alone, and lists untracked files only when there are some', async () => {
    const untrackedOnly = repository();
    untrackedOnly.commit('initial', { 'a.txt': 'a\n' });
    untrackedOnly.write('new.txt', 'brand new\n');
    const added = await collectGitChanges({ kind: 'uncommitted' }, { cwd: untrackedOnly.path });
    expect(added.stat).toBe('Untracked files (1):\n  new.txt');
    expect(added.patch).toContain('+brand new');

    const trackedOnly = repository();
    trackedOnly.commit('initial', { 'a.txt': 'a\n' });
    trackedOnly.write('a.txt', 'changed\n');
    const edited = await collectGitChanges({ kind: 'uncommitted' }, { cwd: trackedOnly.path });
    expect(edited.stat).toBe(trackedOnly.git('diff', '--stat=200', 'HEAD', '--').trimEnd());
    expect(edited.stat).not.toContain('Untracked');
  });

  it('names at most 200 untracked files, then says how many more there are', async () => {
    const listing = (count: number) => {
      const names = Array.from(
        { length: count },
        (_, index) => `f${String(index).padStart(3, '0')}.txt`,
      );
      const lines = [
        `Untracked files (${count}):`,
        ...names.slice(0, 200).map((name) => `  ${name}`),
      ];
      if (count > 200) lines.push(`  … and ${count - 200} more`);
      return { names, text: lines.join('\n') };
    };
    for (const count of [200, 205]) {
      const repo = repository();
      repo.commit('initial', { 'a.txt': 'a\n' });
      const { names, text } = listing(count);
      for (const name of names) repo.write(name, 'x\n');
      // Room for the list and a little patch, so only the first untracked diff runs.
      const changes = await collectGitChanges(
        { kind: 'uncommitted' },
        { cwd: repo.path, maxChars: text.length + 40 },
      );
      expect(changes.stat).toBe(text);
      expect(changes.truncated).toBe(true);
    }
  });

  it('counts the untracked-file list against the budget too', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    for (let index = 0; index < 30; index += 1) repo.write(`untracked-${index}.txt`, 'x\n');
    const changes = await collectGitChanges(
      { kind: 'uncommitted' },
      { cwd: repo.path, maxChars: 100 },
    );
    expect(changes.stat).toHaveLength(100);
    expect(changes.stat.startsWith('Untracked files (30):\n  untracked-0.txt')).toBe(true);
    expect(changes.patch).toBe('');
    expect(changes.truncated).toBe(true);
  });

  it('lists an untracked path git cannot diff and reviews the rest', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.write('fine.txt', 'fine\n');
    repo.write('unreadable.txt', 'x\n');
    // A nested repository: git lists it but cannot diff it against /dev/null.
    repo.git('init', '--quiet', 'vendored');
    repo.write('vendored/lib.txt', 'lib\n');
    const failing = wrappedGit(
      `case "$*" in *unreadable.txt*) echo "fatal: cannot read unreadable.txt" >&2; exit 128;; esac`,
    );
    const changes = await collectGitChanges(
      { kind: 'uncommitted' },
      { cwd: repo.path, executable: failing },
    );
    expect(changes.stat).toBe('Untracked files (3):\n  fine.txt\n  unreadable.txt\n  vendored/');
    expect(changes.patch.split('diff --git')).toHaveLength(2);
    expect(changes.patch.startsWith('diff --git a/fine.txt b/fine.txt')).toBe(true);
    expect(changes.patch.endsWith('+fine\n')).toBe(true);
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
    const mergeBase = repo.git('merge-base', 'HEAD', 'main').trim();
    const short = mergeBase.slice(0, 12);
    expect(changes.description).toBe(
      `the current branch since it diverged from main (merge base ${short}), uncommitted changes to tracked files included, in ${changes.repository}`,
    );
    expect(changes.inspectCommand).toBe(`git diff ${short}`);
    expect(changes.stat).toBe(repo.git('diff', '--stat=200', mergeBase, '--').trimEnd());
  });

  it('refuses a current branch without commits, and branches that share no history', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.git('checkout', '--quiet', '--orphan', 'fresh');
    const unborn = await refusalOf(
      collectGitChanges({ kind: 'base', branch: 'main' }, { cwd: repo.path }),
    );
    expect(unborn.code).toBe('git_failed');
    expect(unborn.message).toBe(
      `Unable to prepare git review: ${repo.path} has no commits on the current branch yet.`,
    );
    repo.commit('unrelated start', { 'b.txt': 'b\n' });
    const unrelated = await refusalOf(
      collectGitChanges({ kind: 'base', branch: 'main' }, { cwd: repo.path }),
    );
    expect(unrelated.code).toBe('git_failed');
    expect(unrelated.message).toBe(
      'Unable to prepare git review: the current branch and "main" share no history.',
    );
  });

  it('says the section was cut when the last command is cut, and runs nothing once the budget is spent', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.git('checkout', '--quiet', '-b', 'feature');
    repo.commit('feature work', { 'a.txt': 'a\nfeature line\n' });
    const stat = repo.git('diff', '--stat=200', 'main', '--');
    const patchCut = await collectGitChanges(
      { kind: 'base', branch: 'main' },
      { cwd: repo.path, maxChars: stat.length + 20 },
    );
    expect(patchCut.patch).toHaveLength(20);
    expect(patchCut.truncated).toBe(true);

    const log = join(tempFolder(), 'calls.log');
    const logging = wrappedGit(`echo "$*" >> '${log}'`);
    const statFills = await collectGitChanges(
      { kind: 'base', branch: 'main' },
      { cwd: repo.path, maxChars: stat.length, executable: logging },
    );
    expect(statFills.stat).toBe(stat.trimEnd());
    expect(statFills.patch).toBe('');
    expect(statFills.truncated).toBe(true);
    expect(readFileSync(log, 'utf8')).toContain('diff --stat=200');
    expect(readFileSync(log, 'utf8')).not.toContain('diff --patch');
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
    expect(changes.description).toBe(
      `commit ${sha} (its message, files and patch; a merge against its first parent) in ${changes.repository}`,
    );
    expect(changes.inspectCommand).toBe(`git show ${sha.slice(0, 12)}`);
    expect(changes.stat).toBe(repo.git('show', '--format=', '--stat=200', sha, '--').trimEnd());
  });

  it('shows a merge commit against its first parent', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.git('checkout', '--quiet', '-b', 'feature');
    repo.commit('feature work', { 'feature.txt': 'from the feature\n' });
    repo.git('checkout', '--quiet', 'main');
    repo.commit('main moves on', { 'main.txt': 'on main\n' });
    repo.git('merge', '--quiet', '--no-ff', '--no-edit', 'feature');
    const merge = repo.git('rev-parse', 'HEAD').trim();
    const changes = await collectGitChanges({ kind: 'commit', sha: merge }, { cwd: repo.path });
    expect(changes.stat).toMatch(/feature\.txt \| 1 \+/);
    expect(changes.stat).not.toContain('main.txt');
    expect(changes.patch).toContain('+from the feature');
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
    expect(unknown.code).toBe('git_failed');
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
    expect(outside.code).toBe('git_failed');
    const missing = join(folder, 'gone');
    const absent = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: missing }));
    expect(absent.message).toBe(
      `Unable to prepare git review: the working directory ${missing} does not exist.`,
    );
    expect(absent.code).toBe('git_failed');
  });

  it('says when the folder is in a repository but not in its working tree', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    const gitFolder = join(repo.path, '.git');
    const refusal = await refusalOf(collectGitChanges({ kind: 'uncommitted' }, { cwd: gitFolder }));
    expect(refusal.code).toBe('git_failed');
    expect(refusal.message).toBe(
      `Unable to prepare git review: ${gitFolder} is not a git working tree (fatal: this operation must be run in a work tree).`,
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
    expect(refusal.code).toBe('git_failed');
    expect(performance.now() - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('gives every git command the timeout it is told, not only the first', async () => {
    const repo = repository();
    repo.commit('initial', { 'a.txt': 'a\n' });
    repo.write('a.txt', 'changed\n');
    // Finds the repository and HEAD at once, then hangs on the diff.
    const hangsOnDiff = wrappedGit('case " $* " in *" diff "*) exec sleep 30;; esac');
    const refusal = await refusalOf(
      collectGitChanges(
        { kind: 'uncommitted' },
        { cwd: repo.path, executable: hangsOnDiff, timeoutMs: 1_000 },
      ),
    );
    expect(refusal.message).toBe(
      'Unable to prepare git review: git diff did not finish within 1 s.',
    );
  });

  it('gives git 20 seconds by default', () => {
    expect(GIT_TIMEOUT_MS).toBe(20_000);
  });
});
