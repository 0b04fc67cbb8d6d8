import { BOT_CHAT_TITLE } from './limits.js';
import type { SessionRecord } from './records.js';
import { readSessions, SESSION_VALUES } from './row-readers.js';
import type { StoreContext } from './store-context.js';
import { getSessionByTitle, sanitizeTitle } from './titles.js';

const NUMBERED = /^(.*) #(\d+)$/;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

function numberedVariants(
  context: StoreContext,
  base: string,
): { row: SessionRecord; number: number }[] {
  const rows = readSessions(
    context,
    `SELECT ${SESSION_VALUES} FROM sessions s WHERE s.title LIKE ? ESCAPE '\\'`,
    `${escapeLike(base)} #%`,
  );
  const variants: { row: SessionRecord; number: number }[] = [];
  for (const row of rows) {
    const match = NUMBERED.exec(row.title ?? '');
    if (match && match[1] === base) variants.push({ row, number: Number(match[2]) });
  }
  return variants;
}

/**
 * Resolves a title a person typed: the latest numbered continuation (`<t> #N`) wins over the bare
 * title. The canonical `Bot Chat` is never numbered, so it resolves exactly.
 */
export function resolveSessionByTitle(
  context: StoreContext,
  title: string,
): SessionRecord | undefined {
  let clean: string | null;
  try {
    clean = sanitizeTitle(title);
  } catch {
    return undefined; // Longer than any stored title: a lookup finds nothing, as getSessionByTitle.
  }
  if (clean === null) return undefined;
  if (clean === BOT_CHAT_TITLE) return getSessionByTitle(context, clean, { includeHidden: true });
  const latest = numberedVariants(context, clean).sort(
    (left, right) => right.number - left.number,
  )[0];
  return latest?.row ?? getSessionByTitle(context, clean, { includeHidden: true });
}

/** The title for a continuation: `<base> #N` with N = 2, 3, … (an existing suffix is replaced). */
export function getNextTitleInLineage(context: StoreContext, title: string): string {
  const clean = sanitizeTitle(title) ?? '';
  const base = NUMBERED.exec(clean)?.[1] ?? clean;
  const highest = numberedVariants(context, base).reduce(
    (max, variant) => Math.max(max, variant.number),
    1,
  );
  return `${base} #${highest + 1}`;
}
