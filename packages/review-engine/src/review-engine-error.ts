const MARKER = Symbol.for('@hermes/review-engine.error');

export type ReviewEngineErrorCode =
  /** No rail: there is no agent to review for. */
  | 'no_active_agent'
  /** Nothing in the conversation to review. */
  | 'empty_conversation'
  /** The rail refused (its own error text, e.g. delegation not available or paused). */
  | 'dispatch_refused'
  /** The rail answered something that is neither a dispatch nor an error. */
  | 'dispatch_failed'
  /** A git target without its argument, or with an argument that cannot be one. */
  | 'review_usage'
  /** git could not produce the diff (not a repository, unknown branch, timeout, no git, …). */
  | 'git_failed'
  /** The selected git diff is empty. */
  | 'git_clean'
  /** A programming error in how the engine was called. */
  | 'invalid_argument';

/** The one base error of `@hermes/review-engine`, with a stable string `code`. */
export class ReviewEngineError extends Error {
  readonly code: ReviewEngineErrorCode;
  readonly [MARKER] = true;

  constructor(options: { code: ReviewEngineErrorCode; message: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is ReviewEngineError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}
