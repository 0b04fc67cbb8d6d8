/** Chat messages the reviewer sees (the most recent user/assistant messages with text). */
export const DEFAULT_CONTEXT_MESSAGES = 10;
/** Per-message excerpt cap, in characters. */
export const MESSAGE_CHAR_CAP = 12_000;
/** Appended to a message cut at `MESSAGE_CHAR_CAP`. */
export const TRUNCATION_SUFFIX = '\n[... truncated ...]';
/** Loaded skills named in the briefing, at most. */
export const DEFAULT_SKILLS_LIMIT = 8;
/** The goal (the reviewer's live label) is at most this long; longer ones end in `…`. */
export const GOAL_MAX_CHARS = 80;
/** Characters of the JSON result the synchronous-fallback dispatch note shows. */
export const SYNC_PREVIEW_MAX_CHARS = 4_000;
/** A git diff section holds at most this many characters of git output; the rest is disclosed as cut. */
export const GIT_DIFF_MAX_CHARS = 100_000;
/** Each git command gets this long before it is killed. */
export const GIT_TIMEOUT_MS = 20_000;

/**
 * The reviewer's standing instructions, first in every briefing. One constant, because tests (and
 * anyone checking a briefing) look for it verbatim.
 */
export const REVIEW_GOAL =
  'You are an independent senior reviewer. Thoroughly review the work presented in the excerpt ' +
  'below — a pull request, diff, code change, document, design or other artifact. Do not judge it ' +
  'from the excerpt alone: investigate everything it references (open the PR, read the diff and the ' +
  'code around it, check out the branch or commit, read the docs or design, and run the code or its ' +
  'tests where feasible). Then write a full, structured review covering: what the work does; whether ' +
  'it is correct and complete; concrete defects and risks, each with file and line references; what ' +
  'you verified (ran, tested, reproduced) versus what you only read; and a clear final verdict with ' +
  'recommended next steps.';

/** Says where the evidence comes from; follows `REVIEW_GOAL` after a blank line. */
export const REVIEW_ORIGIN_NOTE =
  'You were spawned by the /review command. What follows is an excerpt of the most recent ' +
  'conversation between the user and their primary agent; it is your starting evidence and ' +
  'references the work to review.';

/** Closes every briefing. */
export const REVIEW_CLOSING_NOTE =
  'Your review will be delivered back into that conversation, addressed to the primary agent and ' +
  'its user. Be direct and specific; do not soften findings.';

export const CONVERSATION_HEADER = '--- Recent conversation (oldest first) ---';
export const CONVERSATION_FOOTER = '--- End of conversation excerpt ---';
export const GIT_SECTION_HEADER = '--- Git changes to review ---';
export const GIT_SECTION_FOOTER = '--- End of git changes ---';
export const INSTRUCTIONS_HEADER = 'Additional review instructions from the user:';
