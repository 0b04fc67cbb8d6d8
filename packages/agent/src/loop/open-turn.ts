import {
  type BeganTurn,
  type MessageInput,
  type SessionStore,
  SessionStoreError,
  type TranscriptMark,
} from '@hermes/session-store';
import { messageChars } from '../compression/estimate-tokens.js';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import type { ModelRoute } from '../model/model-route.js';
import { type AgentInternals, turnSystemPrompt } from './agent-internals.js';
import type { RunTurnOptions } from './agent-types.js';
import { type EarlyCall, startEarlyCall } from './early-call.js';
import { type AppendedRows, storedRow, TranscriptBuilder } from './transcript.js';

/** The system prompt built for a turn, or why building it failed (the turn then fails). */
export type TurnPrompt = { text: string } | { error: unknown };

/** What a turn's opening transaction stored. */
export interface Opened {
  readonly messageId?: number;
  readonly transcript: TranscriptMark;
  /** What it appended, so the transcript need not be read back. */
  readonly appended: AppendedRows;
}

/**
 * An existing conversation's opening: one transaction takes the lease and stores the prompt and
 * the user message. Should it fail (short of the database staying locked), the lease is taken
 * alone (`opened` undefined) and the turn stores the rest one write at a time, reporting what
 * fails as a failed turn. `holder` is null when another turn holds the lease.
 */
export async function openExistingSession(
  store: SessionStore,
  input: { sessionId: string; prompt: TurnPrompt; userMessage: MessageInput | undefined },
): Promise<{
  opened: Opened | undefined;
  holder: string | null;
  /** Where the turn's rows start; undefined when the lease was taken alone. */
  previousMessageId: number | undefined;
}> {
  const { sessionId, prompt, userMessage } = input;
  const began = await store
    .beginTurn(
      sessionId,
      'text' in prompt
        ? { systemPrompt: prompt.text, ...(userMessage ? { messages: [userMessage] } : {}) }
        : {},
    )
    .catch((error: unknown) => {
      if (SessionStoreError.isInstance(error) && error.code === 'database_locked') throw error;
      return undefined;
    });
  if (began === undefined)
    return {
      opened: undefined,
      holder: await store.acquireTurnLease(sessionId),
      previousMessageId: undefined,
    };
  return {
    holder: began?.holder ?? null,
    previousMessageId: began?.previousMessageId,
    opened:
      began && 'text' in prompt
        ? {
            ...(userMessage ? { messageId: began.messageIds[0] } : {}),
            transcript: began.transcript,
            appended: {
              previousMessageId: began.previousMessageId,
              rows:
                userMessage && began.messageIds[0] !== undefined
                  ? [storedRow(began.messageIds[0], userMessage)]
                  : [],
            },
          }
        : undefined,
  };
}

/**
 * A new conversation's opening transaction (the session, its prompt, the client's earlier
 * messages and this turn's, the lease), with the first model call sent before it when nothing
 * in that call waits on the store: not when the first call would compress, not when the turn is
 * already stopped. Throws — nothing stored, the call aborted — when the transaction fails.
 */
export async function openNewSession(
  internals: Pick<
    AgentInternals,
    | 'store'
    | 'platform'
    | 'cwd'
    | 'maxIterations'
    | 'model'
    | 'toolSchemas'
    | 'toolChars'
    | 'needsCompression'
  >,
  input: {
    turnOptions: RunTurnOptions;
    fresh: NonNullable<RunTurnOptions['newSession']>;
    sessionId: string;
    main: ModelRoute;
    fallbacks: readonly ModelRoute[];
    prompt: TurnPrompt;
    userMessage: MessageInput | undefined;
  },
): Promise<{
  opened: Opened | undefined;
  holder: string;
  early: EarlyCall | undefined;
  previousMessageId: number;
}> {
  const { store } = internals;
  const { turnOptions, sessionId, main, prompt, userMessage } = input;
  const { history = [], ...fields } = input.fresh;
  const seeded = userMessage ? [...history, userMessage] : [...history];
  let early: EarlyCall | undefined;
  if (
    'text' in prompt &&
    internals.maxIterations > 0 &&
    !turnOptions.signal?.aborted &&
    !turnOptions.control?.shouldStop?.()
  ) {
    // Provisional row ids: only the content goes into the request.
    const builder = new TranscriptBuilder();
    builder.add(seeded.map((message, index) => storedRow(index + 1, message)));
    const { messages, chars } = builder.snapshot();
    const system = turnSystemPrompt(prompt.text, turnOptions);
    if (
      !internals.needsCompression(
        main,
        messageChars({ role: 'system', content: system }) + chars + internals.toolChars,
      )
    ) {
      early = startEarlyCall(internals.model.client(main, input.fallbacks), {
        messages: [{ role: 'system', content: system }, ...messages],
        tools: internals.toolSchemas,
        sessionId,
        signal: turnOptions.signal,
      });
      // Let the request reach its socket before the transaction holds the thread.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  let began: BeganTurn | null;
  try {
    began = await store.beginTurn(sessionId, {
      create: {
        source: internals.platform,
        cwd: internals.cwd,
        ...(main.model ? { model: main.model } : {}),
        ...fields,
      },
      ...('text' in prompt ? { systemPrompt: prompt.text } : {}),
      ...(seeded.length > 0 ? { messages: seeded } : {}),
    });
  } catch (error) {
    early?.abort();
    if (SessionStoreError.isInstance(error) && error.code === 'session_exists')
      throw new AgentError({
        code: 'session_exists',
        message: AGENT_ERROR_MESSAGES.sessionExists(sessionId),
        cause: error,
      });
    throw error;
  }
  if (began === null) {
    // Not possible for a session this transaction created; refused as any busy session.
    early?.abort();
    throw new AgentError({
      code: 'session_busy',
      message: AGENT_ERROR_MESSAGES.sessionBusy(sessionId),
    });
  }
  const ids = began.messageIds;
  const messageId = userMessage ? ids.at(-1) : undefined;
  return {
    holder: began.holder,
    early,
    // The client's earlier messages are not this turn's: it starts after the last of them.
    previousMessageId:
      history.length > 0 ? (ids[history.length - 1] ?? 0) : began.previousMessageId,
    opened:
      'text' in prompt
        ? {
            ...(messageId === undefined ? {} : { messageId }),
            transcript: began.transcript,
            appended: {
              previousMessageId: began.previousMessageId,
              rows: seeded.map((message, index) => storedRow(ids[index] ?? 0, message)),
            },
          }
        : undefined,
  };
}
