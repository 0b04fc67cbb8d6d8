import type { MessageInput, SessionStore, UsageInput } from '@hermes/session-store';
import type { Usage } from '../model/chat-message.js';
import type { ModelRoute } from '../model/model-route.js';
import type { TurnResult } from './agent-types.js';
import type { Emit } from './early-call.js';
import type { TurnOutcome } from './turn-outcome.js';

/** A turn's lease: follows the session into a compression child; `released` once let go. */
export interface TurnLease {
  readonly holder: string;
  sessionId: string;
  released: boolean;
}

/** How a running turn stores its rows, its usage and the lease's release. */
export interface TurnRecorder {
  /** Results of read-only calls not stored yet (see `defer`). */
  hasDeferred(): boolean;
  /** Holds a read-only call's result for the turn's next write. */
  defer(message: MessageInput): void;
  /** `messages` after the deferred results, in one transaction; the ids of `messages`. */
  append(messages: readonly MessageInput[]): Promise<number[]>;
  /**
   * Stores the deferred results, the turn's last messages, its usage and the lease's release in
   * one transaction. Should that fail, the messages are stored alone (a failure there fails the
   * turn as before), and `finish` records the usage and the lease is released on their own.
   */
  storeLast(messages: readonly MessageInput[]): Promise<number[]>;
  /** Records what is still unrecorded, emits the turn's terminal event and returns its result. */
  finish(result: TurnOutcome): Promise<TurnResult>;
}

export function createTurnRecorder(input: {
  readonly store: SessionStore;
  readonly lease: TurnLease;
  readonly main: ModelRoute;
  /** The turn's usage so far (added to as calls are made). */
  readonly usage: Usage;
  /** The names of the tools the turn called so far. */
  readonly usedTools: ReadonlySet<string>;
  /** The session the turn runs on now (a compression child once compressed). */
  readonly sessionId: () => string;
  readonly runId: string;
  readonly emit: Emit;
}): TurnRecorder {
  const { store, lease, main, usage, usedTools, emit } = input;
  const usageInput = (): UsageInput => ({
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    reasoningTokens: usage.reasoningTokens,
    apiCalls: usage.apiCalls,
    ...(main.model ? { model: main.model } : {}),
    billingProvider: main.provider,
    billingBaseUrl: main.baseUrl,
    ...(usage.toolCalls > 0 ? { toolNames: [...usedTools] } : {}),
  });
  let usageRecorded = false;
  /**
   * Results of read-only tool calls not stored yet: they ride in the transaction of the turn's
   * next write (the model's next reply, a side-effecting call's result, the turn's end), so an
   * iteration of read-only calls costs one transaction instead of two. A crash before that write
   * loses only results any rerun recomputes (the call had no effect); the stored call is
   * answered "no result recorded" when the transcript is read (`TranscriptBuilder`).
   */
  const pending: MessageInput[] = [];
  /**
   * Runs a write carrying the pending results: taken before it (a result recorded meanwhile
   * waits for the next write) and put back should it fail.
   */
  const carrying = async <T>(write: (carried: MessageInput[]) => Promise<T>): Promise<T> => {
    const carried = pending.splice(0);
    try {
      return await write(carried);
    } catch (error) {
      pending.unshift(...carried);
      throw error;
    }
  };
  const append = (messages: readonly MessageInput[]): Promise<number[]> =>
    carrying(async (carried) =>
      (await store.appendMessages(input.sessionId(), [...carried, ...messages])).slice(
        carried.length,
      ),
    );
  const storeLast = async (messages: readonly MessageInput[]): Promise<number[]> => {
    try {
      return await carrying(async (carried) => {
        const ended = await store.endTurn(input.sessionId(), {
          messages: [...carried, ...messages],
          usage: usageInput(),
          releaseLease: lease.holder,
        });
        usageRecorded = true;
        lease.released = true;
        return ended.messageIds.slice(carried.length);
      });
    } catch {
      return await append(messages);
    }
  };
  const finish = async (result: TurnOutcome): Promise<TurnResult> => {
    if (!usageRecorded) {
      try {
        await carrying((carried) =>
          store.endTurn(input.sessionId(), {
            ...(carried.length > 0 ? { messages: carried } : {}),
            usage: usageInput(),
            releaseLease: lease.holder,
          }),
        );
        usageRecorded = true;
        lease.released = true;
      } catch (error) {
        emit({
          type: 'warning',
          code: 'usage_not_recorded',
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (pending.length > 0) {
      try {
        await append([]);
      } catch (error) {
        emit({
          type: 'warning',
          code: 'tool_results_not_recorded',
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    const usageCopy = { ...usage };
    if (result.status === 'completed')
      emit({
        type: 'run.completed',
        finalResponse: result.finalResponse,
        exitReason: result.exitReason === 'max_iterations' ? 'max_iterations' : 'completed',
        usage: usageCopy,
      });
    else if (result.status === 'interrupted')
      emit({ type: 'run.interrupted', partialResponse: result.finalResponse, usage: usageCopy });
    else
      emit({
        type: 'run.failed',
        error: result.error ?? { code: 'internal_error', message: 'the turn failed' },
        usage: usageCopy,
      });
    return { ...result, runId: input.runId, sessionId: input.sessionId(), usage: usageCopy };
  };
  return {
    hasDeferred: () => pending.length > 0,
    defer: (message) => {
      pending.push(message);
    },
    append,
    storeLast,
    finish,
  };
}
