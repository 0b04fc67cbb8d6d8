// Every sentence /review shows a person, in one place, so each surface says the same thing.

/** No agent (no rail) to review for. */
export const NO_ACTIVE_AGENT_MESSAGE = 'No active agent — send a message first.';
/** The snapshot found no user or assistant text. */
export const EMPTY_CONVERSATION_MESSAGE = 'Nothing to review yet — the conversation is empty.';
/** Prefix of the refusal for a rail answer that is neither a dispatch nor an error. */
export const DISPATCH_FAILED_PREFIX = 'Review dispatch failed: ';
/** The dispatch note of a background review. */
export const REVIEW_STARTED_NOTE = 'Review started. Results will return here.';
/** `/review` with a git target whose diff is empty. */
export const GIT_CLEAN_MESSAGE = 'Nothing to review — the selected git diff is clean.';
/** A git target without its argument. */
export const REVIEW_USAGE =
  'Usage: /review [uncommitted | base <branch> | commit <sha> | review instructions]';
/** Prefix of every git preparation failure. */
export const GIT_ERROR_PREFIX = 'Unable to prepare git review: ';
/** Prefix surfaces put before an unexpected (non-refusal) failure. */
export const START_FAILED_PREFIX = '/review failed to start: ';

// Refusals surfaces give before they call startReview.

/** Gateway: the chat has no session key. */
export const REVIEW_NO_SESSION_MESSAGE = 'Review unavailable (no session).';
/** Gateway: this session's turn is still running. */
export const REVIEW_AGENT_RUNNING_MESSAGE =
  'Agent is running — wait for the turn to finish, then /review.';
/** Gateway and TUI: no agent and no stored transcript for this chat. */
export const REVIEW_NOTHING_YET_MESSAGE = 'Nothing to review yet — send a message first.';
/** TUI: the session is running a turn. */
export const REVIEW_SESSION_BUSY_MESSAGE =
  'session busy — wait for the current turn to finish, then /review';
/** TUI: the session's agent runs on a remote compute host. */
export const REVIEW_REMOTE_AGENT_MESSAGE =
  "/review runs on the local agent only for now — this session's agent lives on a remote compute host.";
