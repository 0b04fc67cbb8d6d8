import { START_FAILED_PREFIX } from './review-messages.js';
import { ReviewRefusal } from './review-refusal.js';

/**
 * The reply a surface gives when `startReview` throws: a refusal's own message verbatim, anything
 * else as `/review failed to start: <message>`.
 */
export function describeReviewError(error: unknown): string {
  if (ReviewRefusal.isInstance(error)) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `${START_FAILED_PREFIX}${message}`;
}
