import { ReviewEngineError, type ReviewEngineErrorCode } from './review-engine-error.js';

const MARKER = Symbol.for('@hermes/review-engine.refusal');

/**
 * An expected "no": the message is written for the person who typed `/review` and is shown to them
 * verbatim. Anything else a surface catches is an unexpected failure (see `describeReviewError`).
 */
export class ReviewRefusal extends ReviewEngineError {
  readonly [MARKER] = true;

  constructor(
    code: Exclude<ReviewEngineErrorCode, 'invalid_argument'>,
    message: string,
    cause?: unknown,
  ) {
    super({ code, message, cause });
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static override isInstance(error: unknown): error is ReviewRefusal {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}
