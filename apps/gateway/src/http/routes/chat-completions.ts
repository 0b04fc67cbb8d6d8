import { randomUUID } from 'node:crypto';
import type { Usage } from '@hermes/agent';
import type { Hono } from 'hono';
import * as v from 'valibot';
import type { TurnOutcome } from '../../runtime/turn-runner.js';
import { looseJsonObject, readJsonBody } from '../body.js';
import { assistantTextDeltas } from '../chat-events.js';
import {
  contentText,
  type HistoryMessage,
  hasPromptText,
  MessageContentSchema,
  newApiConversation,
  resolveApiSession,
  runNewConversationTurn,
  SESSION_ID_HEADER,
} from '../conversation-input.js';
import { errorBody, HttpError, streamedFailure } from '../errors.js';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';
import { eventStream } from '../sse.js';
import { modelNameFor } from './info.js';
import { turnFailure } from './session-chat.js';
import { storeOf } from './sessions.js';

const NonEmptyString = v.pipe(v.string(), v.minLength(1, 'must not be empty'));

/**
 * An assistant message's tool call, as OpenAI defines it. Checked because it is stored: a
 * malformed one would be resent on every later turn of the session, and providers refuse it.
 */
const ToolCallSchema = looseJsonObject({
  id: NonEmptyString,
  type: v.optional(v.literal('function', "must be 'function'")),
  function: looseJsonObject({ name: NonEmptyString, arguments: v.string() }),
});

const ChatMessageSchema = v.pipe(
  looseJsonObject({
    role: v.picklist(['system', 'developer', 'user', 'assistant', 'tool']),
    content: v.optional(MessageContentSchema),
    tool_calls: v.optional(v.array(ToolCallSchema)),
    tool_call_id: v.optional(v.string()),
    name: v.optional(v.string()),
  }),
  v.forward(
    v.check(
      (message) => message.role !== 'tool' || (message.tool_call_id ?? '') !== '',
      "a tool message needs the id of the call it answers (non-empty 'tool_call_id')",
    ),
    ['tool_call_id'],
  ),
);

const ChatCompletionSchema = v.looseObject({
  model: v.optional(v.string()),
  messages: v.pipe(v.array(ChatMessageSchema), v.minLength(1, 'must hold at least one message')),
  stream: v.optional(v.nullable(v.boolean())),
  stream_options: v.optional(
    v.nullable(looseJsonObject({ include_usage: v.optional(v.boolean()) })),
  ),
  user: v.optional(v.string()),
});

type ChatMessage = v.InferOutput<typeof ChatMessageSchema>;

/** Splits a client conversation: system text (sent for this turn only), history, the prompt. */
export function splitConversation(messages: readonly ChatMessage[]) {
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || !hasPromptText(last.content)) {
    throw new HttpError({
      status: 400,
      code: 'invalid_request',
      message:
        'The last message must be a user message with text (images are not sent to the model)',
      param: 'messages',
    });
  }
  const system: string[] = [];
  const history: HistoryMessage[] = [];
  for (const message of messages.slice(0, -1)) {
    const text = contentText(message.content);
    if (message.role === 'system' || message.role === 'developer') {
      if (text.trim() !== '') system.push(text);
    } else if (message.role === 'tool') {
      // The schema guarantees the id.
      history.push({ role: 'tool', content: text, toolCallId: message.tool_call_id ?? '' });
    } else if (message.role === 'assistant') {
      history.push({
        role: 'assistant',
        content: text,
        ...(message.tool_calls && message.tool_calls.length > 0
          ? { toolCalls: message.tool_calls }
          : {}),
      });
    } else {
      history.push({ role: 'user', content: text });
    }
  }
  return { prompt: contentText(last.content), system: system.join('\n\n'), history };
}

/** The Chat Completions `usage` object of a turn. */
function completionUsage(usage: Usage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/**
 * `stop` for an interrupted turn too (`/stop`, a drain past its budget): OpenAI's `length` would
 * say the token limit cut the answer, and a client may retry with a larger `max_tokens`.
 */
const FINISH_REASON = 'stop';

/** A non-streamed Chat Completions answer of a turn. */
function completionBody(input: {
  id: string;
  created: number;
  model: string;
  outcome: TurnOutcome;
}) {
  const { result } = input.outcome;
  return {
    id: input.id,
    object: 'chat.completion',
    created: input.created,
    model: input.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.finalResponse },
        finish_reason: FINISH_REASON,
      },
    ],
    usage: completionUsage(result.usage),
  };
}

function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
}

export function registerChatCompletionRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.post('/v1/chat/completions', async (context) => {
    const body = await readJsonBody(context, ChatCompletionSchema, {
      limit: deps.maxRequestBytes,
    });
    const { prompt, system, history } = splitConversation(body.messages);
    const runtime = context.get('runtime');
    deps.turns.assertAdmitting();
    const store = await storeOf(context);
    const model = modelNameFor(runtime.name, context.get('prefix') !== '');
    const id = completionId();
    const created = Math.floor(Date.now() / 1000);
    // A new conversation answered in one piece is created by its turn (one transaction fewer);
    // a streamed one names its session in the headers before the turn, and a command needs it.
    const fresh =
      body.stream || deps.slash.parse(prompt) ? undefined : newApiConversation(context, history);
    if (fresh) {
      const outcome = await runNewConversationTurn(deps.runTurn, {
        runtime,
        message: prompt,
        kind: 'api',
        ephemeralSystemNote: system || undefined,
        transcript: false,
        newSession: fresh,
      });
      context.header(SESSION_ID_HEADER, outcome.result.sessionId);
      if (outcome.result.status === 'failed') throw turnFailure(outcome);
      return context.json(completionBody({ id, created, model, outcome }));
    }
    const { session } = await resolveApiSession(context, store, history);
    context.header(SESSION_ID_HEADER, session.id);

    const reply = await deps.slash.handle({ runtime, sessionId: session.id, message: prompt });
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });

    if (body.stream) {
      return eventStream(
        context,
        {
          keepaliveMs: deps.keepalive.apiStreamMs,
          headers: { [SESSION_ID_HEADER]: session.id },
        },
        async (sink) => {
          await sink.send(chunk({ role: 'assistant', content: '' }));
          if (reply) {
            await sink.send(chunk({ content: reply.text }));
            await sink.send(chunk({}, 'stop'));
            await sink.sendRaw('[DONE]');
            return;
          }
          const onEvent = assistantTextDeltas((text) => {
            void sink.send(chunk({ content: text }));
          });
          try {
            const outcome = await deps.runTurn({
              runtime,
              sessionId: session.id,
              message: prompt,
              kind: 'api',
              onEvent,
              ephemeralSystemNote: system || undefined,
              transcript: false,
            });
            if (outcome.result.status === 'failed') {
              const failure = turnFailure(outcome);
              await sink.send(errorBody(failure));
            } else {
              await sink.send(chunk({}, FINISH_REASON));
              if (body.stream_options?.include_usage) {
                await sink.send({
                  id,
                  object: 'chat.completion.chunk',
                  created,
                  model,
                  choices: [],
                  usage: completionUsage(outcome.result.usage),
                });
              }
            }
          } catch (error) {
            await sink.send(
              errorBody(streamedFailure(error, deps.logger, 'chat completion failed')),
            );
          }
          await sink.sendRaw('[DONE]');
        },
      );
    }

    if (reply) {
      return context.json({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    }
    const outcome = await deps.runTurn({
      runtime,
      sessionId: session.id,
      message: prompt,
      kind: 'api',
      ephemeralSystemNote: system || undefined,
      transcript: false,
    });
    if (outcome.result.status === 'failed') throw turnFailure(outcome);
    context.header(SESSION_ID_HEADER, outcome.result.sessionId);
    return context.json(completionBody({ id, created, model, outcome }));
  });
}
