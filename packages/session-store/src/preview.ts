import { CANONICAL_PREVIEW_MAX, PREVIEW_MAX, PREVIEW_TAKE } from './limits.js';
import type { StoreContext } from './store-context.js';
import { codePointLength, truncateCodePoints } from './text-length.js';

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

const FIRST_VISIBLE_USER_MESSAGE = `FROM messages m
  WHERE m.session_id = ? AND m.active = 1 AND m.role = 'user' AND m._compressed_summary = 0
    AND (m.display_kind IS NULL OR m.display_kind != 'hidden') AND m.content IS NOT NULL AND m.content != ''
  ORDER BY m.id LIMIT 1`;

/** The first visible user message (hidden rows and compaction carriers skipped). */
export function sessionPreview(context: StoreContext, sessionId: string): string | null {
  const content = context
    .statement(`SELECT m.content ${FIRST_VISIBLE_USER_MESSAGE}`)
    .pluck()
    .get(sessionId) as string | undefined;
  return content === undefined ? null : shapePreview(content);
}

/**
 * How much of a message the batched preview reads: a preview shows 63 characters, and a first
 * message may be a pasted file of megabytes. A cut never changes the preview while the cut text
 * still has more than `PREVIEW_TAKE` characters after whitespace is collapsed (the kept
 * characters and the "..." come out the same); otherwise the whole message is read.
 */
const PREVIEW_SOURCE_CHARS = 512;

/**
 * `sessionPreview` for many sessions in one statement (a listing page): each id costs one index
 * probe inside SQLite instead of a statement round trip, and only the start of each message is
 * read.
 */
export function sessionPreviews(
  context: StoreContext,
  sessionIds: readonly string[],
): Map<string, string | null> {
  const previews = new Map<string, string | null>();
  if (sessionIds.length === 0) return previews;
  const rows = context
    .rawStatement(
      `SELECT j.value AS id,
         (SELECT substr(m.content, 1, ${PREVIEW_SOURCE_CHARS + 1}) ${FIRST_VISIBLE_USER_MESSAGE.replace('?', 'j.value')}) AS content
       FROM json_each(?) j`,
    )
    .all(JSON.stringify(sessionIds)) as [string, string | null][];
  for (const [id, content] of rows) {
    if (content === null) {
      previews.set(id, null);
    } else if (
      codePointLength(content) > PREVIEW_SOURCE_CHARS &&
      codePointLength(content.replace(/\s+/g, ' ').trim()) <= PREVIEW_TAKE
    ) {
      previews.set(id, sessionPreview(context, id)); // Mostly whitespace: read it all.
    } else {
      previews.set(id, shapePreview(content));
    }
  }
  return previews;
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
