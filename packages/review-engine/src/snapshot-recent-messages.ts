import { DEFAULT_CONTEXT_MESSAGES, MESSAGE_CHAR_CAP, TRUNCATION_SUFFIX } from './constants.js';
import { extractMessageText, isRecord } from './message-text.js';

/** One message of the reviewer's excerpt. */
export interface SnapshotEntry {
  readonly role: 'user' | 'assistant';
  readonly text: string;
}

/**
 * The last `limit` user and assistant messages that carry text, oldest first. Other roles (system,
 * tool, developer) and non-objects are skipped, and so are assistant messages that are only tool
 * calls; each text is trimmed and cut at 12,000 characters with `\n[... truncated ...]`.
 */
export function snapshotRecentMessages(
  messages: readonly unknown[],
  limit: number = DEFAULT_CONTEXT_MESSAGES,
): SnapshotEntry[] {
  const entries: SnapshotEntry[] = [];
  if (limit <= 0) return entries;
  for (let index = messages.length - 1; index >= 0 && entries.length < limit; index -= 1) {
    const message = messages[index];
    if (!isRecord(message)) continue;
    const role = message.role;
    if (role !== 'user' && role !== 'assistant') continue;
    let text = extractMessageText(message.content).trim();
    if (text.length === 0) continue;
    if (text.length > MESSAGE_CHAR_CAP)
      text = `${text.slice(0, MESSAGE_CHAR_CAP)}${TRUNCATION_SUFFIX}`;
    entries.push({ role, text });
  }
  return entries.reverse();
}
