import type { MessageRecord } from '@hermes/session-store';
import { AgentError } from '../errors.js';
import type { RunTurnOptions, TurnResult } from '../loop/agent-types.js';
import type { AsyncDelegationRegistry } from './async-registry.js';
import type { AsyncDelegationEvent } from './completion-event.js';
import type { DelegationRecoveryReport } from './delegation-lifecycle.js';
import { COMPLETION_DISPLAY_KIND } from './delegation-limits.js';
import { completionHeader, formatAsyncDelegation } from './format-async-delegation.js';
import { removeClaimMarker, writeClaimMarker } from './ledger-files.js';

/** One completion that became a turn of its conversation. */
export interface DeliveredCompletion {
  readonly event: AsyncDelegationEvent;
  /** The session the turn was added to (as the owner named it). */
  readonly sessionId: string;
  /** The stored message, when this delivery stored it (not for a duplicate found after a crash). */
  readonly messageId: number | undefined;
  /** The turn's result (absent when no model turn ran). */
  readonly turn: TurnResult | undefined;
}

export interface CompletionDeliveryOptions {
  /** The process's registry: its store (ledger), queue and home. */
  readonly registry: AsyncDelegationRegistry;
  /**
   * The session of this surface that owns `event` — where its turn goes — or `undefined` when
   * the event is not this surface's (it then stays for another surface or process). Use
   * `ownsCompletion(event, { sessionId, sessionKey, uiSessionId }, store)` for the rule.
   */
  readonly owner: (event: AsyncDelegationEvent) => string | undefined;
  /**
   * Runs the injected turn on the owning session's agent, e.g.
   * `(options) => agentFor(options.sessionId).runTurn({ ...options, onEvent: render })`.
   * Pass the options through unchanged: `onMessageStored` acknowledges the ledger.
   */
  readonly runTurn: (options: RunTurnOptions) => Promise<TurnResult>;
  /**
   * `false` while this surface is running a turn on the session (or the session is gone for now).
   * Deliveries only happen between turns; the store's turn lease guards other processes.
   */
  readonly isIdle?: (sessionId: string) => boolean;
  /** Extra options for the injected turn (an `onEvent` that renders it, an `origin`, …). */
  readonly turnOptions?: (
    event: AsyncDelegationEvent,
    sessionId: string,
  ) => Omit<RunTurnOptions, 'sessionId' | 'message' | 'displayKind' | 'onMessageStored'>;
  /** How long a deferred completion waits before the next try (default 2000 ms). */
  readonly retryMs?: number;
  /**
   * How often to look at the ledger for completions other processes owe this surface
   * (`registry.recover()`; default 30 000 ms; 0 = only at `start()`).
   */
  readonly pollMs?: number;
  /** Per-summary cap of the rendered text (default `delegation.max_summary_chars` 24,000). */
  readonly maxSummaryChars?: number;
  readonly onDelivered?: (delivery: DeliveredCompletion) => void;
  /** Failures that did not lose the completion (it is retried); for logs. */
  readonly onError?: (error: unknown, event: AsyncDelegationEvent) => void;
}

export interface CompletionDelivery {
  /**
   * Restores what the ledger owes (`registry.recover()`), delivers what is deliverable and
   * starts the timers. Call once, after the surface can run turns.
   */
  start(): Promise<DelegationRecoveryReport>;
  /** Delivers every queued completion whose owner is idle now; resolves when those turns end. */
  drain(): Promise<number>;
  /** Tell it a turn just ended (delivers what was waiting for that session). */
  notifyIdle(sessionId?: string): void;
  /** Stops the timers and waits for deliveries in progress. Undelivered completions stay owed. */
  stop(): Promise<void>;
}

function isRecordMessage(row: MessageRecord, delegationId: string): boolean {
  if (row.role !== 'user' || row.displayKind !== COMPLETION_DISPLAY_KIND) return false;
  const content = row.content ?? '';
  return (
    content.startsWith(completionHeader(delegationId)) ||
    content.startsWith(completionHeader(delegationId, false))
  );
}

/**
 * Owns completion delivery for a surface: takes the completions a session owns off the queue,
 * only between turns; claims each in the ledger; injects the rendered
 * `[ASYNC DELEGATION BATCH COMPLETE — <id>]` text as a new turn of that session; acknowledges
 * the ledger once the injected message is stored. A busy or absent owner defers; a refusal
 * before anything was stored keeps the completion owed; nothing is dropped. After a crash the
 * ledger restores the completion at the next `start()`; a message that was already stored
 * before the crash is found and acknowledged instead of being injected twice.
 */
export function createCompletionDelivery(options: CompletionDeliveryOptions): CompletionDelivery {
  const { registry } = options;
  const store = registry.store;
  const retryMs = options.retryMs ?? 2000;
  const pollMs = options.pollMs ?? 30_000;
  const inflight = new Set<string>();
  const notBefore = new Map<string, number>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  let started = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let scheduled = false;

  const report = (error: unknown, event: AsyncDelegationEvent) => {
    try {
      options.onError?.(error, event);
    } catch {
      // A logger's failure must not cost the completion.
    }
  };

  const ownerOf = (event: AsyncDelegationEvent): string | undefined => {
    try {
      return options.owner(event);
    } catch (error) {
      report(error, event);
      return undefined;
    }
  };

  const idle = (sessionId: string): boolean => {
    try {
      if (options.isIdle && !options.isIdle(sessionId)) return false;
      return !store.getTurnLease(sessionId)?.active;
    } catch {
      return false;
    }
  };

  const requeue = (event: AsyncDelegationEvent, delayMs = retryMs) => {
    notBefore.set(event.delegation_id, performance.now() + delayMs);
    registry.queue.push(event);
  };

  /** A message of this completion already stored in the conversation (a crash after the write). */
  const findStored = (sessionId: string, delegationId: string) => {
    const tip = store.getCompressionTip(sessionId);
    for (const id of store.getLineageIds(sessionId)) {
      let afterId = 0;
      for (;;) {
        const page = store.getMessages(id, { afterId, limit: 500 });
        const row = page.find((candidate) => isRecordMessage(candidate, delegationId));
        if (row) {
          // Nothing after it in the live end: the agent never answered the injected turn.
          const last =
            id === tip && store.getMessages(id, { afterId: row.id, limit: 1 }).length === 0;
          return { messageId: row.id, last };
        }
        if (page.length < 500) break;
        afterId = (page[page.length - 1] as MessageRecord).id;
      }
    }
    return undefined;
  };

  const acknowledge = async (event: AsyncDelegationEvent): Promise<boolean> => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await store.completeDelegationDelivery(event.delegation_id);
        return true;
      } catch (error) {
        report(error, event);
      }
    }
    return false;
  };

  const deliverOne = async (event: AsyncDelegationEvent, sessionId: string): Promise<void> => {
    const id = event.delegation_id;
    await writeClaimMarker(registry.home, id).catch((error: unknown) => report(error, event));
    let claim: Awaited<ReturnType<typeof store.claimCompletionDelivery>>;
    try {
      claim = await store.claimCompletionDelivery(id);
    } catch (error) {
      await removeClaimMarker(registry.home, id);
      report(error, event);
      requeue(event);
      return;
    }
    if (!claim) {
      await removeClaimMarker(registry.home, id);
      const row = store.getDelegation(id);
      if (!row || row.deliveryState === 'delivered' || row.deliveryState === 'dropped') return;
      if (row.deliveryState === 'pending_recovery') {
        report(
          new Error(
            `completion ${id} was parked in pending_recovery after too many delivery attempts`,
          ),
          event,
        );
        return;
      }
      // Claimed by another process, or waiting out a deferral: try again later.
      requeue(event);
      return;
    }
    try {
      if (claim.delegation.deliveryAttempts > 1 || event.restored) {
        const stored = findStored(sessionId, id);
        if (stored) {
          await acknowledge(event);
          let turn: TurnResult | undefined;
          // The crash came between the injected message and the agent's answer: answer it now.
          if (stored.last)
            turn = await options
              .runTurn({ ...options.turnOptions?.(event, sessionId), sessionId })
              .catch((error: unknown) => {
                report(error, event);
                return undefined;
              });
          options.onDelivered?.({ event, sessionId, messageId: undefined, turn });
          return;
        }
      }
      const text = formatAsyncDelegation(event, {
        maxSummaryChars: options.maxSummaryChars ?? 24_000,
      });
      let messageId: number | undefined;
      let acked = false;
      let turn: TurnResult | undefined;
      try {
        turn = await options.runTurn({
          ...options.turnOptions?.(event, sessionId),
          sessionId,
          message: text,
          displayKind: COMPLETION_DISPLAY_KIND,
          onMessageStored: async (stored) => {
            messageId = stored;
            acked = await acknowledge(event);
          },
        });
      } catch (error) {
        if (messageId === undefined) {
          const busy = AgentError.isInstance(error) && error.code === 'session_busy';
          if (!busy) report(error, event);
          if (busy || !AgentError.isInstance(error) || error.code === 'session_not_found') {
            await store.deferDelegationDelivery(id, retryMs / 1000).catch(() => false);
            requeue(event);
            return;
          }
          // A refusal before anything was stored (no model configured for this conversation):
          // the completion still becomes part of the conversation, without an answer.
          const holder = await store.acquireTurnLease(sessionId);
          if (holder === null) {
            await store.deferDelegationDelivery(id, retryMs / 1000).catch(() => false);
            requeue(event);
            return;
          }
          try {
            messageId = await store.appendMessage(store.getCompressionTip(sessionId), {
              role: 'user',
              content: text,
              displayKind: COMPLETION_DISPLAY_KIND,
            });
          } finally {
            await store
              .releaseTurnLease(store.getCompressionTip(sessionId), holder)
              .catch(() => false);
          }
          acked = await acknowledge(event);
        } else report(error, event);
      }
      if (messageId === undefined && findStored(sessionId, id)) messageId = -1;
      if (messageId !== undefined && !acked) acked = await acknowledge(event);
      if (messageId === undefined) {
        // The surface's runTurn did not store the message: keep the completion owed.
        await store.releaseDelegationDelivery(id).catch(() => false);
        requeue(event);
        return;
      }
      options.onDelivered?.({
        event,
        sessionId,
        messageId: messageId === -1 ? undefined : messageId,
        turn,
      });
    } finally {
      await removeClaimMarker(registry.home, id);
    }
  };

  const drain = async (): Promise<number> => {
    if (stopped) return 0;
    const now = performance.now();
    const started: Promise<void>[] = [];
    for (const event of registry.queue.peek()) {
      const id = event.delegation_id;
      if ((notBefore.get(id) ?? 0) > now) continue;
      const sessionId = ownerOf(event);
      if (sessionId === undefined || inflight.has(sessionId) || !idle(sessionId)) continue;
      if (registry.queue.take((candidate) => candidate === event).length === 0) continue;
      notBefore.delete(id);
      inflight.add(sessionId);
      registry.markDelivering(id, true);
      const task = deliverOne(event, sessionId)
        .catch((error: unknown) => {
          report(error, event);
          requeue(event);
        })
        .finally(() => {
          inflight.delete(sessionId);
          registry.markDelivering(id, false);
          running.delete(task);
          // The next completion for this session (if any) can go now.
          if (registry.queue.size > 0) schedule();
        });
      running.add(task);
      started.push(task);
    }
    await Promise.all(started);
    return started.length;
  };

  const schedule = () => {
    if (stopped || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void drain();
    }).unref();
  };

  return {
    async start() {
      if (started) throw new Error('completion delivery already started');
      started = true;
      unsubscribe = registry.queue.subscribe(() => schedule());
      const report = await registry.recover();
      retryTimer = setInterval(() => {
        if (registry.queue.size > 0) schedule();
      }, retryMs);
      retryTimer.unref();
      if (pollMs > 0) {
        pollTimer = setInterval(() => {
          registry
            .recover()
            .then(() => schedule())
            .catch(() => {});
        }, pollMs);
        pollTimer.unref();
      }
      schedule();
      return report;
    },
    drain,
    notifyIdle() {
      schedule();
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      if (retryTimer) clearInterval(retryTimer);
      if (pollTimer) clearInterval(pollTimer);
      await Promise.allSettled([...running]);
    },
  };
}
