import { SYNC_PREVIEW_MAX_CHARS } from './constants.js';
import { REVIEW_STARTED_NOTE } from './review-messages.js';

/** The parts of a started review the note reads (a `ReviewStarted` has them all). */
export interface DispatchNoteInput {
  readonly status: string;
  readonly reviewModel?: string | undefined;
  readonly result?: unknown;
  readonly instructions?: string | undefined;
}

function preview(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = undefined;
  }
  return (text ?? String(value)).slice(0, SYNC_PREVIEW_MAX_CHARS);
}

/**
 * What the user sees once `/review` is under way. A background review: exactly
 * `Review started. Results will return here.` (one line, never echoing the instructions). A review
 * the rail had to run synchronously: `⚖ Review completed synchronously[ on <model>][ (focus:
 * <instructions>)] — results:`, a newline, and the first 4,000 characters of the result as JSON.
 * `instructions` defaults to the review's own (the text after any git target).
 */
export function formatDispatchNote(review: DispatchNoteInput, instructions?: string): string {
  if (review.status === 'dispatched') return REVIEW_STARTED_NOTE;
  const model = review.reviewModel ?? '';
  const focus = (instructions ?? review.instructions ?? '').trim();
  const head =
    '⚖ Review completed synchronously' +
    (model.length > 0 ? ` on ${model}` : '') +
    (focus.length > 0 ? ` (focus: ${focus})` : '') +
    ' — results:';
  return `${head}\n${preview(review.result !== undefined ? review.result : review)}`;
}
