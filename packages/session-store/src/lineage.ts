import { holdsCompressionLease } from './compression-lease.js';
import { AUTOMATIC_END_REASONS_SQL, END_REASON } from './end-reasons.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { BOT_CHAT_TITLE } from './limits.js';
import { insertMessages, type MessageInput } from './messages.js';
import { getSession, insertSession } from './sessions.js';
import type { StoreContext } from './store-context.js';

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
  if (input.summary.trim().length === 0) {
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
