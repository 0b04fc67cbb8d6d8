import {
  CONVERSATION_FOOTER,
  CONVERSATION_HEADER,
  GIT_SECTION_FOOTER,
  GIT_SECTION_HEADER,
  GOAL_MAX_CHARS,
  INSTRUCTIONS_HEADER,
  REVIEW_CLOSING_NOTE,
  REVIEW_GOAL,
  REVIEW_ORIGIN_NOTE,
} from './constants.js';
import type { GitChanges } from './git/collect-git-changes.js';
import type { SnapshotEntry } from './snapshot-recent-messages.js';

/** What the reviewer is given: a one-line goal (its live label) and the full briefing. */
export interface ReviewTask {
  readonly goal: string;
  readonly context: string;
}

export interface BuildReviewTaskOptions {
  /** The diff of a git-target review (`collectGitChanges`). */
  readonly git?: GitChanges | undefined;
}

/**
 * The reviewer's label: `Review: <instructions>` (whitespace collapsed) or `Review recent work`
 * (`Review <git label>[: <instructions>]` for git targets), one line, at most 80 characters — a
 * longer one keeps its first 79, right-trimmed, plus `…`.
 */
export function buildReviewGoal(instructions: string, git?: GitChanges): string {
  const focus = instructions.split(/\s+/).filter(Boolean).join(' ');
  const base = git === undefined ? 'Review' : `Review ${git.label}`;
  const goal =
    focus.length > 0
      ? git === undefined
        ? `Review: ${focus}`
        : `${base}: ${focus}`
      : git === undefined
        ? 'Review recent work'
        : base;
  return goal.length > GOAL_MAX_CHARS ? `${goal.slice(0, GOAL_MAX_CHARS - 1).trimEnd()}…` : goal;
}

function gitSection(git: GitChanges): string[] {
  const lines = ['', GIT_SECTION_HEADER, `Target: ${git.description}.`, '', git.stat];
  const patch = git.patch.trimEnd();
  if (patch.length > 0) lines.push('', patch);
  if (git.truncated)
    lines.push(
      `[... git output truncated at ${git.maxChars} characters; see all of it with: ${git.inspectCommand} (in ${git.repository}) ...]`,
    );
  lines.push(GIT_SECTION_FOOTER);
  return lines;
}

/**
 * The goal and the reviewer's briefing, in this order: the standing reviewer instructions
 * (`REVIEW_GOAL`); where the evidence comes from; the conversation excerpt (`[USER]` /
 * `[PRIMARY AGENT]` blocks, oldest first); the loaded skills to honour; the git changes, for a git
 * target; the user's full instructions (newlines kept); and a closing note on where the review goes.
 */
export function buildReviewTask(
  snapshot: readonly SnapshotEntry[],
  instructions = '',
  skills: readonly string[] = [],
  options: BuildReviewTaskOptions = {},
): ReviewTask {
  const lines = [REVIEW_GOAL, '', REVIEW_ORIGIN_NOTE, '', CONVERSATION_HEADER];
  if (snapshot.length === 0) lines.push('(no messages yet — review the git changes below)', '');
  for (const entry of snapshot)
    lines.push(entry.role === 'user' ? '[USER]' : '[PRIMARY AGENT]', entry.text, '');
  lines.push(CONVERSATION_FOOTER);
  if (skills.length > 0)
    lines.push(
      '',
      `The primary agent was operating under these loaded skills: ${skills.join(', ')}. Before reviewing, ` +
        'load each with skill_view(name=...) and treat their conventions, invariants, and review ' +
        'standards as binding — the work was produced under them.',
    );
  if (options.git !== undefined) lines.push(...gitSection(options.git));
  const prompt = instructions.trim();
  if (prompt.length > 0) lines.push('', INSTRUCTIONS_HEADER, prompt);
  lines.push('', REVIEW_CLOSING_NOTE);
  return { goal: buildReviewGoal(instructions, options.git), context: lines.join('\n') };
}
