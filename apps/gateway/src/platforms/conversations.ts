import type { ProfileRuntime } from '@hermes/agent';
import type { MessageRecord, SessionStore } from '@hermes/session-store';
import type { Logger } from 'pino';
import type { RestoreGate } from '../restart/restore-gate.js';
import type { ActiveTurns } from '../runtime/active-turns.js';
import type { SlashCommands } from '../runtime/slash-commands.js';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';
import { chatSessionKey, type InboundMessage, type InboundSink, inboundRef } from './inbound.js';
import type { InboundJournal, JournalEntry } from './inbound-journal.js';
import type { OwedReplies, ReplySender } from './owed-replies.js';

/** Sent with a turn resumed after a restart (never stored). */
export const RESUME_NOTE =
  'The gateway restarted while you were answering the last user message. Continue from where the conversation stands and give your final answer.';
/** `resume_reason` of a session whose turn a restart may interrupt (pre-marked before the turn). */
export const RESUME_REASON = 'restart_interrupted';

export interface ConversationsOptions {
  readonly runtime: ProfileRuntime;
  readonly turns: ActiveTurns;
  readonly journal: InboundJournal;
  readonly owed: OwedReplies;
  readonly gate: RestoreGate;
  readonly slash: SlashCommands;
  readonly logger: Logger;
  readonly adapter: (platform: string) => ReplySender | undefined;
  readonly runTurn: (request: TurnRequest) => Promise<TurnOutcome>;
  readonly onTurn?: (platform: string, status: string) => void;
}

type Verdict = { kind: 'fresh' } | { kind: 'stored' } | { kind: 'answered'; content: string };

function rowsAfter(store: SessionStore, sessionId: string, afterId: number): MessageRecord[] {
  const rows: MessageRecord[] = [];
  let cursor = afterId;
  for (;;) {
    const page = store.getMessages(sessionId, { afterId: cursor, limit: 500 });
    rows.push(...page);
    if (page.length < 500) return rows;
    cursor = page[page.length - 1]?.id ?? cursor;
  }
}

function isFinalAnswer(row: MessageRecord | undefined): row is MessageRecord {
  return (
    row !== undefined &&
    row.role === 'assistant' &&
    (row.toolCalls === null || row.toolCalls === '' || row.toolCalls === '[]') &&
    row.finishReason !== 'interrupted'
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Chat conversations on messaging platforms: one session per (platform, chat, thread), one turn at
 * a time per session (later messages wait their turn, in order), and every reply recorded as a
 * delivery obligation before it is sent. With the inbound journal this makes a restart — even a
 * SIGKILL — safe: a message taken but not started runs; a turn whose user message was stored is
 * resumed without storing it again; a turn whose answer was stored is not run again, its reply is
 * (re)recorded — idempotently — and delivered.
 */
export class PlatformConversations implements InboundSink {
  readonly #options: ConversationsOptions;
  readonly #chains = new Map<string, Promise<void>>();
  /** Refs journaled by `accept` and not yet dispatched (a repeat of a journaled message is not). */
  readonly #accepted = new Set<string>();
  #inFlight = 0;

  constructor(options: ConversationsOptions) {
    this.#options = options;
  }

  /** Messages queued or running. */
  get inFlight(): number {
    return this.#inFlight;
  }

  async accept(messages: readonly InboundMessage[]): Promise<void> {
    for (const entry of await this.#options.journal.record(messages)) this.#accepted.add(entry.ref);
  }

  dispatch(messages: readonly InboundMessage[]): void {
    for (const message of messages) {
      const ref = inboundRef(message);
      const entry = this.#options.journal.get(ref);
      if (!this.#accepted.delete(ref) || !entry) continue;
      this.#options.gate.submit(`platform=${message.platform} chat=${message.chatId}`, () => {
        void this.#enqueue(entry);
      });
    }
  }

  /** Boot: the journal's entries from the previous run, handled before anything new. */
  recover(entries: readonly JournalEntry[]): Promise<void>[] {
    return entries.map((entry) => this.#enqueue(entry));
  }

  /** Resolves when every queued message has been handled. */
  async idle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.allSettled([...this.#chains.values()]);
  }

  #enqueue(entry: JournalEntry): Promise<void> {
    const key = chatSessionKey(entry);
    this.#inFlight += 1;
    const previous = this.#chains.get(key) ?? Promise.resolve();
    // The profile's scope (home and secrets) for everything the message does, not only its turn.
    const next = previous
      .then(() => this.#options.runtime.run(() => this.#handle(entry)))
      .catch((error: unknown) =>
        this.#options.logger.error(
          { err: error, platform: entry.platform, chatId: entry.chatId, ref: entry.ref },
          'platform message failed; it stays in the inbound journal for the next start',
        ),
      )
      .finally(() => {
        this.#inFlight -= 1;
        if (this.#chains.get(key) === next) this.#chains.delete(key);
      });
    this.#chains.set(key, next);
    return next;
  }

  async #session(store: SessionStore, entry: JournalEntry): Promise<string> {
    const sessionKey = chatSessionKey(entry);
    const existing = store.findLatestGatewaySessionForPeer({
      sessionKey,
      source: entry.platform,
      chatId: entry.chatId,
      threadId: entry.threadId,
      userId: entry.userId,
    });
    if (existing) return store.getCompressionTip(existing.id);
    const agent = await this.#options.runtime.agent({ platform: entry.platform });
    const created = await agent.createSession({
      source: entry.platform,
      sessionKey,
      chatId: entry.chatId,
      threadId: entry.threadId,
      userId: entry.userId,
    });
    return created.id;
  }

  /** What the previous run got done for a journal entry whose turn had started. */
  #inspect(store: SessionStore, entry: JournalEntry): Verdict {
    if (!entry.sessionId || !store.getSession(entry.sessionId)) return { kind: 'fresh' };
    const rows = rowsAfter(store, entry.sessionId, entry.baselineMessageId ?? 0);
    const userIndex = rows.findIndex((row) =>
      entry.userMessageId !== undefined
        ? row.id === entry.userMessageId
        : row.role === 'user' && row.content === entry.text,
    );
    if (userIndex < 0) return { kind: 'fresh' };
    const tip = store.getCompressionTip(entry.sessionId);
    const last = tip === entry.sessionId ? rows.at(-1) : rowsAfter(store, tip, 0).at(-1);
    if (tip === entry.sessionId && (last === undefined || last.id <= (rows[userIndex]?.id ?? 0)))
      return { kind: 'stored' };
    if (isFinalAnswer(last)) return { kind: 'answered', content: last.content || '(empty)' };
    return { kind: 'stored' };
  }

  async #handle(entry: JournalEntry): Promise<void> {
    const { runtime, turns, journal, logger } = this.#options;
    if (turns.draining) return; // stays journaled: the next start runs it
    const store = await runtime.store();
    const verdict: Verdict =
      entry.state === 'received' ? { kind: 'fresh' } : this.#inspect(store, entry);
    if (verdict.kind === 'answered') {
      logger.info({ ref: entry.ref }, 'reply found stored by the previous run; delivering it');
      await this.#owe(store, entry, verdict.content, entry.sessionId ?? '');
      return;
    }
    const resume = verdict.kind === 'stored';
    let sessionId =
      resume && entry.sessionId ? store.getCompressionTip(entry.sessionId) : undefined;

    if (!resume) {
      sessionId = await this.#session(store, entry);
      const slash = await this.#options.slash
        .handle({ runtime, sessionId, message: entry.text })
        .catch((error: unknown) => ({ command: 'error', text: describe(error) }));
      if (slash) {
        await this.#owe(store, entry, slash.text, sessionId);
        return;
      }
      const rows = rowsAfter(store, sessionId, 0);
      // Pre-mark first: a SIGKILL from here on leaves a session the next start knows to look at.
      await store.setResumePending(sessionId, RESUME_REASON);
      await journal.update(entry.ref, {
        state: 'started',
        sessionId,
        baselineMessageId: rows.at(-1)?.id ?? 0,
      });
    } else {
      logger.info({ ref: entry.ref, sessionId }, 'resuming a turn a restart interrupted');
      await store.setResumePending(sessionId as string, RESUME_REASON);
    }
    const target = sessionId as string;
    void this.#options.adapter(entry.platform)?.sendTyping?.(entry.chatId, {
      threadId: entry.threadId ?? undefined,
    });
    let content: string;
    let endedIn = target;
    try {
      const outcome = await this.#options.runTurn({
        runtime,
        sessionId: target,
        message: resume ? undefined : entry.text,
        kind: 'platform',
        platform: entry.platform,
        ...(resume ? { ephemeralSystemNote: RESUME_NOTE } : {}),
        onMessageStored: (messageId) =>
          journal.update(entry.ref, { state: 'stored', userMessageId: messageId }),
        origin: { sessionKey: chatSessionKey(entry) },
      });
      this.#options.onTurn?.(entry.platform, outcome.result.status);
      endedIn = outcome.result.sessionId;
      if (outcome.result.status === 'interrupted') return; // resumed by the next start
      content =
        outcome.result.status === 'completed'
          ? outcome.result.finalResponse
          : `⚠️ ${outcome.result.error?.message ?? 'The turn failed.'}`;
    } catch (error) {
      if (turns.draining) return;
      this.#options.onTurn?.(entry.platform, 'refused');
      content = `⚠️ ${describe(error)}`;
    }
    await this.#owe(store, entry, content, endedIn);
  }

  /** Records the reply (idempotent per message and content), then sends it. */
  async #owe(store: SessionStore, entry: JournalEntry, content: string, sessionId: string) {
    const { obligationId, created } = await store.recordObligation({
      sessionKey: chatSessionKey(entry),
      messageRef: entry.ref,
      platform: entry.platform,
      chatId: entry.chatId,
      threadId: entry.threadId,
      content,
    });
    if (sessionId) await store.setResumePending(sessionId, null).catch(() => false);
    await this.#options.journal.remove(entry.ref);
    if (!created) return; // already owed (claimed at boot) or delivered
    this.#options.owed.add({
      obligationId,
      platform: entry.platform,
      chatId: entry.chatId,
      threadId: entry.threadId,
      content,
      needsMarker: false,
      replyTo: entry.messageId,
      notBefore: null,
    });
    await this.#options.owed.deliverOne(obligationId);
  }
}
