import { appendToSession, insertMessages, type MessageInput } from './messages.js';
import { type CreateSessionInput, createSessionRow } from './sessions.js';
import type { StoreContext } from './store-context.js';
import {
  acquireConversationTurnLease,
  acquireTurnLease,
  releaseConversationTurnLease,
  releaseTurnLease,
  type TurnLeaseOptions,
} from './turn-lease.js';
import {
  recordUsage,
  setSessionSystemPrompt,
  storeSystemPromptText,
  systemPromptHash,
  type UsageInput,
} from './usage.js';

/**
 * Where a session's active transcript stood at a point in time, for a caller that keeps the
 * transcript in memory between turns. `foreignVersion` stays the same while every commit was this
 * store's own through its methods that only ever append messages to a session, and changes once
 * another connection or process commits, a caller's own SQL runs (`withWriteTransaction`,
 * `completeObligation`'s `alongside`) or a session is deleted (its id may be created again). So
 * with two marks of one session that carry the same `foreignVersion`, the later transcript is the
 * earlier one plus the rows with ids above the earlier `lastMessageId`; with different ones,
 * reload it.
 */
export interface TranscriptMark {
  /** The newest active message's id (0 when there is none). */
  readonly lastMessageId: number;
  readonly foreignVersion: string;
}

export interface BeginTurnInput {
  /**
   * Creates the session with the turn's id in the same transaction (one commit for a new
   * conversation's first turn). The id must be new: taken already → `session_exists`, with
   * nothing written, so a turn never continues a conversation it did not mean to.
   */
  readonly create?: Omit<CreateSessionInput, 'id' | 'newId'>;
  /** Stored as the session's system prompt (skipped when it is already the stored one). */
  readonly systemPrompt?: string;
  /** Appended after the lease is taken: the turn's user message (or an injected one). */
  readonly messages?: readonly MessageInput[];
  readonly lease?: TurnLeaseOptions;
}

export interface BeganTurn {
  /** The turn lease holder; release it with `endTurn({ releaseLease })` or `releaseTurnLease`. */
  readonly holder: string;
  readonly messageIds: number[];
  /** The session's transcript including `messages`, as committed. */
  readonly transcript: TranscriptMark;
  /**
   * The newest active message's id before `messages` were appended (0 when there was none),
   * under the same `transcript.foreignVersion`: a caller holding the transcript up to this id
   * under that version has it all once it adds `messages`, without reading them back.
   */
  readonly previousMessageId: number;
}

export interface EndTurnInput {
  /** Appended first (the turn's last reply). */
  readonly messages?: readonly MessageInput[];
  /** Added to the session's counters, as `recordUsage`. */
  readonly usage?: UsageInput;
  /** The turn lease holder to release (keyed by the session's lineage root, as `releaseTurnLease`). */
  readonly releaseLease?: string;
}

export interface EndedTurn {
  readonly messageIds: number[];
  /** False when the lease was no longer this holder's (expired and taken over) or not given. */
  readonly leaseReleased: boolean;
}

/**
 * `foreignVersion` is `PRAGMA data_version` (changed by other connections' commits only) and the
 * store's count of caller-SQL writes and session deletions (`resets`). Read inside the write transaction, it names exactly the
 * state the transaction saw. One index probe from the newest row.
 */
export function readTranscriptMark(
  context: StoreContext,
  sessionId: string,
  resets: number,
): TranscriptMark {
  return {
    lastMessageId: newestActiveMessageId(context, sessionId),
    foreignVersion: foreignVersion(context, resets),
  };
}

function foreignVersion(context: StoreContext, resets: number): string {
  const dataVersion = context.statement('PRAGMA data_version').pluck().get() as number;
  return `${dataVersion}.${resets}`;
}

function newestActiveMessageId(context: StoreContext, sessionId: string): number {
  return (
    (context
      .statement(
        'SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id DESC LIMIT 1',
      )
      .pluck()
      .get(sessionId) as number | undefined) ?? 0
  );
}

/** The last prompt hashed: a turn after turn passes the same text (often the same string). */
let lastHashed: { prompt: string; hash: string } | undefined;

function hashOf(prompt: string): string {
  if (lastHashed?.prompt !== prompt) lastHashed = { prompt, hash: systemPromptHash(prompt) };
  return lastHashed.hash;
}

/** The stored prompt, written only when it changed (the hash is compared first). */
function storeSystemPrompt(context: StoreContext, sessionId: string, prompt: string): void {
  if (typeof prompt === 'string') {
    const stored = context
      .statement('SELECT system_prompt_hash FROM sessions WHERE id = ?')
      .pluck()
      .get(sessionId) as string | null | undefined;
    if (stored !== undefined && stored !== null && stored === hashOf(prompt)) return;
  }
  setSessionSystemPrompt(context, sessionId, prompt);
}

/**
 * Creates the session when asked, takes the turn lease, stores the system prompt and appends the
 * turn's first messages — call inside one write transaction. Returns null while another live
 * holder has the lease, having written nothing (but a session `create` made — a compression
 * child of a busy conversation — which stays, with its prompt); any failure after the lease was
 * taken rolls the lease back with the rest.
 */
export function beginTurn(
  context: StoreContext,
  sessionId: string,
  input: BeginTurnInput,
  resets: number,
): BeganTurn | null {
  let holder: string | null;
  let promptStored = false;
  if (input.create) {
    // A new row is inserted with its prompt's hash and lineage root known: no NULL hash that an
    // UPDATE then moves in the hash's index (a second index page), and nothing read back.
    const prompt =
      typeof input.systemPrompt === 'string'
        ? { text: input.systemPrompt, hash: hashOf(input.systemPrompt) }
        : undefined;
    const created = createSessionRow(
      context,
      { ...input.create, id: sessionId },
      prompt ? { systemPromptHash: prompt.hash } : {},
    );
    if (prompt) {
      storeSystemPromptText(context, prompt.hash, prompt.text);
      promptStored = true;
    }
    holder = acquireConversationTurnLease(context, created.lineageRootId, input.lease ?? {});
  } else {
    holder = acquireTurnLease(context, sessionId, input.lease ?? {});
  }
  if (holder === null) return null;
  if (input.systemPrompt !== undefined && !promptStored)
    storeSystemPrompt(context, sessionId, input.systemPrompt);
  // A session this transaction created has no messages yet.
  const previousMessageId = input.create ? 0 : newestActiveMessageId(context, sessionId);
  const messageIds =
    input.messages && input.messages.length > 0
      ? insertMessages(context, sessionId, input.messages)
      : [];
  return {
    holder,
    messageIds,
    previousMessageId,
    transcript: {
      lastMessageId: messageIds.at(-1) ?? previousMessageId,
      foreignVersion: foreignVersion(context, resets),
    },
  };
}

/**
 * Appends the turn's last messages, records its usage and releases its lease — call inside one
 * write transaction: all of it commits, or none.
 */
export function endTurn(context: StoreContext, sessionId: string, input: EndTurnInput): EndedTurn {
  let messageIds: number[] = [];
  // The session's lineage root, as the UPDATE of its counters returns it: the lease's key.
  let conversationId: string | undefined;
  if (input.messages && input.messages.length > 0) {
    // The messages' counts and the usage in one UPDATE of the session row.
    const appended = appendToSession(context, sessionId, input.messages, input.usage);
    messageIds = appended.ids;
    conversationId = appended.lineageRootId;
  } else if (input.usage !== undefined) {
    conversationId = recordUsage(context, sessionId, input.usage);
  }
  let leaseReleased = false;
  if (input.releaseLease !== undefined)
    leaseReleased =
      conversationId === undefined
        ? releaseTurnLease(context, sessionId, input.releaseLease)
        : releaseConversationTurnLease(context, conversationId, input.releaseLease);
  return { messageIds, leaseReleased };
}
