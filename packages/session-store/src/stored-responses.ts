import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import { MAX_STORED_RESPONSES } from './limits.js';
import type { StoreContext } from './store-context.js';

/** A stored `/v1/responses` object and where its turn ended. */
export interface StoredResponse {
  readonly responseId: string;
  /** The session the response's turn ended in (its compression tip then). */
  readonly sessionId: string;
  /** The last message that turn stored: a chained request continues from here. */
  readonly lastMessageId: number | null;
  readonly previousResponseId: string | null;
  /** The response object, parsed from its stored JSON. */
  readonly body: Record<string, unknown>;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds: stored, or last marked used (`touchStoredResponse`). */
  readonly usedAt: number;
}

export interface StoreResponseInput {
  readonly responseId: string;
  readonly sessionId: string;
  readonly lastMessageId?: number | null;
  readonly previousResponseId?: string | null;
  /** A JSON-serialisable object (the response as the API returned it). */
  readonly body: Record<string, unknown>;
}

/**
 * Recency is a sequence, not a time: two responses stored in the same millisecond (or by
 * processes whose clocks differ) still prune in the order they were stored. One index probe.
 */
const NEXT_SEQ = '(SELECT coalesce(max(used_seq), 0) + 1 FROM stored_responses)';

/** Response ids travel through URLs and request bodies; anything longer is not one of ours. */
const RESPONSE_ID_MAX_LENGTH = 256;

function invalid(name: string, expected: string): SessionStoreError {
  return new SessionStoreError({
    code: 'invalid_argument',
    message: ERROR_MESSAGES.invalidArgument(name, expected),
  });
}

function responseIdOf(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > RESPONSE_ID_MAX_LENGTH) {
    throw invalid(name, `a non-empty string of at most ${RESPONSE_ID_MAX_LENGTH} characters`);
  }
  return value;
}

function bodyJson(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('body', 'a JSON object');
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    throw invalid('body', `a JSON-serialisable object (${(error as Error).message})`);
  }
  if (text === undefined) throw invalid('body', 'a JSON object');
  return text;
}

/**
 * Stores (or replaces) a response and prunes the table to the `MAX_STORED_RESPONSES` most
 * recently used — in the caller's write transaction, so the cap holds across processes.
 */
export function storeResponse(context: StoreContext, input: StoreResponseInput): void {
  if (typeof input !== 'object' || input === null) throw invalid('response', 'an object');
  const responseId = responseIdOf('responseId', input.responseId);
  if (typeof input.sessionId !== 'string' || input.sessionId.length === 0) {
    throw invalid('sessionId', 'a non-empty string');
  }
  const lastMessageId = input.lastMessageId ?? null;
  if (lastMessageId !== null && !(Number.isSafeInteger(lastMessageId) && lastMessageId > 0)) {
    throw invalid('lastMessageId', 'a message id (a whole number above 0) or null');
  }
  const previous = input.previousResponseId ?? null;
  if (previous !== null) responseIdOf('previousResponseId', previous);
  const body = bodyJson(input.body);
  const now = context.clock.now();
  context
    .statement(
      `INSERT INTO stored_responses
         (response_id, session_id, last_message_id, previous_response_id, body, created_at, used_at, used_seq)
       VALUES (@responseId, @sessionId, @lastMessageId, @previous, @body, @now, @now, ${NEXT_SEQ})
       ON CONFLICT(response_id) DO UPDATE SET session_id = excluded.session_id,
         last_message_id = excluded.last_message_id,
         previous_response_id = excluded.previous_response_id, body = excluded.body,
         used_at = excluded.used_at, used_seq = excluded.used_seq`,
    )
    .run({ responseId, sessionId: input.sessionId, lastMessageId, previous, body, now });
  context
    .statement(
      `DELETE FROM stored_responses WHERE rowid IN (
         SELECT rowid FROM stored_responses ORDER BY used_seq DESC LIMIT -1 OFFSET ?)`,
    )
    .run(MAX_STORED_RESPONSES);
}

interface StoredResponseRow {
  responseId: string;
  sessionId: string;
  lastMessageId: number | null;
  previousResponseId: string | null;
  body: string;
  createdAt: number;
  usedAt: number;
}

export function getStoredResponse(
  context: StoreContext,
  responseId: string,
): StoredResponse | undefined {
  if (typeof responseId !== 'string' || responseId.length > RESPONSE_ID_MAX_LENGTH) {
    return undefined;
  }
  const row = context
    .statement(
      `SELECT response_id AS responseId, session_id AS sessionId, last_message_id AS lastMessageId,
         previous_response_id AS previousResponseId, body, created_at AS createdAt, used_at AS usedAt
       FROM stored_responses WHERE response_id = ?`,
    )
    .get(responseId) as StoredResponseRow | undefined;
  if (!row) return undefined;
  return { ...row, body: JSON.parse(row.body) as Record<string, unknown> };
}

/** Marks a response used now (a request chained from it), so pruning keeps it longest. */
export function touchStoredResponse(context: StoreContext, responseId: string): boolean {
  return (
    context
      .statement(
        `UPDATE stored_responses SET used_at = ?, used_seq = ${NEXT_SEQ} WHERE response_id = ?`,
      )
      .run(context.clock.now(), responseId).changes === 1
  );
}

export function deleteStoredResponse(context: StoreContext, responseId: string): boolean {
  return (
    context.statement('DELETE FROM stored_responses WHERE response_id = ?').run(responseId)
      .changes === 1
  );
}
