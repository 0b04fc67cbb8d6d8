import {
  AgentError,
  type AgentEvent,
  type NewSessionOptions,
  type ProfileRuntime,
  type RunTurnOptions,
  type TurnResult,
} from '@hermes/agent';
import { getBrowserControlIdentity, withBrowserControlIdentity } from '@hermes/browser-broker';
import {
  type MessageRecord,
  type MessageResponse,
  type SessionStore,
  turnTranscriptMessages,
} from '@hermes/session-store';
import type { Logger } from 'pino';
import { HttpError } from '../http/errors.js';
import type { ActiveTurns, TurnKind } from './active-turns.js';

export interface TurnRequest {
  readonly runtime: ProfileRuntime;
  readonly sessionId: string;
  /**
   * `sessionId` is a new conversation's id, created by this turn (the agent's `newSession`: one
   * transaction with its first messages). Taken already → `HttpError` 409 `session_exists`.
   */
  readonly newSession?: NewSessionOptions | undefined;
  /** The user message; `undefined` continues the session without one (a resumed turn). */
  readonly message: string | undefined;
  readonly kind: TurnKind;
  /** The run's id when the surface named it before the turn (`/v1/runs`); default the agent's. */
  readonly runId?: string | undefined;
  /** The surface the agent runs for (its toolsets); default `api_server`. */
  readonly platform?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: ((event: AgentEvent) => void) | undefined;
  readonly ephemeralSystemNote?: string | undefined;
  readonly displayKind?: string | undefined;
  readonly logger?: Logger | undefined;
  /** Passed to the agent unchanged (completion delivery acknowledges its ledger with it). */
  readonly onMessageStored?: RunTurnOptions['onMessageStored'];
  readonly origin?: RunTurnOptions['origin'];
  /**
   * Read this turn's rows back from the store into `messages` and `messageId` (default true). A
   * surface that answers from the result alone (`/v1/chat/completions`) passes false and gets
   * `[]` and `null`, saving the read.
   */
  readonly transcript?: boolean;
}

export interface TurnOutcome {
  readonly result: TurnResult;
  /**
   * This turn's assistant and tool rows, projected for clients, hidden rows dropped (`[]` when
   * the request asked for no transcript).
   */
  readonly messages: MessageResponse[];
  /** The stored id of the last assistant message of the turn (null without a transcript). */
  readonly messageId: number | null;
  readonly model: string;
  readonly provider: string;
  readonly durationMs: number;
}

const PAGE = 500;

function rowsAfter(store: SessionStore, sessionId: string, afterId: number): MessageRecord[] {
  const rows: MessageRecord[] = [];
  let cursor = afterId;
  for (;;) {
    const page = store.getMessages(sessionId, { afterId: cursor, limit: PAGE });
    rows.push(...page);
    if (page.length < PAGE) return rows;
    cursor = page[page.length - 1]?.id ?? cursor;
  }
}

/** Maps the agent's refusals (thrown before anything is stored) to HTTP errors. */
export function agentRefusal(error: unknown): HttpError | undefined {
  if (!AgentError.isInstance(error)) return undefined;
  switch (error.code) {
    case 'session_busy':
      return new HttpError({ status: 409, code: 'session_busy', message: error.message });
    case 'session_not_found':
      return new HttpError({ status: 404, code: 'session_not_found', message: error.message });
    case 'session_exists':
      return new HttpError({ status: 409, code: 'session_exists', message: error.message });
    case 'model_not_configured':
    case 'model_id_missing':
    case 'missing_api_key':
    case 'unknown_provider':
    case 'unsupported_api_mode':
    case 'invalid_base_url':
      return new HttpError({ status: 503, code: error.code, message: error.message });
    default:
      return new HttpError({ status: 500, code: error.code, message: error.message });
  }
}

/**
 * Runs one model turn for a surface: admission (refused while draining), the profile's scope, the
 * browser-control identity bound to the session, the agent's events passed through, and this
 * turn's transcript read back from the store. Refusals before anything is stored throw
 * `HttpError`; everything after `run.started` comes back as a `TurnResult`.
 */
export async function runTurn(turns: ActiveTurns, request: TurnRequest): Promise<TurnOutcome> {
  const { runtime } = request;
  const store = await runtime.store();
  const { newSession } = request;
  const session = newSession
    ? { lineageRootId: request.sessionId, sessionKey: newSession.sessionKey ?? null }
    : store.getSession(request.sessionId);
  if (!session) {
    throw new HttpError({
      status: 404,
      code: 'session_not_found',
      message: `Session not found: ${request.sessionId}`,
      param: 'session_id',
    });
  }
  const { turn, end } = turns.begin({
    kind: request.kind,
    profile: runtime.name,
    conversationId: session.lineageRootId,
    signal: request.signal,
  });
  const started = performance.now();
  const readTranscript = request.transcript ?? true;
  // Rows of this turn: those after the session's newest row before the turn (its own user row is
  // dropped by the projection). Marked by position, not by `message.completed`: an interrupted
  // reply is stored without that event. The mark is the agent's (`run.started`): read in the
  // transaction that took the turn lease, where no other turn can store a row until this one
  // ends — a mark read here before the turn would also count rows another process stored until
  // then. It names the session the turn runs on (the compression tip of the id given). A
  // compression mid-turn moves the mark to the child's newest row (its copied history is not
  // this turn's).
  let since: { sessionId: string; afterId: number } | undefined;
  const collected: MessageRecord[] = [];
  let model = '';
  let provider = '';
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'run.started') {
      model = event.model;
      provider = event.provider;
      since = { sessionId: event.sessionId, afterId: event.previousMessageId };
    } else if (!readTranscript || !since) {
      // Nothing to collect.
    } else if (event.type === 'session.compressed') {
      collected.push(...rowsAfter(store, event.fromSessionId, since.afterId));
      since = {
        sessionId: event.toSessionId,
        afterId: store.getTranscriptMark(event.toSessionId).lastMessageId,
      };
    }
    request.onEvent?.(event);
  };
  try {
    const agent = await runtime.agent({ platform: request.platform });
    const result = await runtime.run(() =>
      withBrowserControlIdentity(
        { ...getBrowserControlIdentity(), sessionId: session.lineageRootId },
        () =>
          agent.runTurn({
            sessionId: request.sessionId,
            ...(newSession ? { newSession } : {}),
            ...(request.runId === undefined ? {} : { runId: request.runId }),
            ...(request.message === undefined ? {} : { message: request.message }),
            signal: turn.controller.signal,
            onEvent,
            ...(request.ephemeralSystemNote
              ? { ephemeralSystemNote: request.ephemeralSystemNote }
              : {}),
            ...(request.displayKind ? { displayKind: request.displayKind } : {}),
            ...(request.onMessageStored ? { onMessageStored: request.onMessageStored } : {}),
            origin: request.origin ?? {
              sessionKey: session.sessionKey ?? session.lineageRootId,
            },
          }),
      ),
    );
    if (readTranscript && since?.sessionId === result.sessionId)
      collected.push(...rowsAfter(store, result.sessionId, since.afterId));
    const finished = {
      profile: runtime.name,
      sessionId: result.sessionId,
      runId: result.runId,
      kind: request.kind,
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      apiCalls: result.usage.apiCalls,
      ms: Math.round(performance.now() - started),
    };
    // Logged once the answer has gone out (its serialisation and redaction are not the client's
    // wait): the surface renders the outcome in this same turn of the event loop.
    const { logger } = request;
    if (logger) setImmediate(() => logger.info(finished, 'turn finished'));
    const messages = turnTranscriptMessages({
      messages: collected,
      priorHistoryLength: 0,
      promptAppended: false,
    });
    let messageId: number | null = null;
    for (const row of collected) if (row.role === 'assistant') messageId = row.id;
    return {
      result,
      messages,
      messageId,
      model,
      provider,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    throw agentRefusal(error) ?? error;
  } finally {
    end();
    // Completions waiting for this session can be delivered now.
    runtime.notifyIdle(request.sessionId);
  }
}
