import type { AgentEvent, TurnResult, Usage } from '@hermes/agent';
import type { TurnOutcome } from '../runtime/turn-runner.js';

/** The session chat stream's event names (the reference's). */
export const CHAT_STREAM_EVENTS = [
  'run.started',
  'message.started',
  'assistant.delta',
  'tool.progress',
  'tool.started',
  'tool.completed',
  'tool.failed',
  'assistant.completed',
  'run.completed',
  'run.failed',
  'run.cancelled',
  'error',
  'done',
] as const;
export type ChatStreamEvent = (typeof CHAT_STREAM_EVENTS)[number];

export function usageResponse(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    reasoning_tokens: usage.reasoningTokens,
    api_calls: usage.apiCalls,
    tool_calls: usage.toolCalls,
  };
}

/**
 * `runtime` of a chat answer, a stream's `run.<status>` and a run: how the turn ran (the agent's
 * status and exit reason, the model and provider that answered, how long it took).
 */
export function turnRuntime(outcome: TurnOutcome) {
  return {
    run_id: outcome.result.runId,
    status: outcome.result.status,
    exit_reason: outcome.result.exitReason,
    model: outcome.model,
    provider: outcome.provider,
    duration_ms: outcome.durationMs,
  };
}

/** `runtime` of a slash command's answer: the command that answered (`""` for a bare `/`). */
export function commandRuntime(command: string) {
  return { command };
}

/** A finished turn's status as the sessions and runs APIs name it. */
export function runStatusOf(result: TurnResult): 'completed' | 'cancelled' | 'failed' {
  if (result.status === 'interrupted') return 'cancelled';
  return result.status === 'failed' ? 'failed' : 'completed';
}

/**
 * The assistant's text as one stream for the OpenAI-compatible surfaces: `message.delta` text,
 * with a blank line between the text of one model call and the next when tools ran in between.
 * Returns the `onEvent` to hand to the turn.
 */
export function assistantTextDeltas(onText: (text: string) => void): (event: AgentEvent) => void {
  let wroteText = false;
  let separatorDue = false;
  return (event) => {
    if (event.type === 'message.delta') {
      const text = separatorDue && wroteText ? `\n\n${event.text}` : event.text;
      separatorDue = false;
      if (text !== '') wroteText = true;
      onText(text);
    } else if (event.type === 'message.completed' && event.toolCalls.length > 0) {
      separatorDue = true;
    }
  };
}

/**
 * Turns the agent's events into the session chat stream's. Terminal events are not rendered
 * here: the route sends `run.<status>` itself, with the turn's transcript read from the store.
 */
export function createChatEventRenderer(emit: (event: ChatStreamEvent, data: unknown) => void) {
  let messageOpen = false;
  return (event: AgentEvent) => {
    switch (event.type) {
      case 'run.started':
        emit('run.started', {
          run_id: event.runId,
          session_id: event.sessionId,
          model: event.model,
          provider: event.provider,
        });
        return;
      case 'message.delta':
        if (!messageOpen) {
          messageOpen = true;
          emit('message.started', {
            run_id: event.runId,
            session_id: event.sessionId,
            role: 'assistant',
          });
        }
        emit('assistant.delta', { run_id: event.runId, delta: event.text });
        return;
      case 'tool.started':
        emit('tool.started', {
          run_id: event.runId,
          tool_call_id: event.callId,
          name: event.name,
          arguments: event.arguments,
        });
        return;
      case 'tool.completed':
        emit('tool.completed', {
          run_id: event.runId,
          tool_call_id: event.callId,
          name: event.name,
          result: event.result,
          duration_ms: event.durationMs,
        });
        return;
      case 'tool.failed':
        emit('tool.failed', {
          run_id: event.runId,
          tool_call_id: event.callId,
          name: event.name,
          error: event.error,
          duration_ms: event.durationMs,
        });
        return;
      case 'message.completed':
        if (!messageOpen)
          emit('message.started', {
            run_id: event.runId,
            session_id: event.sessionId,
            role: 'assistant',
          });
        messageOpen = false;
        emit('assistant.completed', {
          run_id: event.runId,
          message_id: event.messageId,
          content: event.content,
          tool_calls: event.toolCalls,
          finish_reason: event.finishReason,
        });
        return;
      case 'model.retry':
      case 'model.fallback':
      case 'session.compressed':
      case 'warning':
        emit('tool.progress', { run_id: event.runId, ...progressOf(event) });
        return;
      default:
        return;
    }
  };
}

function progressOf(event: AgentEvent): Record<string, unknown> {
  switch (event.type) {
    case 'model.retry':
      return {
        kind: 'model.retry',
        provider: event.provider,
        attempt: event.attempt,
        delay_ms: event.delayMs,
        reason: event.reason,
      };
    case 'model.fallback':
      return { kind: 'model.fallback', from: event.from, to: event.to, reason: event.reason };
    case 'session.compressed':
      return {
        kind: 'session.compressed',
        from_session_id: event.fromSessionId,
        to_session_id: event.toSessionId,
      };
    case 'warning':
      return { kind: 'warning', code: event.code, message: event.message };
    default:
      return { kind: event.type };
  }
}
