export {
  type BuildReviewTaskOptions,
  buildReviewGoal,
  buildReviewTask,
  type ReviewTask,
} from './build-review-task.js';
export { type CollectLoadedSkillsOptions, collectLoadedSkills } from './collect-loaded-skills.js';
export {
  CONVERSATION_FOOTER,
  CONVERSATION_HEADER,
  DEFAULT_CONTEXT_MESSAGES,
  DEFAULT_SKILLS_LIMIT,
  GIT_DIFF_MAX_CHARS,
  GIT_SECTION_FOOTER,
  GIT_SECTION_HEADER,
  GIT_TIMEOUT_MS,
  GOAL_MAX_CHARS,
  INSTRUCTIONS_HEADER,
  MESSAGE_CHAR_CAP,
  REVIEW_CLOSING_NOTE,
  REVIEW_GOAL,
  REVIEW_ORIGIN_NOTE,
  SYNC_PREVIEW_MAX_CHARS,
  TRUNCATION_SUFFIX,
} from './constants.js';
export type {
  DelegationDispatch,
  DelegationRail,
  DelegationRefused,
  DelegationRequest,
  ReviewOrigin,
} from './delegation-rail.js';
export { describeReviewError } from './describe-review-error.js';
export { type DispatchNoteInput, formatDispatchNote } from './format-dispatch-note.js';
export {
  type CollectGitChangesOptions,
  collectGitChanges,
  type GitChanges,
  type GitOptions,
} from './git/collect-git-changes.js';
export {
  type GitReviewTarget,
  isCommitSha,
  isSafeBranchArgument,
  parseReviewRequest,
  type ReviewRequest,
  type ReviewTarget,
} from './git/review-target.js';
export { extractMessageText } from './message-text.js';
export {
  type ReviewConfigInput,
  type ReviewCredentials,
  resolveReviewFallbackProviders,
  resolveReviewRouting,
} from './resolve-review-routing.js';
export { ReviewEngineError, type ReviewEngineErrorCode } from './review-engine-error.js';
export {
  DISPATCH_FAILED_PREFIX,
  EMPTY_CONVERSATION_MESSAGE,
  GIT_CLEAN_MESSAGE,
  GIT_ERROR_PREFIX,
  NO_ACTIVE_AGENT_MESSAGE,
  REVIEW_AGENT_RUNNING_MESSAGE,
  REVIEW_NO_SESSION_MESSAGE,
  REVIEW_NOTHING_YET_MESSAGE,
  REVIEW_REMOTE_AGENT_MESSAGE,
  REVIEW_SESSION_BUSY_MESSAGE,
  REVIEW_STARTED_NOTE,
  REVIEW_USAGE,
  START_FAILED_PREFIX,
} from './review-messages.js';
export { ReviewRefusal } from './review-refusal.js';
export { type SnapshotEntry, snapshotRecentMessages } from './snapshot-recent-messages.js';
export { type ReviewStarted, type StartReviewOptions, startReview } from './start-review.js';
