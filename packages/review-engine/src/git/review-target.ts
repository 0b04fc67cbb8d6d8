import { GIT_ERROR_PREFIX, REVIEW_USAGE } from '../review-messages.js';
import { ReviewRefusal } from '../review-refusal.js';

/** What `/review` looks at besides the conversation. */
export type GitReviewTarget =
  /** Staged, unstaged and untracked changes against `HEAD`. */
  | { readonly kind: 'uncommitted' }
  /** The current branch since it diverged from `branch`, uncommitted changes included. */
  | { readonly kind: 'base'; readonly branch: string }
  /** One commit. */
  | { readonly kind: 'commit'; readonly sha: string };

export type ReviewTarget = { readonly kind: 'conversation' } | GitReviewTarget;

export interface ReviewRequest {
  readonly target: ReviewTarget;
  /** The free-form instructions left after the target words, trimmed (newlines kept). */
  readonly instructions: string;
}

const FIRST_WORD = /^(\S+)(?:\s+([\s\S]*))?$/;
const SHA = /^[0-9a-f]{4,64}$/i;
// No leading "-" (it would be read as an option), no whitespace or control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const BRANCH = /^[^\s\x00-\x1f\x7f-][^\s\x00-\x1f\x7f]{0,254}$/;

function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text);
}

/** True for a name `git` can only read as a revision, never as an option. */
export function isSafeBranchArgument(branch: string): boolean {
  return BRANCH.test(branch);
}

/** True for 4 to 64 hexadecimal digits. */
export function isCommitSha(sha: string): boolean {
  return SHA.test(sha);
}

/**
 * Splits `/review` arguments into a target and instructions: `uncommitted [instructions]`,
 * `base <branch> [instructions]`, `commit <sha> [instructions]`; any other first word starts
 * free-form instructions about the conversation. A target word without its argument, a branch that
 * could be read as an option (`--output=…`) and a SHA that is not hexadecimal are refused with a
 * `ReviewRefusal` (`review_usage`) before git runs.
 */
export function parseReviewRequest(input: string): ReviewRequest {
  const text = input.trim();
  const match = FIRST_WORD.exec(text);
  if (match?.[1] === undefined) return { target: { kind: 'conversation' }, instructions: '' };
  const keyword = match[1].toLowerCase();
  const rest = (match[2] ?? '').trim();
  if (keyword === 'uncommitted') return { target: { kind: 'uncommitted' }, instructions: rest };
  if (keyword !== 'base' && keyword !== 'commit')
    return { target: { kind: 'conversation' }, instructions: text };
  const argument = FIRST_WORD.exec(rest);
  if (argument?.[1] === undefined) throw new ReviewRefusal('review_usage', REVIEW_USAGE);
  const value = argument[1];
  const instructions = (argument[2] ?? '').trim();
  if (keyword === 'base') {
    if (!isSafeBranchArgument(value))
      throw new ReviewRefusal(
        'review_usage',
        `${GIT_ERROR_PREFIX}${quoted(value)} is not a valid branch name (it cannot start with "-" or contain control characters).`,
      );
    return { target: { kind: 'base', branch: value }, instructions };
  }
  if (!isCommitSha(value))
    throw new ReviewRefusal(
      'review_usage',
      `${GIT_ERROR_PREFIX}${quoted(value)} is not a commit SHA — give 4 to 64 hex digits (see git log --oneline).`,
    );
  return { target: { kind: 'commit', sha: value.toLowerCase() }, instructions };
}
