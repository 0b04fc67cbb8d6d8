import {
  AgentError,
  type AgentEvent,
  emptyUsage,
  type TurnResult,
  type Usage,
} from '@hermes/agent';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from '../contract/error-codes.js';
import type { EventPayload } from '../contract/events.js';
import type { LiveSession, RunningTurn, TurnOrigin } from './live-session.js';
import { withUiSession } from './ui-scope.js';

export interface StartTurnOptions {
  /**
   * The user message stored before the model is called. Absent only for a delivered completion
   * that was stored before a crash and never answered: the turn answers what is stored.
   */
  readonly text?: string;
  readonly origin: TurnOrigin;
  /** Stored `display_kind` of the message (a re-entered delegation result). */
  readonly displayKind?: string;
  /** Called once the turn has ended and the session is idle again. */
  readonly onIdle?: (session: LiveSession) => void;
  /** Called with the result when the turn has ended (before `onIdle`). */
  readonly onResult?: (result: TurnResult | undefined, error: unknown) => void;
  /** Called once the user message is stored (before the model is called). */
  readonly onMessageStored?: (messageId: number) => void | Promise<void>;
}

function usageView(usage: Usage): EventPayload<'run.completed'>['usage'] {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    reasoning_tokens: usage.reasoningTokens,
    api_calls: usage.apiCalls,
    tool_calls: usage.toolCalls,
  };
}

/** Turns the agent's refusals (thrown before anything is stored) into RPC errors. */
export function agentRefusal(error: unknown): RpcError {
  if (RpcError.isInstance(error)) return error;
  if (AgentError.isInstance(error)) {
    if (error.code === 'session_busy')
      return new RpcError(RPC_ERROR_CODES.sessionBusy, error.message);
    if (error.code === 'session_not_found')
      return new RpcError(RPC_ERROR_CODES.sessionNotFound, error.message);
    return new RpcError(RPC_ERROR_CODES.agentUnavailable, error.message, {
      agent_code: error.code,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(RPC_ERROR_CODES.internalError, `Internal error: ${message}`);
}

function relay(session: LiveSession, turn: RunningTurn, event: AgentEvent): void {
  const runId = event.runId;
  switch (event.type) {
    case 'message.delta':
    case 'reasoning.delta':
      session.emit(event.type, { run_id: runId, text: event.text });
      return;
    case 'tool.started':
      session.emit('tool.start', {
        run_id: runId,
        call_id: event.callId,
        name: event.name,
        arguments: event.arguments,
      });
      return;
    case 'tool.completed':
    case 'tool.failed':
      session.emit('tool.complete', {
        run_id: runId,
        call_id: event.callId,
        name: event.name,
        ok: event.type === 'tool.completed',
        result: event.type === 'tool.completed' ? event.result : null,
        error: event.type === 'tool.failed' ? event.error : null,
        duration_ms: event.durationMs,
      });
      return;
    case 'message.completed':
      session.emit('message.complete', {
        run_id: runId,
        message_id: event.messageId,
        content: event.content,
        finish_reason: event.finishReason,
        tool_calls: event.toolCalls.map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
      });
      return;
    case 'session.compressed':
      session.storedSessionId = event.toSessionId;
      session.emit('session.compressed', {
        run_id: runId,
        from_session_id: event.fromSessionId,
        to_session_id: event.toSessionId,
      });
      return;
    case 'warning':
      session.emit('warning', { run_id: runId, code: event.code, message: event.message });
      return;
    default:
      void turn;
  }
}

/**
 * Starts a turn on a live session and resolves with its run id once the agent has started it
 * (refusals before anything is stored reject with an RPC error). The turn then runs on its own:
 * the front end may go away; everything is stored as it happens and `run.completed` is sent to
 * whoever is attached when it ends. The profile scope and the UI identity are bound around it.
 */
export function startTurn(session: LiveSession, options: StartTurnOptions): Promise<string> {
  if (session.closed) {
    return Promise.reject(
      new RpcError(RPC_ERROR_CODES.sessionNotFound, RPC_ERROR_MESSAGES.sessionNotFound(session.id)),
    );
  }
  if (session.running || session.busy)
    return Promise.reject(
      new RpcError(RPC_ERROR_CODES.sessionBusy, RPC_ERROR_MESSAGES.sessionBusy),
    );
  const turn: RunningTurn = {
    runId: undefined,
    origin: options.origin,
    controller: new AbortController(),
    events: [],
    replayDropped: 0,
    done: Promise.resolve(),
  };
  // Claimed before the first await: two submits in the same tick cannot both start.
  session.running = turn;
  let terminal: EventPayload<'run.completed'> | undefined;
  let reportStarted: (runId: string) => void = () => {};
  let reportRefused: (error: unknown) => void = () => {};
  const started = new Promise<string>((resolve, reject) => {
    reportStarted = resolve;
    reportRefused = reject;
  });

  const onEvent = (event: AgentEvent) => {
    if (event.type === 'run.started') {
      turn.runId = event.runId;
      session.emit('run.started', {
        run_id: event.runId,
        origin: options.origin,
        model: event.model,
        provider: event.provider,
      });
      reportStarted(event.runId);
      return;
    }
    if (
      event.type === 'run.completed' ||
      event.type === 'run.failed' ||
      event.type === 'run.interrupted'
    ) {
      terminal = {
        run_id: event.runId,
        status:
          event.type === 'run.completed'
            ? 'completed'
            : event.type === 'run.failed'
              ? 'failed'
              : 'interrupted',
        final_response:
          event.type === 'run.completed'
            ? event.finalResponse
            : event.type === 'run.interrupted'
              ? event.partialResponse
              : '',
        stored_session_id: event.sessionId,
        error:
          event.type === 'run.failed'
            ? { code: event.error.code, message: event.error.message }
            : null,
        usage: usageView(event.usage),
      };
      return;
    }
    relay(session, turn, event);
  };

  const identity = {
    uiSessionId: session.id,
    sessionKey: session.conversationId,
    storedSessionId: session.storedSessionId,
    profile: session.runtime.name,
    steerAuthority: { transport: 'bridge' as const, sessionId: session.id },
  };
  turn.done = (async () => {
    let result: TurnResult | undefined;
    let failure: unknown;
    try {
      const agent = await session.runtime.agent();
      result = await session.runtime.run(() =>
        withUiSession(identity, () =>
          agent.runTurn({
            sessionId: session.storedSessionId,
            ...(options.text !== undefined ? { message: options.text } : {}),
            signal: turn.controller.signal,
            onEvent,
            origin: { sessionKey: session.conversationId, uiSessionId: session.id },
            control: {
              takeSteer: () => {
                if (session.steers.length === 0) return undefined;
                return session.steers.splice(0).join('\n');
              },
            },
            ...(options.displayKind ? { displayKind: options.displayKind } : {}),
            ...(session.cwd ? { cwd: session.cwd } : {}),
            ...(options.onMessageStored ? { onMessageStored: options.onMessageStored } : {}),
          }),
        ),
      );
      session.storedSessionId = result.sessionId;
    } catch (error) {
      failure = error;
    }
    session.denyPendingApprovals();
    // A steer rides on the turn's next tool result; one that never got one is this turn's, not
    // the next's: say so (before run.completed) instead of slipping it into a later turn.
    const missed = session.steers.splice(0);
    if (missed.length > 0) {
      session.emit('warning', {
        run_id: turn.runId ?? null,
        code: 'steer_missed',
        message: `the answer ended before your /steer reached it: "${missed.join(' / ')}" — send it as a message`,
      });
    }
    session.running = undefined;
    if (turn.runId === undefined) {
      reportRefused(agentRefusal(failure ?? new Error('the turn ended before it started')));
    } else {
      terminal ??= {
        run_id: turn.runId,
        status: 'failed',
        final_response: '',
        stored_session_id: session.storedSessionId,
        error: {
          code: 'internal_error',
          message:
            failure instanceof Error
              ? failure.message
              : String(failure ?? 'the turn ended without a result'),
        },
        usage: usageView(result?.usage ?? emptyUsage()),
      };
      session.emit('run.completed', terminal);
    }
    try {
      options.onResult?.(result, failure);
    } finally {
      options.onIdle?.(session);
    }
  })();
  return started;
}
