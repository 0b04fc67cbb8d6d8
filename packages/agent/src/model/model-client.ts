import OpenAI from 'openai';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import {
  runChatCompletions,
  type TransportCallbacks,
  type TransportRequest,
} from './chat-completions-transport.js';
import { type ChatMessage, emptyModelTurn, type ModelTurn } from './chat-message.js';
import {
  type DirectEndpoint,
  directEndpoint,
  runDirectChatCompletions,
} from './direct-chat-completions.js';
import type { FunctionSchema } from './function-schema.js';
import { describeRoute, type ModelRoute } from './model-route.js';
import { fetchForBaseUrl, isPlainHttpBaseUrl, sharedPlainHttpAgent } from './plain-http-fetch.js';
import { runResponses } from './responses-transport.js';
import {
  abortableSleep,
  classifyFailure,
  MAX_RETRY_AFTER_MS,
  retryDelayMs,
} from './retry-policy.js';

/** Something the model client reports while it works (retries, fallbacks). */
export type ModelClientNotice =
  | {
      readonly type: 'model.retry';
      readonly provider: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: string;
    }
  | {
      readonly type: 'model.fallback';
      readonly from: string;
      readonly to: string;
      readonly reason: string;
    };

export interface ModelClientOptions {
  /** The main route first, then the fallback chain in order. */
  readonly routes: readonly ModelRoute[];
  /** Retries per route after the first attempt (default 2). */
  readonly maxRetries?: number;
  readonly stream?: boolean;
  readonly onNotice?: (notice: ModelClientNotice) => void;
  /** Injected for tests of the backoff arithmetic; defaults to an abortable timer. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface CompleteOptions {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly FunctionSchema[];
  readonly signal?: AbortSignal;
  readonly sessionId?: string;
  readonly onTextDelta?: (text: string) => void;
  readonly onReasoningDelta?: (text: string) => void;
  /**
   * Receives what was produced so far; read it after an abort for the partial reply. Whatever the
   * call ends with, its `usage.apiCalls` is the number of requests it sent (retries and
   * fallbacks included).
   */
  readonly turn?: ModelTurn;
  /** This call's retries and fallbacks (instead of the client's `onNotice`). */
  readonly onNotice?: (notice: ModelClientNotice) => void;
}

export interface CompleteResult {
  readonly turn: ModelTurn;
  /** The route that answered (the main one, or a fallback). */
  readonly route: ModelRoute;
}

export interface ModelClient {
  readonly routes: readonly ModelRoute[];
  complete(options: CompleteOptions): Promise<CompleteResult>;
}

/**
 * Calls the model: retries 429, 5xx and connection failures with jittered backoff (honouring
 * `Retry-After`), then moves down the fallback chain. A 4xx that is not worth retrying ends the
 * call with the provider's own message. A failure after text has already streamed is not retried
 * (the surface has shown it).
 *
 * Chat-completions calls to a plain-`http:` base URL (a local model server) go straight over
 * `node:http` (`runDirectChatCompletions`): the SDK's request, parsed to the same turn, failing
 * with the SDK's errors. `https:` providers and the Responses API go through the official
 * `openai` SDK (its own retries off).
 */
export function createModelClient(options: ModelClientOptions): ModelClient {
  return buildModelClient(options, { direct: true });
}

/**
 * A model client that sends every call through the `openai` SDK, plain-http chat completions too:
 * the baseline the direct transport is tested and measured against. Not exported by the package.
 */
export function createSdkModelClient(options: ModelClientOptions): ModelClient {
  return buildModelClient(options, { direct: false });
}

type Transport = (
  request: TransportRequest,
  turn: ModelTurn,
  callbacks: TransportCallbacks,
) => Promise<void>;

function buildModelClient(
  options: ModelClientOptions,
  { direct }: { direct: boolean },
): ModelClient {
  if (options.routes.length === 0)
    throw new TypeError('createModelClient needs at least one route');
  const clients = new Map<string, OpenAI>();
  const endpoints = new Map<string, DirectEndpoint>();
  const maxRetries = options.maxRetries ?? 2;
  const sleep = options.sleep ?? abortableSleep;
  const clientFor = (route: ModelRoute) => {
    const key = `${route.baseUrl}\u0000${route.apiKey}`;
    let client = clients.get(key);
    if (!client) {
      // Plain-http servers (local models) go over node:http; https keeps the SDK's default fetch.
      const fetch = fetchForBaseUrl(route.baseUrl);
      client = new OpenAI({
        apiKey: route.apiKey,
        baseURL: route.baseUrl,
        maxRetries: 0,
        ...(fetch ? { fetch } : {}),
      });
      clients.set(key, client);
    }
    return client;
  };
  const endpointFor = async (route: ModelRoute) => {
    const key = `${route.baseUrl}\u0000${route.apiKey}\u0000${route.timeoutS ?? ''}`;
    let endpoint = endpoints.get(key);
    if (!endpoint) {
      endpoint = await directEndpoint(clientFor(route), route, sharedPlainHttpAgent());
      endpoints.set(key, endpoint);
    }
    return endpoint;
  };
  const transportFor = (route: ModelRoute): Transport => {
    if (route.apiMode === 'codex_responses')
      return (request, turn, callbacks) => runResponses(clientFor(route), request, turn, callbacks);
    if (direct && isPlainHttpBaseUrl(route.baseUrl))
      return async (request, turn, callbacks) =>
        runDirectChatCompletions(await endpointFor(route), request, turn, callbacks);
    return (request, turn, callbacks) =>
      runChatCompletions(clientFor(route), request, turn, callbacks);
  };

  const complete = async (call: CompleteOptions): Promise<CompleteResult> => {
    const turn = call.turn ?? emptyModelTurn();
    let sent = 0;
    try {
      return await attempts(call, turn, () => {
        sent += 1;
      });
    } finally {
      // Every request made counts — retries and fallbacks, and whether it was answered, failed
      // or stopped — a provider may bill (and rate-limits) each.
      turn.usage = { ...turn.usage, apiCalls: sent };
    }
  };

  const attempts = async (
    call: CompleteOptions,
    turn: ModelTurn,
    onSend: () => void,
  ): Promise<CompleteResult> => {
    const onNotice = call.onNotice ?? options.onNotice;
    let lastDetail = '';
    for (const [routeIndex, route] of options.routes.entries()) {
      if (routeIndex > 0) {
        onNotice?.({
          type: 'model.fallback',
          from: options.routes[routeIndex - 1]?.provider ?? '',
          to: route.provider,
          reason: lastDetail,
        });
      }
      for (let attempt = 0; attempt <= maxRetries; attempt += 1) {
        Object.assign(turn, emptyModelTurn());
        let streamed = false;
        const request: TransportRequest = {
          route,
          messages: call.messages,
          tools: call.tools ?? [],
          stream: options.stream ?? true,
          ...(call.sessionId ? { sessionId: call.sessionId } : {}),
        };
        // One controller per call, linked to the turn's signal and unlinked afterwards: the SDK
        // leaves its listener on the signal it is given, which would pile up over a long turn.
        const controller = new AbortController();
        const forwardAbort = () => controller.abort(call.signal?.reason);
        if (call.signal?.aborted) forwardAbort();
        else call.signal?.addEventListener('abort', forwardAbort, { once: true });
        try {
          const transport = transportFor(route);
          // A request the signal stopped before it left is not sent (neither transport sends it).
          if (!controller.signal.aborted) onSend();
          await transport(request, turn, {
            signal: controller.signal,
            onTextDelta: (text) => {
              streamed = true;
              call.onTextDelta?.(text);
            },
            onReasoningDelta: (text) => {
              streamed = true;
              call.onReasoningDelta?.(text);
            },
          });
          // The SDK ends a stream quietly when its signal aborts: a short reply is not a reply.
          if (call.signal?.aborted)
            throw new AgentError({
              code: 'interrupted',
              message: AGENT_ERROR_MESSAGES.interrupted,
              provider: route.provider,
            });
          call.signal?.removeEventListener('abort', forwardAbort);
          return { turn, route };
        } catch (error) {
          call.signal?.removeEventListener('abort', forwardAbort);
          if (AgentError.isInstance(error)) throw error;
          const failure = classifyFailure(error, call.signal);
          if (failure.aborted)
            throw new AgentError({
              code: 'interrupted',
              message: AGENT_ERROR_MESSAGES.interrupted,
              cause: error,
              provider: route.provider,
            });
          lastDetail =
            failure.status === undefined ? failure.message : `${failure.status} ${failure.message}`;
          if (!failure.retryable || streamed) {
            throw new AgentError({
              code: 'provider_error',
              message: failure.message,
              cause: error,
              provider: route.provider,
              ...(failure.status === undefined ? {} : { status: failure.status }),
            });
          }
          const tooLong =
            failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS;
          if (attempt === maxRetries || tooLong) break;
          const delayMs = retryDelayMs(attempt + 1, failure.retryAfterMs);
          onNotice?.({
            type: 'model.retry',
            provider: route.provider,
            attempt: attempt + 1,
            delayMs,
            reason: lastDetail,
          });
          try {
            await sleep(delayMs, call.signal);
          } catch (abort) {
            throw new AgentError({
              code: 'interrupted',
              message: AGENT_ERROR_MESSAGES.interrupted,
              cause: abort,
              provider: route.provider,
            });
          }
        }
      }
    }
    const main = options.routes[0] as ModelRoute;
    throw new AgentError({
      code: 'provider_unavailable',
      message: AGENT_ERROR_MESSAGES.providerUnavailable(main.provider, lastDetail),
      provider: main.provider,
    });
  };

  return { routes: options.routes, complete };
}

export { describeRoute };
