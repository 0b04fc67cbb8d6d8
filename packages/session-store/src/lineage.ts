import { holdsCompressionLease } from './compression-lease.js';
import { AUTOMATIC_END_REASONS_SQL, END_REASON } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { BOT_CHAT_TITLE } from './limits.js';
import { insertMessages, type MessageInput } from './messages.js';
import { getSession, insertSession } from './sessions.js';
import type { StoreContext } from './store-context.js';
import { optionalInteger, optionalNumber } from './validation.js';

export { getCompressionChain, getCompressionTip } from './compression-chain.js';

export function getLineageIds(context: StoreContext, id: string): string[] {
  return context
    .statement(
      `SELECT id FROM sessions WHERE lineage_root_id = (SELECT lineage_root_id FROM sessions WHERE id = ?)
       ORDER BY started_at, id`,
    )
    .pluck()
    .all(id) as string[];
}

const LINEAGE_WHERE = 'lineage_root_id = (SELECT lineage_root_id FROM sessions WHERE id = ?)';

export function setLineageArchived(
  context: StoreContext,
  id: string,
  archived: boolean,
  options: { automatic?: boolean } = {},
): number {
  return context
    .statement(`UPDATE sessions SET archived = ?, auto_archived = ? WHERE ${LINEAGE_WHERE}`)
    .run(archived ? 1 : 0, archived && options.automatic ? 1 : 0, id).changes;
}

export function setLineageHidden(context: StoreContext, id: string, hidden: boolean): number {
  return context
    .statement(`UPDATE sessions SET hidden = ? WHERE ${LINEAGE_WHERE}`)
    .run(hidden ? 1 : 0, id).changes;
}

/** Pinning also unhides the lineage — except a hidden canonical Bot Chat, whose hiding is its identity. */
export function setLineagePinned(context: StoreContext, id: string, pinned: boolean): number {
  const canonicalHidden = context
    .statement(`SELECT 1 FROM sessions WHERE ${LINEAGE_WHERE} AND hidden = 1 AND title = ? LIMIT 1`)
    .get(id, BOT_CHAT_TITLE);
  const sql =
    pinned && !canonicalHidden
      ? `UPDATE sessions SET pinned = 1, hidden = 0 WHERE ${LINEAGE_WHERE}`
      : `UPDATE sessions SET pinned = ${pinned ? 1 : 0} WHERE ${LINEAGE_WHERE}`;
  return context.statement(sql).run(id).changes;
}

export function setLineageRead(context: StoreContext, id: string, read: boolean): number {
  return context
    .statement(`UPDATE sessions SET last_read_at = ? WHERE ${LINEAGE_WHERE}`)
    .run(read ? context.clock.now() : null, id).changes;
}

export interface PublishCompressionInput {
  readonly parentId: string;
  /** The handoff summary carried by the child's first message. */
  readonly summary: string;
  readonly childId?: string;
  /** Recent messages kept verbatim after the summary. */
  readonly retainedMessages?: readonly MessageInput[];
  /** The compression lease holder (from `acquireCompressionLease`); verified before anything is written. */
  readonly leaseHolder?: string;
  /**
   * The id of the newest parent message the summary (and retained tail) covers. Parent messages
   * written after it — while the summary was being made — are copied into the child after the
   * handoff, so nothing said during a compression is lost.
   */
  readonly watermark?: number;
}

/**
 * Compression never rewrites a session: in one transaction (the caller's) it creates the child
 * carrying the handoff summary and ends the parent with `compression`. A parent ended by machinery
 * (an automatic reason) is revived for the hand-off; any other end refuses.
 */
export function publishCompressionChild(
  context: StoreContext,
  input: PublishCompressionInput,
): string {
  if (
    input.leaseHolder !== undefined &&
    !holdsCompressionLease(context, input.parentId, input.leaseHolder)
  ) {
    throw new SessionStoreError({
      code: 'compression_lease_lost',
      message: ERROR_MESSAGES.compressionLeaseLost,
    });
  }
  const parent = getSession(context, input.parentId);
  if (!parent) {
    throw new SessionStoreError({
      code: 'compression_parent_missing',
      message: ERROR_MESSAGES.compressionParentMissing(input.parentId),
    });
  }
  if (parent.endedAt !== null) {
    const cleared = context
      .statement(
        `UPDATE sessions SET ended_at = NULL, end_reason = NULL
         WHERE id = ? AND end_reason IN (${AUTOMATIC_END_REASONS_SQL})`,
      )
      .run(parent.id).changes;
    if (cleared !== 1) {
      throw new SessionStoreError({
        code: 'compression_parent_ended',
        message: ERROR_MESSAGES.compressionParentEnded,
      });
    }
  }
  const watermark = optionalInteger('watermark', input.watermark, { min: 0 });
  if (typeof input.summary !== 'string' || input.summary.trim().length === 0) {
    throw new SessionStoreError({
      code: 'compression_handoff_missing',
      message: ERROR_MESSAGES.compressionHandoffMissing,
    });
  }
  const childId = insertSession(context, {
    ...(input.childId === undefined ? {} : { id: input.childId }),
    source: parent.source,
    profileName: parent.profileName,
    userId: parent.userId,
    sessionKey: parent.sessionKey,
    chatId: parent.chatId,
    chatType: parent.chatType,
    threadId: parent.threadId,
    model: parent.model,
    cwd: parent.cwd,
    parentSessionId: parent.id,
    parentEdge: 'compression',
    pinned: parent.pinned === 1,
    archived: parent.archived === 1 && parent.autoArchived === 0,
    hidden: parent.hidden === 1,
  });
  // The child continues the same conversation: same system prompt, same tools so far.
  context
    .statement(
      'UPDATE sessions SET system_prompt_hash = ?, tool_names = ?, billing_provider = ?, billing_base_url = ? WHERE id = ?',
    )
    .run(
      parent.systemPromptHash,
      parent.toolNames,
      parent.billingProvider,
      parent.billingBaseUrl,
      childId,
    );
  insertMessages(context, childId, [
    { role: 'user', content: input.summary, compressedSummary: true },
    ...(input.retainedMessages ?? []),
  ]);
  if (watermark !== undefined)
    cloneMessagesAfter(context, { from: parent.id, to: childId, watermark });
  const ended = context
    .statement(
      `UPDATE sessions SET ended_at = ?, end_reason = '${END_REASON.compression}' WHERE id = ? AND ended_at IS NULL`,
    )
    .run(context.clock.now(), parent.id).changes;
  if (ended !== 1) {
    throw new SessionStoreError({
      code: 'compression_parent_ended',
      message: ERROR_MESSAGES.compressionParentEnded,
    });
  }
  if (parent.autoArchived === 1) setLineageArchived(context, parent.id, false);
  return childId;
}

/**
 * Copies the parent's active messages newer than the watermark into the child (same content,
 * roles, tool plumbing and times) and counts them on the child. Call inside the publication's
 * transaction: every row present now is at or below the ceiling, and no later one can slip in.
 */
function cloneMessagesAfter(
  context: StoreContext,
  options: { from: string; to: string; watermark: number },
): void {
  const copied = context
    .statement(
      `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,
         token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
         codex_message_items, platform_message_id, _compressed_summary, display_kind, api_content)
       SELECT @to, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason,
         reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items,
         platform_message_id, _compressed_summary, display_kind, api_content
       FROM messages WHERE session_id = @from AND id > @watermark AND active = 1 ORDER BY id`,
    )
    .run(options).changes;
  if (copied === 0) return;
  context
    .statement(
      `UPDATE sessions SET
         message_count = (SELECT count(*) FROM messages WHERE session_id = @to),
         tool_call_count = (SELECT coalesce(sum(CASE
             WHEN tool_calls IS NULL THEN 0
             WHEN json_valid(tool_calls) AND json_type(tool_calls) = 'array' THEN json_array_length(tool_calls)
             ELSE 1 END), 0) FROM messages WHERE session_id = @to),
         last_activity_at = max(coalesce(last_activity_at, 0),
           (SELECT max(timestamp) FROM messages WHERE session_id = @to))
       WHERE id = @to`,
    )
    .run({ to: options.to });
}

/** The parent's one live compression child; undefined when there is none or more than one. */
export function findLiveCompressionChild(context: StoreContext, id: string): string | undefined {
  const live = context
    .statement(
      `SELECT id FROM sessions WHERE parent_session_id = ? AND parent_edge = 'compression' AND ended_at IS NULL
       LIMIT 2`,
    )
    .pluck()
    .all(id) as string[];
  return live.length === 1 ? live[0] : undefined;
}

const NO_COMPRESSION_CHILD = `NOT EXISTS (SELECT 1 FROM sessions c
  WHERE c.parent_session_id = sessions.id AND c.parent_edge = 'compression')`;

/**
 * Reopens a session ended by a compression whose child never materialised (or was deleted), so
 * the conversation continues where it was. False when it has a compression child or was not
 * ended by compression.
 */
export function reopenOrphanedCompressionSession(context: StoreContext, id: string): boolean {
  return (
    context
      .statement(
        `UPDATE sessions SET ended_at = NULL, end_reason = NULL
         WHERE id = ? AND end_reason = '${END_REASON.compression}' AND ${NO_COMPRESSION_CHILD}`,
      )
      .run(id).changes === 1
  );
}

/** Compression-ended sessions with no child for this long are given up (`orphaned_compression`). */
export const ORPHANED_COMPRESSION_FINALIZE_SECONDS = 7 * 24 * 3600;

export function finalizeOrphanedCompressionSessions(
  context: StoreContext,
  options: { olderThanSeconds?: number } = {},
): number {
  const olderThan =
    optionalNumber('olderThanSeconds', options.olderThanSeconds, { min: 0 }) ??
    ORPHANED_COMPRESSION_FINALIZE_SECONDS;
  return context
    .statement(
      `UPDATE sessions SET end_reason = '${END_REASON.orphanedCompression}'
       WHERE end_reason = '${END_REASON.compression}' AND ended_at < ? AND ${NO_COMPRESSION_CHILD}`,
    )
    .run(context.clock.now() - olderThan).changes;
}
