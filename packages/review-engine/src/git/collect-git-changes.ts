import { stat } from 'node:fs/promises';
import { GIT_DIFF_MAX_CHARS, GIT_TIMEOUT_MS } from '../constants.js';
import { GIT_CLEAN_MESSAGE, GIT_ERROR_PREFIX } from '../review-messages.js';
import { ReviewRefusal } from '../review-refusal.js';
import type { GitReviewTarget } from './review-target.js';
import { type GitOutput, runGit } from './run-git.js';

export interface GitOptions {
  /** The git program (default `git` on `PATH`). */
  readonly executable?: string | undefined;
  /** Per git command (default 20 s). */
  readonly timeoutMs?: number | undefined;
  /** Characters of git output the section may hold (default 100,000). */
  readonly maxChars?: number | undefined;
}

export interface CollectGitChangesOptions extends GitOptions {
  /** The session's working directory; any folder inside the repository. */
  readonly cwd: string;
}

/** The diff a git-target review puts in front of the reviewer. */
export interface GitChanges {
  readonly target: GitReviewTarget;
  /** The repository's top-level folder; every git command ran there. */
  readonly repository: string;
  /** Short name for the reviewer's label: `uncommitted changes`, `changes since main`, `commit 1a2b3c4d5e6f`. */
  readonly label: string;
  /** One sentence saying exactly what the diff covers. */
  readonly description: string;
  /** The git command a reader runs to see the whole change. */
  readonly inspectCommand: string;
  /** `--stat` overview (plus untracked files for `uncommitted`). */
  readonly stat: string;
  /** The patch text. */
  readonly patch: string;
  /** True when the output went past `maxChars` and was cut. */
  readonly truncated: boolean;
  readonly maxChars: number;
}

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv'];
const UNTRACKED_NAMES_SHOWN = 200;

/** One character budget shared by the git commands of a section. */
class Budget {
  remaining: number;
  truncated = false;

  constructor(maxChars: number) {
    this.remaining = maxChars;
  }

  /** Counts `text` that is already in hand against the budget. */
  spend(text: string): string {
    this.remaining -= text.length;
    return text;
  }

  /** Runs `command` with what is left, or skips it (and records the cut) when nothing is left. */
  async collect(command: (maxChars: number) => Promise<GitOutput>): Promise<string> {
    if (this.truncated || this.remaining <= 0) {
      this.truncated = true;
      return '';
    }
    const output = await command(this.remaining);
    if (output.truncated) this.truncated = true;
    return this.spend(output.stdout);
  }
}

async function checkWorkingDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (info === undefined || !info.isDirectory())
    throw new ReviewRefusal(
      'git_failed',
      `${GIT_ERROR_PREFIX}the working directory ${cwd} does not exist.`,
    );
}

async function repositoryRoot(cwd: string, options: GitOptions): Promise<string> {
  const output = await runGit(['rev-parse', '--show-toplevel'], {
    cwd,
    executable: options.executable,
    timeoutMs: options.timeoutMs,
    okExitCodes: [0, 128],
  });
  const root = output.stdout.trim();
  if (output.exitCode !== 0 || root.length === 0) {
    const reason = /not a git repository/i.test(output.stderr)
      ? `${cwd} is not inside a git repository.`
      : `${cwd} is not a git working tree (${output.stderr.trim().split('\n')[0] ?? 'no work tree'}).`;
    throw new ReviewRefusal('git_failed', `${GIT_ERROR_PREFIX}${reason}`);
  }
  return root;
}

/**
 * Collects the diff for a git review target in the repository that contains `cwd`: `git diff --stat`
 * and the patch, bounded to `maxChars` characters in all (git is stopped once they are read; the cut
 * is reported in `truncated`). Every git command gets `timeoutMs`. Refuses (`ReviewRefusal`) when
 * `cwd` is not in a repository, the branch or commit is unknown, git fails or is missing, and with
 * `Nothing to review — the selected git diff is clean.` when there is nothing to show.
 */
export async function collectGitChanges(
  target: GitReviewTarget,
  options: CollectGitChangesOptions,
): Promise<GitChanges> {
  await checkWorkingDirectory(options.cwd);
  const repository = await repositoryRoot(options.cwd, options);
  const maxChars = options.maxChars ?? GIT_DIFF_MAX_CHARS;
  const budget = new Budget(maxChars);
  const git = (
    args: readonly string[],
    more: { maxChars?: number | undefined; okExitCodes?: readonly number[] | undefined } = {},
  ) =>
    runGit(args, {
      cwd: repository,
      executable: options.executable,
      timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
      maxChars: more.maxChars,
      okExitCodes: more.okExitCodes,
    });
  const bounded = (args: readonly string[], okExitCodes?: readonly number[]) =>
    budget.collect((remaining) => git(args, { maxChars: remaining, okExitCodes }));
  const resolveCommit = async (revision: string): Promise<string | undefined> => {
    const output = await git(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
      {
        okExitCodes: [0, 1, 128],
      },
    );
    const sha = output.stdout.trim();
    return output.exitCode === 0 && sha.length > 0 ? sha : undefined;
  };
  const clean = () => new ReviewRefusal('git_clean', GIT_CLEAN_MESSAGE);
  const result = (
    fields: Omit<GitChanges, 'target' | 'repository' | 'truncated' | 'maxChars'>,
  ): GitChanges => ({
    target,
    repository,
    ...fields,
    truncated: budget.truncated,
    maxChars,
  });

  if (target.kind === 'uncommitted') {
    const head = await resolveCommit('HEAD');
    // A repository without commits: everything staged is new, so diff against the empty tree.
    const base = head ?? (await git(['hash-object', '-t', 'tree', '--stdin'])).stdout.trim();
    // Counted against the budget below, together with the untracked-file list.
    const statOutput = await git(['diff', '--stat=200', ...DIFF_FLAGS, base, '--'], { maxChars });
    if (statOutput.truncated) budget.truncated = true;
    const diffStat = statOutput.stdout;
    const untracked = (
      await git(['ls-files', '--others', '--exclude-standard', '-z'], { maxChars: 1_000_000 })
    ).stdout
      .split('\0')
      .filter((name) => name.length > 0);
    if (diffStat.trim().length === 0 && untracked.length === 0) throw clean();
    const lines = diffStat.trimEnd().length > 0 ? [diffStat.trimEnd()] : [];
    if (untracked.length > 0) {
      lines.push(`Untracked files (${untracked.length}):`);
      lines.push(...untracked.slice(0, UNTRACKED_NAMES_SHOWN).map((name) => `  ${name}`));
      if (untracked.length > UNTRACKED_NAMES_SHOWN)
        lines.push(`  … and ${untracked.length - UNTRACKED_NAMES_SHOWN} more`);
    }
    let statText = lines.join('\n');
    if (statText.length > maxChars) {
      statText = statText.slice(0, maxChars);
      budget.truncated = true;
    }
    budget.spend(statText);
    const patches = [await bounded(['diff', '--patch', ...DIFF_FLAGS, base, '--'])];
    for (const file of untracked) {
      // Exit code 1 means "the files differ" for --no-index. A path git cannot diff (a nested
      // repository, a socket) is listed above and skipped here rather than failing the review.
      const patch = await bounded(
        ['diff', '--no-index', ...DIFF_FLAGS, '--', '/dev/null', file],
        [0, 1],
      ).catch(() => '');
      patches.push(patch);
      if (budget.truncated) break;
    }
    return result({
      label: 'uncommitted changes',
      description: `uncommitted changes (staged, unstaged and untracked files) against ${head === undefined ? 'an empty repository' : 'HEAD'} in ${repository}`,
      inspectCommand: head === undefined ? 'git status' : 'git diff HEAD',
      stat: statText,
      patch: patches.join(''),
    });
  }

  if (target.kind === 'base') {
    const baseCommit = await resolveCommit(target.branch);
    if (baseCommit === undefined)
      throw new ReviewRefusal(
        'git_failed',
        `${GIT_ERROR_PREFIX}${JSON.stringify(target.branch)} is not a branch, tag or commit in ${repository}.`,
      );
    const head = await resolveCommit('HEAD');
    if (head === undefined)
      throw new ReviewRefusal(
        'git_failed',
        `${GIT_ERROR_PREFIX}${repository} has no commits on the current branch yet.`,
      );
    const mergeBase = (
      await git(['merge-base', head, baseCommit], { okExitCodes: [0, 1] })
    ).stdout.trim();
    if (mergeBase.length === 0)
      throw new ReviewRefusal(
        'git_failed',
        `${GIT_ERROR_PREFIX}the current branch and ${JSON.stringify(target.branch)} share no history.`,
      );
    const diffStat = await bounded(['diff', '--stat=200', ...DIFF_FLAGS, mergeBase, '--']);
    if (diffStat.trim().length === 0) throw clean();
    const patch = await bounded(['diff', '--patch', ...DIFF_FLAGS, mergeBase, '--']);
    const short = mergeBase.slice(0, 12);
    return result({
      label: `changes since ${target.branch}`,
      description: `the current branch since it diverged from ${target.branch} (merge base ${short}), uncommitted changes to tracked files included, in ${repository}`,
      inspectCommand: `git diff ${short}`,
      stat: diffStat.trimEnd(),
      patch,
    });
  }

  const commit = await resolveCommit(target.sha);
  if (commit === undefined)
    throw new ReviewRefusal(
      'git_failed',
      `${GIT_ERROR_PREFIX}commit ${target.sha} is not in ${repository} (or the short SHA is ambiguous — give more digits).`,
    );
  const showFlags = ['--diff-merges=first-parent', ...DIFF_FLAGS];
  const diffStat = await bounded(['show', '--format=', '--stat=200', ...showFlags, commit, '--']);
  if (diffStat.trim().length === 0) throw clean();
  const patch = await bounded(['show', '--format=fuller', '--patch', ...showFlags, commit, '--']);
  const short = commit.slice(0, 12);
  return result({
    label: `commit ${short}`,
    description: `commit ${commit} (its message, files and patch; a merge against its first parent) in ${repository}`,
    inspectCommand: `git show ${short}`,
    stat: diffStat.trimEnd(),
    patch,
  });
}
