import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import type { TurnOutcome } from '../../runtime/turn-runner.js';
import { readJsonBody } from '../body.js';
import {
  commandRuntime,
  createChatEventRenderer,
  runStatusOf,
  turnRuntime,
  usageResponse,
} from '../chat-events.js';
import { errorBody, HttpError, streamedFailure } from '../errors.js';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';
import { eventStream } from '../sse.js';
import { requireSessionRow, storeOf } from './sessions.js';

const ChatSchema = v.looseObject({
  message: v.pipe(
    v.string(),
    v.check((text) => text.trim() !== '', 'must not be empty'),
  ),
  author: v.optional(v.nullable(v.string())),
  wait: v.optional(v.boolean()),
  reply_to: v.optional(v.nullable(v.string())),
  from: v.optional(v.nullable(v.string())),
});

/** The failure of a turn that ran (provider errors and the like), as an HTTP error. */
export function turnFailure(outcome: TurnOutcome): HttpError {
  const error = outcome.result.error ?? { code: 'internal_error', message: 'the turn failed' };
  return new HttpError({
    status: error.code === 'internal_error' ? 500 : 502,
    code: error.code,
    message: error.message,
  });
}

async function prepare(context: Context<GatewayEnv>, deps: GatewayDeps) {
  const body = await readJsonBody(context, ChatSchema, { limit: deps.maxRequestBytes });
  const store = await storeOf(context);
  const sessionId = context.req.param('id') ?? '';
  requireSessionRow(store, sessionId);
  const message =
    body.author && body.author.trim() !== '' && !body.message.trimStart().startsWith('/')
      ? `[${body.author.trim()}] ${body.message}`
      : body.message;
  return { body, sessionId, message };
}

export function registerSessionChatRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.post('/api/sessions/:id/chat', async (context) => {
    const { body, sessionId, message } = await prepare(context, deps);
    const runtime = context.get('runtime');
    deps.turns.assertAdmitting();
    const reply = await deps.slash.handle({ runtime, sessionId, message });
    if (reply) {
      return context.json({
        object: 'hermes.session.chat.completion',
        session_id: sessionId,
        message: { role: 'assistant', content: reply.text },
        messages: [],
        usage: null,
        runtime: commandRuntime(reply.command),
      });
    }
    if (body.wait === false) {
      // For relays: the reply lands in the session. The 202 waits for `run.started` — the lease
      // taken and the message stored — so a refusal before it (a busy session, no model, a
      // draining gateway) reaches the client as with `wait: true` instead of dropping the message.
      let started: () => void = () => {};
      const admitted = new Promise<void>((resolve) => {
        started = resolve;
      });
      const turn = deps.runTurn({
        runtime,
        sessionId,
        message,
        kind: 'chat',
        onEvent: (event) => {
          if (event.type === 'run.started') started();
        },
      });
      await Promise.race([admitted, turn]);
      turn.catch((error: unknown) =>
        deps.logger.warn({ err: error, sessionId }, 'background chat turn failed'),
      );
      return context.json({ object: 'hermes.session.chat.accepted', session_id: sessionId }, 202);
    }
    const outcome = await deps.runTurn({ runtime, sessionId, message, kind: 'chat' });
    if (outcome.result.status === 'failed') throw turnFailure(outcome);
    return context.json({
      object: 'hermes.session.chat.completion',
      session_id: outcome.result.sessionId,
      message: { role: 'assistant', content: outcome.result.finalResponse },
      message_id: outcome.messageId,
      messages: outcome.messages,
      usage: usageResponse(outcome.result.usage),
      runtime: turnRuntime(outcome),
    });
  });

  app.post('/api/sessions/:id/chat/stream', async (context) => {
    const { sessionId, message } = await prepare(context, deps);
    const runtime = context.get('runtime');
    deps.turns.assertAdmitting();
    return eventStream(context, { keepaliveMs: deps.keepalive.chatStreamMs }, async (sink) => {
      const send = (event: string, data: unknown) => {
        void sink.send(data, event);
      };
      const reply = await deps.slash.handle({ runtime, sessionId, message });
      if (reply) {
        send('message.started', { session_id: sessionId, role: 'assistant' });
        send('assistant.delta', { delta: reply.text });
        send('assistant.completed', { content: reply.text, message_id: null });
        send('run.completed', {
          session_id: sessionId,
          message_id: null,
          status: 'completed',
          command: reply.command,
          final_response: reply.text,
          messages: [],
          usage: null,
          runtime: commandRuntime(reply.command),
        });
        send('done', {});
        return;
      }
      try {
        const outcome = await deps.runTurn({
          runtime,
          sessionId,
          message,
          kind: 'chat',
          onEvent: createChatEventRenderer(send),
        });
        const { result } = outcome;
        const status = runStatusOf(result);
        send(`run.${status}`, {
          session_id: result.sessionId,
          message_id: outcome.messageId,
          status,
          ...(status === 'completed'
            ? { final_response: result.finalResponse, exit_reason: result.exitReason }
            : {}),
          ...(status === 'cancelled' ? { partial_response: result.finalResponse } : {}),
          ...(status === 'failed' ? { error: result.error } : {}),
          messages: outcome.messages,
          usage: usageResponse(result.usage),
          runtime: turnRuntime(outcome),
        });
      } catch (error) {
        const failure = streamedFailure(error, deps.logger, 'chat stream failed');
        send('error', { status: failure.status, ...errorBody(failure) });
      }
      send('done', {});
    });
  });
}
