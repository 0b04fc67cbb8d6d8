import { CANONICAL_PREVIEW_MAX, PREVIEW_MAX, PREVIEW_TAKE } from './limits.js';
import type { StoreContext } from './store-context.js';
import { truncateCodePoints } from './text-length.js';

/**
 * Collapses whitespace and shapes to `max` characters plus "..." when the text was longer.
 * Characters are code points, and a cut never splits a grapheme (an emoji stays whole).
 */
export function shapePreview(text: string, options: { take?: number; max?: number } = {}): string {
  const take = options.take ?? PREVIEW_TAKE;
  const max = options.max ?? PREVIEW_MAX;
  const collapsed = text.replace(/\s+/g, ' ').trim();
  const taken = truncateCodePoints(collapsed, take);
  const shaped = truncateCodePoints(taken, max);
  return shaped.length < collapsed.length ? `${shaped}...` : shaped;
}

/** The first visible user message (hidden rows and compaction carriers skipped). */
export function sessionPreview(context: StoreContext, sessionId: string): string | null {
  const content = context
    .statement(
      `SELECT content FROM messages
       WHERE session_id = ? AND active = 1 AND role = 'user' AND _compressed_summary = 0
         AND (display_kind IS NULL OR display_kind != 'hidden') AND content IS NOT NULL AND content != ''
       ORDER BY id LIMIT 1`,
    )
    .pluck()
    .get(sessionId) as string | undefined;
  return content === undefined ? null : shapePreview(content);
}

/** The newest visible user/assistant message, for the canonical chat card (≤ 80 characters). */
export function latestPreview(context: StoreContext, sessionId: string): string | null {
  const content = context
    .statement(
      `SELECT content FROM messages
       WHERE session_id = ? AND active = 1 AND role IN ('user', 'assistant') AND _compressed_summary = 0
         AND (display_kind IS NULL OR display_kind != 'hidden') AND content IS NOT NULL AND content != ''
       ORDER BY id DESC LIMIT 1`,
    )
    .pluck()
    .get(sessionId) as string | undefined;
  return content === undefined
    ? null
    : shapePreview(content, { take: CANONICAL_PREVIEW_MAX + 3, max: CANONICAL_PREVIEW_MAX });
}
