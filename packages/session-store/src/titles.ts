import { getCompressionTip } from './compression-chain.js';
import { isRecoverableEndReason } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { BOT_CHAT_TITLE, MAX_TITLE_LENGTH, TITLE_SOURCE_RANK, type TitleSource } from './limits.js';
import type { SessionRecord } from './records.js';
import { readSession, SESSION_VALUES } from './row-readers.js';
import type { StoreContext } from './store-context.js';
import { codePointLength } from './text-length.js';

// Control characters, zero-width characters and bidi overrides: invisible, and able to make two
// titles look alike.
const INVISIBLE = /[\p{Cc}\u200B-\u200F\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069\u061C]/gu;

/** Strips invisible characters and collapses whitespace; empty → null; too long → error. */
export function sanitizeTitle(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  const clean = raw.replace(/\s+/g, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
  if (clean.length === 0) return null;
  // Counted in code points, as a person counts: 60 emoji are 60 characters, not 120.
  const length = codePointLength(clean);
  if (length > MAX_TITLE_LENGTH) {
    throw new SessionStoreError({
      code: 'title_too_long',
      message: ERROR_MESSAGES.titleTooLong(length, MAX_TITLE_LENGTH),
    });
  }
  return clean;
}

function rankOf(source: string | null): number {
  return TITLE_SOURCE_RANK[(source ?? 'user') as TitleSource] ?? TITLE_SOURCE_RANK.user;
}

export interface ApplyTitleInput {
  readonly sessionId: string;
  readonly title: string | null;
  readonly source: TitleSource;
}

interface Holder {
  id: string;
  archived: number;
  hidden: number;
  endReason: string | null;
  lineageRootId: string;
  startedAt: number;
}

/**
 * Whether lookups would resurrect this archived chat: judged at its compression tip, because a
 * compressed lineage's root always ends with `compression`.
 */
function recoverableAtTip(context: StoreContext, id: string): boolean {
  const tipReason = context
    .statement('SELECT end_reason FROM sessions WHERE id = ?')
    .pluck()
    .get(getCompressionTip(context, id)) as string | null | undefined;
  return isRecoverableEndReason(tipReason);
}

/**
 * Sets a title inside the caller's write transaction. Returns false when an automatic writer is
 * outranked (a silent no-op by design). Conflicts: a compression ancestor hands its title to the
 * claimant; an archived holder of the canonical Bot Chat title that lookups would not resurrect
 * (hidden, or its tip not recoverably ended) gives it up (see README "Bot Chat title deadlock");
 * anything else is refused.
 */
export function applyTitle(context: StoreContext, input: ApplyTitleInput): boolean {
  const clean = sanitizeTitle(input.title);
  const row = context
    .statement(
      'SELECT id, title, title_source AS titleSource, hidden, lineage_root_id AS lineageRootId, started_at AS startedAt FROM sessions WHERE id = ?',
    )
    .get(input.sessionId) as
    | {
        id: string;
        title: string | null;
        titleSource: string | null;
        hidden: number;
        lineageRootId: string;
        startedAt: number;
      }
    | undefined;
  if (!row) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(input.sessionId),
    });
  }
  if (row.title === clean) return true;
  const automatic = input.source !== 'user';
  if (row.title === BOT_CHAT_TITLE && row.hidden === 1) {
    if (automatic) return false;
    throw new SessionStoreError({
      code: 'canonical_title_locked',
      message: ERROR_MESSAGES.canonicalRename,
    });
  }
  if (automatic && row.title !== null && rankOf(input.source) < rankOf(row.titleSource))
    return false;
  if (clean !== null) {
    const holder = context
      .statement(
        `SELECT id, archived, hidden, end_reason AS endReason, lineage_root_id AS lineageRootId, started_at AS startedAt
         FROM sessions WHERE title = ? AND id != ?`,
      )
      .get(clean, row.id) as Holder | undefined;
    if (holder) {
      const compressionAncestor =
        holder.lineageRootId === row.lineageRootId && holder.startedAt <= row.startedAt;
      const retiredCanonical =
        clean === BOT_CHAT_TITLE &&
        holder.archived === 1 &&
        (holder.hidden === 1 || !recoverableAtTip(context, holder.id));
      if (!compressionAncestor && !retiredCanonical) {
        throw new SessionStoreError({
          code: 'title_in_use',
          message: ERROR_MESSAGES.titleInUse(clean, holder.id),
        });
      }
      context
        .statement('UPDATE sessions SET title = NULL, title_source = NULL WHERE id = ?')
        .run(holder.id);
    }
  }
  context
    .statement('UPDATE sessions SET title = ?, title_source = ? WHERE id = ?')
    .run(clean, clean === null ? null : input.source, row.id);
  return true;
}

export interface TitleLookupOptions {
  readonly includeHidden?: boolean;
}

/** Exact, case-sensitive match after sanitising — one indexed SQL lookup. */
export function getSessionByTitle(
  context: StoreContext,
  title: string,
  options: TitleLookupOptions = {},
): SessionRecord | undefined {
  let clean: string | null;
  try {
    clean = sanitizeTitle(title);
  } catch {
    return undefined; // Longer than any stored title.
  }
  if (clean === null) return undefined;
  return readSession(
    context,
    `SELECT ${SESSION_VALUES} FROM sessions s WHERE s.title = ? AND (s.hidden = 0 OR ?)`,
    clean,
    options.includeHidden ? 1 : 0,
  );
}

/**
 * Re-ensures the partial unique index. Duplicates left by an older release lose their title,
 * except the newest row (highest rowid); failing to build the index never aborts the open.
 */
export function ensureTitleUniqueIndex(context: StoreContext): { cleared: number } {
  const create =
    'CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL';
  try {
    context.db.exec(create);
    return { cleared: 0 };
  } catch (error) {
    if (!String((error as { code?: string }).code ?? '').startsWith('SQLITE_CONSTRAINT'))
      return { cleared: 0 };
  }
  const cleared = context.db
    .prepare(
      `UPDATE sessions SET title = NULL, title_source = NULL
       WHERE title IS NOT NULL
         AND rowid != (SELECT max(rowid) FROM sessions newer WHERE newer.title = sessions.title)`,
    )
    .run().changes;
  try {
    context.db.exec(create);
  } catch {
    // Left to the next open; lookups stay exact either way.
  }
  return { cleared };
}
