import type { AgentEvent } from '../events.js';
import { type ChatMessage, emptyModelTurn, type ModelTurn } from '../model/chat-message.js';
import type { FunctionSchema } from '../model/function-schema.js';
import type { ModelClient } from '../model/model-client.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Reports a turn's event; the run id and the session are added by the turn. */
export type Emit = (event: DistributiveOmit<AgentEvent, 'runId' | 'sessionId'>) => void;

/**
 * A new conversation's first model call, sent while the transaction that creates the
 * conversation commits (see `RunTurnOptions.newSession`). Its answer is used only after that.
 */
export interface EarlyCall {
  readonly turn: ModelTurn;
  /** Settles with the call; a rejection is observed, so it never goes unhandled. */
  readonly done: Promise<void>;
  /** Sends the events the call produced so far to `emit`, and every later one straight there. */
  attach(emit: Emit): void;
  abort(): void;
}

export function startEarlyCall(
  client: ModelClient,
  call: {
    messages: ChatMessage[];
    tools: readonly FunctionSchema[];
    sessionId: string;
    signal: AbortSignal | undefined;
  },
): EarlyCall {
  const local = new AbortController();
  let sink: Emit | undefined;
  const held: Parameters<Emit>[0][] = [];
  const send: Emit = (event) => {
    if (sink) sink(event);
    else held.push(event);
  };
  const turn = emptyModelTurn();
  let settled = false;
  const done = client
    .complete({
      messages: call.messages,
      tools: call.tools,
      signal: call.signal ? AbortSignal.any([call.signal, local.signal]) : local.signal,
      sessionId: call.sessionId,
      turn,
      onTextDelta: (text) => send({ type: 'message.delta', text }),
      onReasoningDelta: (text) => send({ type: 'reasoning.delta', text }),
      onNotice: (notice) => send(notice),
    })
    .then(() => undefined)
    .finally(() => {
      settled = true;
    });
  done.catch(() => {});
  return {
    turn,
    done,
    attach(emit) {
      sink = emit;
      for (const event of held.splice(0)) emit(event);
    },
    abort() {
      // Only a call still running: an abort builds a DOMException, worth skipping on every turn.
      if (!settled) local.abort();
    },
  };
}
