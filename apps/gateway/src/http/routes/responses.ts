import { randomBytes } from 'node:crypto';
import {
  forkSession,
  readAllMessages,
  type SessionRecord,
  type SessionStore,
  type StoredResponse,
} from '@hermes/session-store';
import type { Hono } from 'hono';
import * as v from 'valibot';
import type { TurnOutcome } from '../../runtime/turn-runner.js';
import { JsonObjectSchema, looseJsonObject, readJsonBody } from '../body.js';
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
import { newApiSessionId, storeOf } from './sessions.js';

const InputItemSchema = looseJsonObject({
  type: v.optional(v.string()),
  role: v.optional(v.picklist(['system', 'developer', 'user', 'assistant'])),
  content: v.optional(MessageContentSchema),
});

/** The longest response id the store keeps (its `storeResponse` refuses longer ones). */
const RESPONSE_ID_MAX_LENGTH = 256;

/**
 * OpenAI's `metadata`: string values under any keys. `v.record` would skip `__proto__`,
 * `constructor` and `prototype` unchecked and leave them out, so the object is checked and kept
 * as it came (JSON.parse makes such keys plain own properties).
 */
const MetadataSchema = v.pipe(
  JsonObjectSchema,
  v.check(
    (value) => Object.values(value).every((item) => typeof item === 'string'),
    'Invalid type: every value must be a string',
  ),
);

const ResponseRequestSchema = v.looseObject({
  model: v.optional(v.string()),
  input: v.union([
    v.pipe(v.string(), v.minLength(1)),
    v.pipe(v.array(InputItemSchema), v.minLength(1)),
  ]),
  instructions: v.optional(v.nullable(v.string())),
  // "" names no response: refused rather than read as "none" (it would start a new conversation).
  previous_response_id: v.optional(
    v.nullable(v.pipe(v.string(), v.minLength(1, 'must not be empty (omit it or send null)'))),
  ),
  store: v.optional(v.nullable(v.boolean())),
  stream: v.optional(v.nullable(v.boolean())),
  metadata: v.optional(v.nullable(MetadataSchema)),
});

type ResponseRequest = v.InferOutput<typeof ResponseRequestSchema>;

function splitInput(request: ResponseRequest) {
  const system: string[] = request.instructions ? [request.instructions] : [];
  if (typeof request.input === 'string') return { prompt: request.input, system, history: [] };
  const items = request.input.filter((item) => item.type === undefined || item.type === 'message');
  const last = items[items.length - 1];
  if (last?.role !== 'user' || !hasPromptText(last.content)) {
    throw new HttpError({
      status: 400,
      code: 'invalid_request',
      message:
        'The last input item must be a user message with text (images are not sent to the model)',
      param: 'input',
    });
  }
  const history: HistoryMessage[] = [];
  for (const item of items.slice(0, -1)) {
    const text = contentText(item.content);
    if (item.role === 'system' || item.role === 'developer') system.push(text);
    else if (item.role === 'assistant') history.push({ role: 'assistant', content: text });
    else history.push({ role: 'user', content: text });
  }
  return { prompt: contentText(last.content), system, history };
}

/** What `storeResponse` accepts as an id; anything else names no stored response. */
function validResponseId(id: string): boolean {
  return id.length > 0 && id.length <= RESPONSE_ID_MAX_LENGTH;
}

function responseNotFound(id: string, param?: string): HttpError {
  return new HttpError({
    status: 404,
    code: 'response_not_found',
    message: `Response not found: ${id}`,
    ...(param ? { param } : {}),
  });
}

/** A stored response of this profile's store, or undefined (also for an id no response can have). */
function storedResponse(store: SessionStore, id: string): StoredResponse | undefined {
  return validResponseId(id) ? store.getStoredResponse(id) : undefined;
}

function responseId(): string {
  return `resp_${randomBytes(12).toString('hex')}`;
}

function responseBody(input: {
  id: string;
  createdAt: number;
  model: string;
  request: ResponseRequest;
  status: 'in_progress' | 'completed' | 'failed' | 'incomplete';
  text: string;
  outcome?: TurnOutcome;
  sessionId: string;
  error?: { code: string; message: string } | null;
}) {
  const usage = input.outcome?.result.usage;
  const messageId = `msg_${input.id.slice(5)}`;
  return {
    id: input.id,
    object: 'response',
    created_at: input.createdAt,
    status: input.status,
    model: input.model,
    instructions: input.request.instructions ?? null,
    previous_response_id: input.request.previous_response_id ?? null,
    metadata: input.request.metadata ?? {},
    store: input.request.store !== false,
    output:
      input.status === 'in_progress'
        ? []
        : [
            {
              type: 'message',
              id: messageId,
              status: input.status === 'completed' ? 'completed' : 'incomplete',
              role: 'assistant',
              content: [{ type: 'output_text', text: input.text, annotations: [] }],
            },
          ],
    output_text: input.text,
    error: input.error ?? null,
    usage: usage
      ? {
          input_tokens: usage.inputTokens,
          output_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
          input_tokens_details: { cached_tokens: usage.cacheReadTokens },
          output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
        }
      : null,
    hermes: { session_id: input.sessionId },
  };
}

/**
 * The response body of a finished turn, stored in the profile's state.db unless the request
 * said `store: false` or the turn failed (it outlives a restart; the cap holds across processes).
 */
async function finishResponse(
  store: SessionStore,
  input: {
    id: string;
    createdAt: number;
    model: string;
    request: ResponseRequest;
    outcome: TurnOutcome;
  },
) {
  const { id, createdAt, model, request, outcome } = input;
  const failed = outcome.result.status === 'failed';
  const body = responseBody({
    id,
    createdAt,
    model,
    request,
    status: failed
      ? 'failed'
      : outcome.result.status === 'interrupted'
        ? 'incomplete'
        : 'completed',
    text: outcome.result.finalResponse,
    outcome,
    sessionId: outcome.result.sessionId,
    error: failed ? (outcome.result.error ?? null) : null,
  });
  if (!failed) {
    await keepResponse(store, {
      request,
      body,
      sessionId: outcome.result.sessionId,
      lastMessageId: outcome.messageId,
    });
  }
  return body;
}

/**
 * Stores a response (unless the request said `store: false`) with where its conversation stands:
 * `lastMessageId` is what a chained request compares to decide between continuing and branching.
 */
async function keepResponse(
  store: SessionStore,
  input: {
    request: ResponseRequest;
    body: ReturnType<typeof responseBody>;
    sessionId: string;
    lastMessageId: number | null;
  },
): Promise<void> {
  if (input.request.store === false) return;
  await store.storeResponse({
    responseId: input.body.id,
    sessionId: input.sessionId,
    lastMessageId: input.lastMessageId,
    previousResponseId: input.request.previous_response_id ?? null,
    body: input.body,
  });
}

export function registerResponseRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.post('/v1/responses', async (context) => {
    const request = await readJsonBody(context, ResponseRequestSchema, {
      limit: deps.maxRequestBytes,
    });
    const { prompt, system, history } = splitInput(request);
    const runtime = context.get('runtime');
    deps.turns.assertAdmitting();
    const store = await storeOf(context);

    const id = responseId();
    const createdAt = Math.floor(Date.now() / 1000);
    const model = modelNameFor(runtime.name, context.get('prefix') !== '');
    const systemNote = system.filter((text) => text.trim() !== '').join('\n\n') || undefined;

    // A new conversation answered in one piece is created by its turn (see chat completions).
    const fresh =
      request.previous_response_id || request.stream || deps.slash.parse(prompt)
        ? undefined
        : newApiConversation(context, history);
    if (fresh) {
      const outcome = await runNewConversationTurn(deps.runTurn, {
        runtime,
        message: prompt,
        kind: 'api',
        ephemeralSystemNote: systemNote,
        newSession: fresh,
      });
      context.header(SESSION_ID_HEADER, outcome.result.sessionId);
      if (outcome.result.status === 'failed') throw turnFailure(outcome);
      return context.json(await finishResponse(store, { id, createdAt, model, request, outcome }));
    }

    let session: SessionRecord;
    if (request.previous_response_id) {
      const previous = storedResponse(store, request.previous_response_id);
      const previousSession = previous ? store.getSession(previous.sessionId) : undefined;
      if (!previous || !previousSession) {
        throw responseNotFound(request.previous_response_id, 'previous_response_id');
      }
      // Chained from: the last to be pruned. (Before the transcript is read, so nothing is
      // awaited between reading where the conversation stands and acting on it.)
      await store.touchStoredResponse(previous.responseId);
      const tip = store.getCompressionTip(previous.sessionId);
      const rows = readAllMessages(store, tip);
      const lastId = rows[rows.length - 1]?.id ?? null;
      if (tip === previous.sessionId && lastId === previous.lastMessageId) {
        session = previousSession;
      } else {
        // The conversation moved on since that response: branch from where it ended.
        const upTo = rows.findIndex((row) => row.id === previous.lastMessageId);
        ({ child: session } = await forkSession(store, {
          sessionId: tip,
          newChildId: newApiSessionId,
          rows: upTo === -1 ? rows : rows.slice(0, upTo + 1),
          endParent: false,
        }));
      }
    } else {
      ({ session } = await resolveApiSession(context, store, history));
    }

    context.header(SESSION_ID_HEADER, session.id);

    const finish = (outcome: TurnOutcome) =>
      finishResponse(store, { id, createdAt, model, request, outcome });

    const reply = await deps.slash.handle({ runtime, sessionId: session.id, message: prompt });
    // A slash command's answer is the whole response; the model is not called.
    const replyBody = reply
      ? responseBody({
          id,
          createdAt,
          model,
          request,
          status: 'completed',
          text: reply.text,
          sessionId: session.id,
        })
      : undefined;
    if (replyBody) {
      // Stored like a model's answer, so it reads back and chains: a command stores no message,
      // so the conversation stands where it stood before it.
      const tip = store.getCompressionTip(session.id);
      await keepResponse(store, {
        request,
        body: replyBody,
        sessionId: tip,
        lastMessageId: store.getMessages(tip, { order: 'newest', limit: 1 })[0]?.id ?? null,
      });
      if (!request.stream) return context.json(replyBody);
    }

    if (request.stream) {
      return eventStream(
        context,
        { keepaliveMs: deps.keepalive.apiStreamMs, headers: { [SESSION_ID_HEADER]: session.id } },
        async (sink) => {
          let sequence = 0;
          const emit = (type: string, data: Record<string, unknown>) =>
            sink.send({ type, sequence_number: sequence++, ...data }, type);
          const itemId = `msg_${id.slice(5)}`;
          const started = responseBody({
            id,
            createdAt,
            model,
            request,
            status: 'in_progress',
            text: '',
            sessionId: session.id,
          });
          await emit('response.created', { response: started });
          await emit('response.in_progress', { response: started });
          await emit('response.output_item.added', {
            output_index: 0,
            item: {
              type: 'message',
              id: itemId,
              status: 'in_progress',
              role: 'assistant',
              content: [],
            },
          });
          await emit('response.content_part.added', {
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [] },
          });
          const delta = (text: string) =>
            emit('response.output_text.delta', {
              item_id: itemId,
              output_index: 0,
              content_index: 0,
              delta: text,
            });
          let body: ReturnType<typeof responseBody>;
          try {
            if (replyBody) {
              await delta(replyBody.output_text);
              body = replyBody;
            } else {
              const outcome = await deps.runTurn({
                runtime,
                sessionId: session.id,
                message: prompt,
                kind: 'api',
                ephemeralSystemNote: systemNote,
                onEvent: assistantTextDeltas((text) => void delta(text)),
              });
              body = await finish(outcome);
            }
          } catch (error) {
            const failure = streamedFailure(error, deps.logger, 'response stream failed');
            // The Responses API's error event: `type` is the event's own ("error"), not the
            // error body's type, which would hide the event from a client switching on it.
            const { code, message, param } = errorBody(failure).error;
            await emit('error', { code, message, param });
            return;
          }
          const text = body.output_text;
          if (body.status === 'failed') {
            await emit('response.failed', { response: body });
            return;
          }
          await emit('response.output_text.done', {
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            text,
          });
          await emit('response.content_part.done', {
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            part: { type: 'output_text', text, annotations: [] },
          });
          await emit('response.output_item.done', { output_index: 0, item: body.output[0] });
          await emit(body.status === 'completed' ? 'response.completed' : 'response.incomplete', {
            response: body,
          });
        },
      );
    }

    const outcome = await deps.runTurn({
      runtime,
      sessionId: session.id,
      message: prompt,
      kind: 'api',
      ephemeralSystemNote: systemNote,
    });
    if (outcome.result.status === 'failed') throw turnFailure(outcome);
    return context.json(await finish(outcome));
  });

  app.get('/v1/responses/:id', async (context) => {
    const id = context.req.param('id');
    const stored = storedResponse(await storeOf(context), id);
    if (!stored) throw responseNotFound(id);
    return context.json(stored.body);
  });

  app.delete('/v1/responses/:id', async (context) => {
    const id = context.req.param('id');
    const store = await storeOf(context);
    if (!validResponseId(id) || !(await store.deleteStoredResponse(id))) throw responseNotFound(id);
    return context.json({ id, object: 'response', deleted: true });
  });
}
