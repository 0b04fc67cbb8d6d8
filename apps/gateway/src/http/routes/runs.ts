import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import type { RunEvent, RunRecord } from '../../runtime/run-registry.js';
import { readJsonBody } from '../body.js';
import {
  commandRuntime,
  createChatEventRenderer,
  runStatusOf,
  turnRuntime,
  usageResponse,
} from '../chat-events.js';
import { resolveApiSession } from '../conversation-input.js';
import { errorBody, HttpError, streamedFailure } from '../errors.js';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';
import { eventStream } from '../sse.js';
import { requireSessionRow, storeOf } from './sessions.js';

const RunRequestSchema = v.looseObject({
  input: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => text.trim() !== '', 'must not be empty'),
    ),
  ),
  message: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => text.trim() !== '', 'must not be empty'),
    ),
  ),
  session_id: v.optional(v.string()),
  instructions: v.optional(v.nullable(v.string())),
});

const IDEMPOTENCY_KEY_MAX = 256;

function runResponse(run: RunRecord) {
  return {
    id: run.id,
    object: 'hermes.run',
    status: run.status,
    session_id: run.sessionId,
    created_at: run.createdAt,
    completed_at: run.completedAt,
    output: run.output,
    error: run.error,
    usage: run.usage,
    messages: run.messages,
    runtime: run.runtime,
  };
}

function notFound(id: string): HttpError {
  return new HttpError({ status: 404, code: 'run_not_found', message: `Run not found: ${id}` });
}

export function registerRunRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.post('/v1/runs', async (context) => {
    const body = await readJsonBody(context, RunRequestSchema, { limit: deps.maxRequestBytes });
    const prompt = body.input ?? body.message;
    if (prompt === undefined) {
      throw new HttpError({
        status: 400,
        code: 'invalid_request',
        message: "'input' is required",
        param: 'input',
      });
    }
    const runtime = context.get('runtime');
    const key = context.req.header('idempotency-key');
    if (key !== undefined && (key === '' || key.length > IDEMPOTENCY_KEY_MAX)) {
      throw new HttpError({
        status: 400,
        code: 'invalid_request',
        message: `Idempotency-Key must be 1-${IDEMPOTENCY_KEY_MAX} characters`,
      });
    }
    if (key === undefined) return startRun(context, deps, { body, prompt });
    // Held until this request answers: a second one with the key waits, then gets this run (or,
    // after a refusal, starts its own), so simultaneous retries never start two.
    const claim = await deps.runs.claimIdempotencyKey(runtime.name, key);
    if ('existing' in claim) return context.json(runResponse(claim.existing), 200);
    try {
      return await startRun(context, deps, { body, prompt, key });
    } finally {
      claim.release();
    }
  });

  app.get('/v1/runs/:id', (context) => {
    const run = deps.runs.get(context.get('runtime').name, context.req.param('id'));
    if (!run) throw notFound(context.req.param('id'));
    return context.json(runResponse(run));
  });

  app.get('/v1/runs/:id/events', (context) => {
    const run = deps.runs.get(context.get('runtime').name, context.req.param('id'));
    if (!run) throw notFound(context.req.param('id'));
    return eventStream(context, { keepaliveMs: deps.keepalive.apiStreamMs }, async (sink) => {
      const replay = [...run.events];
      if (run.status === 'running') {
        await new Promise<void>((resolve) => {
          const listener = (event: RunEvent | null) => {
            if (event === null) {
              run.listeners.delete(listener);
              resolve();
            } else void sink.send(event.data, event.event);
          };
          // Replay what happened so far, then follow live (synchronously, so nothing is missed).
          for (const event of replay) void sink.send(event.data, event.event);
          run.listeners.add(listener);
          sink.onAbort(() => {
            run.listeners.delete(listener);
            resolve();
          });
        });
      } else {
        for (const event of replay) void sink.send(event.data, event.event);
      }
      await sink.send({ run_id: run.id, status: run.status }, 'done');
    });
  });

  app.post('/v1/runs/:id/stop', (context) => {
    const run = deps.runs.get(context.get('runtime').name, context.req.param('id'));
    if (!run) throw notFound(context.req.param('id'));
    if (run.status === 'running') run.controller.abort(new Error('stopped by /v1/runs/:id/stop'));
    return context.json({ ...runResponse(run), stopping: run.status === 'running' });
  });
}

/**
 * Starts a run: its conversation, the run record (under `key` when given) and the turn or command,
 * answering 202 once the turn has started or the command answered, or the refusal before that.
 */
async function startRun(
  context: Context<GatewayEnv>,
  deps: GatewayDeps,
  input: { body: v.InferOutput<typeof RunRequestSchema>; prompt: string; key?: string },
): Promise<Response> {
  const { body, prompt, key } = input;
  const runtime = context.get('runtime');
  deps.turns.assertAdmitting();
  const store = await storeOf(context);
  const resolved =
    body.session_id !== undefined
      ? { session: requireSessionRow(store, body.session_id), created: false }
      : await resolveApiSession(context, store, []);
  const { session } = resolved;
  const run = deps.runs.create({
    profile: runtime.name,
    sessionId: session.id,
    ...(key !== undefined ? { idempotencyKey: key } : {}),
  });
  const emit = (event: string, data: unknown) =>
    deps.runs.emit(run, event, { ...(data as Record<string, unknown>), run_id: run.id });
  // The 202 waits for the turn to start (its lease taken, the message stored) or for a command
  // to answer, so a refusal before that (a busy session, no model) is answered as what it is,
  // as `wait: false` chat does, instead of as a run that failed at once.
  let admitted = false;
  let admit: () => void = () => {};
  const admission = new Promise<void>((resolve) => {
    admit = () => {
      admitted = true;
      resolve();
    };
  });
  const renderEvent = createChatEventRenderer(emit);

  const execute = async () => {
    try {
      const reply = await deps.slash.handle({ runtime, sessionId: session.id, message: prompt });
      if (reply) {
        admit();
        run.output = reply.text;
        run.runtime = commandRuntime(reply.command);
        emit('assistant.completed', { content: reply.text, message_id: null });
        emit('run.completed', {
          session_id: session.id,
          message_id: null,
          status: 'completed',
          command: reply.command,
          final_response: reply.text,
          messages: [],
          usage: null,
          runtime: run.runtime,
        });
        deps.runs.finish(run, 'completed');
        return;
      }
      const outcome = await deps.runTurn({
        runtime,
        sessionId: session.id,
        message: prompt,
        kind: 'run',
        runId: run.id,
        signal: run.controller.signal,
        onEvent: (event) => {
          if (event.type === 'run.started') admit();
          renderEvent(event);
        },
        ephemeralSystemNote: body.instructions ?? undefined,
      });
      const { result } = outcome;
      run.output = result.finalResponse;
      run.usage = usageResponse(result.usage);
      run.messages = outcome.messages;
      run.error = result.error ?? null;
      run.runtime = turnRuntime(outcome);
      const status = runStatusOf(result);
      emit(`run.${status}`, {
        session_id: result.sessionId,
        message_id: outcome.messageId,
        status,
        // The chat stream's names: the answer on completion, what was said when cancelled.
        ...(status === 'completed'
          ? { final_response: result.finalResponse, exit_reason: result.exitReason }
          : {}),
        ...(status === 'cancelled' ? { partial_response: result.finalResponse } : {}),
        ...(status === 'failed' ? { error: result.error } : {}),
        messages: outcome.messages,
        usage: run.usage,
        runtime: run.runtime,
      });
      deps.runs.finish(run, status);
    } catch (error) {
      const failure = streamedFailure(error, deps.logger, 'run failed', { run: run.id });
      run.error = { code: failure.code, message: failure.message };
      emit('error', errorBody(failure));
      // Refused before it ran (a busy session, no model): no turn, so no runtime.
      emit('run.failed', {
        session_id: session.id,
        message_id: null,
        status: 'failed',
        error: run.error,
        messages: [],
        usage: null,
        runtime: null,
      });
      deps.runs.finish(run, 'failed');
      if (!admitted) throw failure;
    }
  };
  const running = execute();
  try {
    await Promise.race([admission, running]);
  } catch (error) {
    // Nothing ran: a retry with the same Idempotency-Key starts a new run, and a conversation
    // made for this run (still empty, named by no answer) goes again.
    deps.runs.releaseIdempotencyKey(run);
    if (resolved.created && store.getSession(session.id)?.messageCount === 0)
      await store.deleteSession(session.id).catch(() => false);
    throw error;
  }
  running.catch(() => {});
  return context.json(runResponse(run), 202);
}
