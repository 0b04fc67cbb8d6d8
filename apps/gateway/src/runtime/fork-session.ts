import {
  END_REASON,
  MESSAGES_MAX_LIMIT,
  type MessageRecord,
  type SessionRecord,
  type SessionStore,
} from '@hermes/session-store';
import { messageInputFromRecord } from '../http/session-response.js';

/** Every active row of a session, oldest first (paged through the store's 500-row pages). */
export function allMessages(store: SessionStore, sessionId: string): MessageRecord[] {
  const rows: MessageRecord[] = [];
  let cursor = 0;
  for (;;) {
    const page = store.getMessages(sessionId, { afterId: cursor, limit: MESSAGES_MAX_LIMIT });
    rows.push(...page);
    if (page.length < MESSAGES_MAX_LIMIT) return rows;
    cursor = page[page.length - 1]?.id ?? cursor;
  }
}

/**
 * Branches a conversation: a child row first (edge `branch`, `_branched_from` in its model
 * config), the transcript copied into it (optionally only up to one message), then the parent
 * ended `branched`. A failure while copying removes the half-made child.
 */
export async function forkSession(
  store: SessionStore,
  input: {
    sessionId: string;
    childId: string;
    title?: string | null;
    rows?: readonly MessageRecord[];
    endParent?: boolean;
  },
): Promise<{ child: SessionRecord; copied: number }> {
  const parent = store.getSession(input.sessionId);
  if (!parent) throw new Error(`Session not found: ${input.sessionId}`);
  const rows = input.rows ?? allMessages(store, parent.id);
  const child = await store.createSession({
    id: input.childId,
    source: parent.source,
    title: input.title ?? null,
    profileName: parent.profileName,
    userId: parent.userId,
    parentSessionId: parent.id,
    parentEdge: 'branch',
    model: parent.model,
    cwd: parent.cwd,
    modelConfig: { _branched_from: parent.id },
  });
  try {
    const prompt = store.getSessionSystemPrompt(parent.id);
    if (prompt !== null) await store.setSessionSystemPrompt(child.id, prompt);
    for (let start = 0; start < rows.length; start += MESSAGES_MAX_LIMIT) {
      await store.appendMessages(
        child.id,
        rows.slice(start, start + MESSAGES_MAX_LIMIT).map(messageInputFromRecord),
      );
    }
  } catch (error) {
    await store.deleteSession(child.id).catch(() => {});
    throw error;
  }
  if (input.endParent !== false) await store.endSession(parent.id, END_REASON.branched);
  return { child: store.getSession(child.id) ?? child, copied: rows.length };
}
