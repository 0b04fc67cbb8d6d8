import {
  MESSAGES_MAX_LIMIT,
  type MessageInput,
  type MessageRecord,
  type SessionStore,
  type TranscriptMark,
} from '@hermes/session-store';
import { messageChars } from '../compression/estimate-tokens.js';
import { TOOL_ERROR_MESSAGES } from '../errors.js';
import type { ChatMessage, ToolCall } from '../model/chat-message.js';

function parseJson<T>(text: string | null): T | undefined {
  if (text === null || text === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/**
 * Every active message of a session, oldest first (paged through the store's limit); with
 * `afterId`, only those with a greater id.
 */
export function loadMessages(store: SessionStore, sessionId: string, afterId = 0): MessageRecord[] {
  const rows: MessageRecord[] = [];
  let after = afterId;
  for (;;) {
    const page = store.getMessages(sessionId, {
      limit: MESSAGES_MAX_LIMIT,
      ...(after > 0 ? { afterId: after } : {}),
    });
    for (const row of page) rows.push(row);
    if (page.length < MESSAGES_MAX_LIMIT) return rows;
    after = (page[page.length - 1] as MessageRecord).id;
  }
}

/** What the transcript reads of a stored row. */
export type TranscriptRow = Pick<
  MessageRecord,
  | 'id'
  | 'role'
  | 'content'
  | 'apiContent'
  | 'toolCallId'
  | 'toolName'
  | 'toolCalls'
  | 'reasoning'
  | 'codexReasoningItems'
>;

/** A message just stored under `id`, as the row the store now holds reads. */
export function storedRow(id: number, input: MessageInput): TranscriptRow {
  const json = (value: unknown) =>
    value === undefined || value === null ? null : JSON.stringify(value);
  return {
    id,
    role: input.role,
    content: input.content ?? null,
    apiContent: input.apiContent ?? null,
    toolCallId: input.toolCallId ?? null,
    toolName: input.toolName ?? null,
    toolCalls: json(input.toolCalls),
    reasoning: input.reasoning ?? null,
    codexReasoningItems: json(input.codexReasoningItems),
  };
}

/** Rows a turn just appended, and the newest active row before them (see `BeganTurn`). */
export interface AppendedRows {
  readonly previousMessageId: number;
  readonly rows: readonly TranscriptRow[];
}

/**
 * Stored rows → the conversation the model sees, fed in id order and extendable: a turn's
 * history is the rows already converted plus the ones stored since (see `TranscriptCache`).
 * The transcript is repaired on the way: an assistant tool call without a stored result (the
 * process died, or the turn was stopped, mid-call) gets a synthetic error result, and a tool
 * result without its call is dropped, so a transcript cut at any point is still a valid request.
 */
export class TranscriptBuilder {
  readonly #messages: ChatMessage[] = [];
  /** Calls of the latest assistant message that have no result yet, in call order. */
  #open: string[] = [];
  /** Serialised characters of the converted messages (the prompt-size estimate's unit). */
  #chars = 0;
  /** The id of the last row fed (0 before any). */
  lastRowId = 0;

  /** Serialised characters of the messages converted so far. */
  get chars(): number {
    return this.#chars;
  }

  #push(message: ChatMessage): void {
    this.#messages.push(message);
    this.#chars += messageChars(message);
  }

  #closeOpenCalls(): void {
    for (const id of this.#open) this.#push(missingResult(id));
    this.#open = [];
  }

  /** Feeds rows newer than every row fed so far, oldest first. */
  add(rows: readonly TranscriptRow[]): void {
    for (const row of rows) {
      this.lastRowId = row.id;
      const content = row.apiContent ?? row.content ?? '';
      if (row.role === 'tool') {
        if (!row.toolCallId || !this.#open.includes(row.toolCallId)) continue;
        this.#open = this.#open.filter((id) => id !== row.toolCallId);
        this.#push({
          role: 'tool',
          tool_call_id: row.toolCallId,
          content,
          ...(row.toolName ? { tool_name: row.toolName } : {}),
        });
        continue;
      }
      this.#closeOpenCalls();
      if (row.role === 'assistant') {
        const toolCalls = parseJson<ToolCall[]>(row.toolCalls) ?? [];
        const reasoningItems = parseJson<unknown[]>(row.codexReasoningItems);
        this.#push({
          role: 'assistant',
          content: content === '' && toolCalls.length > 0 ? null : content,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(row.reasoning ? { reasoning: row.reasoning } : {}),
          ...(reasoningItems && reasoningItems.length > 0
            ? { codex_reasoning_items: reasoningItems }
            : {}),
        });
        this.#open = toolCalls.map((call) => call.id);
      } else if (row.role === 'user' || row.role === 'system') {
        this.#push({ role: row.role, content });
      }
    }
  }

  /**
   * The conversation so far (a new array; the messages are shared and never changed), the
   * trailing calls without a result answered, and its size in serialised characters.
   */
  snapshot(): { messages: ChatMessage[]; chars: number } {
    const messages = this.#messages.slice();
    let chars = this.#chars;
    for (const id of this.#open) {
      const message = missingResult(id);
      messages.push(message);
      chars += messageChars(message);
    }
    return { messages, chars };
  }
}

function missingResult(toolCallId: string): ChatMessage {
  return {
    role: 'tool',
    tool_call_id: toolCallId,
    content: JSON.stringify({ error: TOOL_ERROR_MESSAGES.noResultRecorded }),
  };
}

/** Stored rows → the conversation the model sees (see `TranscriptBuilder`). */
export function rowsToMessages(rows: readonly MessageRecord[]): ChatMessage[] {
  const builder = new TranscriptBuilder();
  builder.add(rows);
  return builder.snapshot().messages;
}

const MAX_CACHED_TRANSCRIPTS = 16;
/** Kept conversations together stay under this many serialised characters (the oldest go first). */
const MAX_CACHED_TRANSCRIPT_CHARS = 16_000_000;

/**
 * The conversations of the sessions an agent served last, kept converted between turns, so a
 * turn reads only the rows stored since the previous one instead of the whole transcript. The
 * store stays the truth: each load compares the store's `TranscriptMark` with the one the cached
 * rows were read under, reads the rows after the last one seen when only this store's own
 * methods wrote since (they only ever append), and reads everything again when another
 * connection or process committed, or a caller's own SQL ran, in between.
 */
export class TranscriptCache {
  readonly #store: SessionStore;
  readonly #entries = new Map<string, { builder: TranscriptBuilder; foreignVersion: string }>();

  constructor(store: SessionStore) {
    this.#store = store;
  }

  /**
   * The session's conversation and its size in serialised characters. `mark` is one taken
   * inside the write that just committed (`beginTurn`); without it the mark is read now. With
   * `appended` (the rows that write appended, and the newest row before them), rows the cache
   * already holds up to `previousMessageId` under the same version are extended with them
   * without reading anything back — as is a session that had no rows before them.
   */
  load(
    sessionId: string,
    mark?: TranscriptMark,
    appended?: AppendedRows,
  ): { messages: ChatMessage[]; chars: number } {
    // Read before the rows: a commit after it changes the version the next load compares.
    const current = mark ?? this.#store.getTranscriptMark(sessionId);
    let entry = this.#entries.get(sessionId);
    const known =
      appended !== undefined &&
      mark !== undefined &&
      (appended.rows.at(-1)?.id ?? appended.previousMessageId) === mark.lastMessageId;
    if (
      known &&
      entry &&
      entry.foreignVersion === current.foreignVersion &&
      entry.builder.lastRowId === appended.previousMessageId
    ) {
      entry.builder.add(appended.rows);
      this.#entries.delete(sessionId);
    } else if (
      entry &&
      entry.foreignVersion === current.foreignVersion &&
      entry.builder.lastRowId <= current.lastMessageId
    ) {
      entry.builder.add(loadMessages(this.#store, sessionId, entry.builder.lastRowId));
      this.#entries.delete(sessionId);
    } else if (known && appended.previousMessageId === 0) {
      if (entry) this.#entries.delete(sessionId);
      entry = { builder: new TranscriptBuilder(), foreignVersion: current.foreignVersion };
      entry.builder.add(appended.rows);
    } else {
      entry = { builder: new TranscriptBuilder(), foreignVersion: current.foreignVersion };
      entry.builder.add(loadMessages(this.#store, sessionId));
    }
    entry.foreignVersion = current.foreignVersion;
    this.#entries.set(sessionId, entry);
    let total = 0;
    for (const kept of this.#entries.values()) total += kept.builder.chars;
    // Oldest first; the one just loaded goes too when it alone is over the budget.
    for (const [id, kept] of this.#entries) {
      if (this.#entries.size <= MAX_CACHED_TRANSCRIPTS && total <= MAX_CACHED_TRANSCRIPT_CHARS)
        break;
      this.#entries.delete(id);
      total -= kept.builder.chars;
    }
    return entry.builder.snapshot();
  }
}

/** A stored row, ready to be copied into another session (a compression child's retained tail). */
export function rowToMessageInput(row: MessageRecord): MessageInput {
  return {
    role: row.role as MessageInput['role'],
    content: row.content,
    apiContent: row.apiContent,
    toolCalls: parseJson(row.toolCalls) ?? null,
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    reasoning: row.reasoning,
    finishReason: row.finishReason,
    codexReasoningItems: parseJson(row.codexReasoningItems) ?? null,
    displayKind: row.displayKind,
    timestamp: row.timestamp,
  };
}
