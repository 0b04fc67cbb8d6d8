import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted tool call the model "makes". `arguments` objects are JSON-encoded for you. */
export interface ScriptedToolCall {
  readonly id?: string;
  readonly name: string;
  readonly arguments?: unknown;
}

export interface ScriptedUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Reported as `prompt_tokens_details.cached_tokens` (`input_tokens_details` on /v1/responses). */
  readonly cachedTokens?: number;
  /** Reported as `completion_tokens_details.reasoning_tokens` (`output_tokens_details`). */
  readonly reasoningTokens?: number;
}

/** What the server answers to one model request. */
export type ScriptedReply =
  | {
      readonly text?: string;
      readonly toolCalls?: readonly ScriptedToolCall[];
      readonly reasoning?: string;
      readonly usage?: ScriptedUsage;
      /** Delay before the response starts. */
      readonly delayMs?: number;
      /** Delay between streamed chunks. */
      readonly chunkDelayMs?: number;
      /** Characters per streamed text delta (default 8). */
      readonly chunkSize?: number;
    }
  | {
      readonly error: {
        readonly status: number;
        readonly message?: string;
        readonly type?: string;
        readonly code?: string;
        /** Sent as `Retry-After` (seconds), e.g. with a 429. */
        readonly retryAfterS?: number;
      };
      readonly delayMs?: number;
    }
  | {
      /** Destroys the connection without answering (the client sees a connection reset). */
      readonly reset: true;
      readonly delayMs?: number;
    };

export type ScriptedTurn =
  | ScriptedReply
  | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (or the raw text when it was not JSON; `undefined` for no body). */
  readonly body: unknown;
}

export interface ModelServerOptions {
  /** Replies, consumed in order, one per `/v1/chat/completions` or `/v1/responses` request. */
  readonly script?: readonly ScriptedTurn[];
  /** Ids listed by `/v1/models` (default `['test-model']`). */
  readonly models?: readonly string[];
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  readonly apiKey?: string;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v1` — what an OpenAI client takes as `baseURL`. */
  readonly baseUrl: string;
  /** Every request received, in arrival order (model calls and `/v1/models` alike). */
  readonly requests: readonly RecordedRequest[];
  /** Model calls only (`/v1/chat/completions`, `/v1/responses`). */
  readonly modelRequests: readonly RecordedRequest[];
  /** Appends replies to the script. */
  push(...turns: ScriptedTurn[]): void;
  /** Replies not consumed yet. */
  readonly remaining: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text).toString(),
    ...headers,
  });
  response.end(text);
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  type = 'invalid_request_error',
  code?: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    response,
    status,
    { error: { message, type, param: null, code: code ?? null } },
    headers,
  );
}

function id(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

function toolArguments(call: ScriptedToolCall): string {
  if (call.arguments === undefined) return '{}';
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function splitText(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let index = 0; index < text.length; index += size)
    parts.push(text.slice(index, index + size));
  return parts;
}

type Reply = Exclude<ScriptedReply, { error: unknown } | { reset: true }>;

function usageOf(reply: Reply) {
  const usage = reply.usage ?? { promptTokens: 10, completionTokens: 5 };
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}

function chatCompletion(reply: Reply, model: string) {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? id('call'),
    type: 'function' as const,
    function: { name: call.name, arguments: toolArguments(call) },
  }));
  return {
    id: id('chatcmpl'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? (toolCalls.length > 0 ? null : ''),
          ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageOf(reply),
  };
}

async function streamChatCompletion(
  response: ServerResponse,
  reply: Reply,
  model: string,
  includeUsage: boolean,
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const base = {
    id: id('chatcmpl'),
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const send = async (delta: Record<string, unknown>, finishReason: string | null = null) => {
    response.write(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`,
    );
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  };
  await send({ role: 'assistant', content: '' });
  const size = Math.max(1, reply.chunkSize ?? 8);
  if (reply.reasoning)
    for (const part of splitText(reply.reasoning, size)) await send({ reasoning_content: part });
  if (reply.text) for (const part of splitText(reply.text, size)) await send({ content: part });
  const calls = reply.toolCalls ?? [];
  for (const [index, call] of calls.entries()) {
    const args = toolArguments(call);
    await send({
      tool_calls: [
        {
          index,
          id: call.id ?? id('call'),
          type: 'function',
          function: { name: call.name, arguments: '' },
        },
      ],
    });
    for (const part of splitText(args, size))
      await send({ tool_calls: [{ index, function: { arguments: part } }] });
  }
  await send({}, calls.length > 0 ? 'tool_calls' : 'stop');
  if (includeUsage)
    response.write(`data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(reply) })}\n\n`);
  response.end('data: [DONE]\n\n');
}

function responsesObject(reply: Reply, model: string) {
  const output: unknown[] = [];
  if (reply.reasoning !== undefined) {
    output.push({
      type: 'reasoning',
      id: id('rs'),
      summary: [{ type: 'summary_text', text: reply.reasoning }],
      encrypted_content: `enc_${Buffer.from(reply.reasoning).toString('base64')}`,
    });
  }
  if (reply.text !== undefined) {
    output.push({
      type: 'message',
      id: id('msg'),
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  for (const call of reply.toolCalls ?? []) {
    output.push({
      type: 'function_call',
      id: id('fc'),
      call_id: call.id ?? id('call'),
      name: call.name,
      arguments: toolArguments(call),
      status: 'completed',
    });
  }
  const usage = usageOf(reply);
  return {
    id: id('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model,
    output,
    output_text: reply.text ?? '',
    usage: {
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens,
      input_tokens_details: { cached_tokens: reply.usage?.cachedTokens ?? 0 },
      output_tokens_details: { reasoning_tokens: reply.usage?.reasoningTokens ?? 0 },
    },
  };
}

async function streamResponses(
  response: ServerResponse,
  reply: Reply,
  model: string,
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const final = responsesObject(reply, model);
  let sequence = 0;
  const send = async (type: string, payload: Record<string, unknown>) => {
    response.write(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`,
    );
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  };
  await send('response.created', { response: { ...final, status: 'in_progress', output: [] } });
  if (reply.reasoning) {
    for (const part of splitText(reply.reasoning, Math.max(1, reply.chunkSize ?? 8))) {
      await send('response.reasoning_summary_text.delta', {
        item_id: 'rs',
        output_index: 0,
        summary_index: 0,
        delta: part,
      });
    }
  }
  if (reply.text) {
    for (const part of splitText(reply.text, Math.max(1, reply.chunkSize ?? 8))) {
      await send('response.output_text.delta', {
        item_id: 'msg',
        output_index: 0,
        content_index: 0,
        delta: part,
      });
    }
  }
  for (const [index, item] of final.output.entries()) {
    const entry = item as { type?: string };
    if (entry.type === 'function_call')
      await send('response.output_item.done', { output_index: index, item });
  }
  await send('response.completed', { response: final });
  response.end();
}

/**
 * A real OpenAI-compatible HTTP server on 127.0.0.1 that answers model calls from a script, turn
 * by turn, and records every request. The one stand-in the test suite allows: the model provider.
 */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const script: ScriptedTurn[] = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const modelRequests: RecordedRequest[] = [];
  const models = options.models ?? ['test-model'];

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const text = await readBody(request);
    let body: unknown;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: { ...request.headers },
      body,
    };
    requests.push(recorded);

    if (
      options.apiKey !== undefined &&
      request.headers.authorization !== `Bearer ${options.apiKey}`
    ) {
      sendError(
        response,
        401,
        'Incorrect API key provided.',
        'invalid_request_error',
        'invalid_api_key',
      );
      return;
    }
    if (request.method === 'GET' && url.pathname === '/v1/models') {
      sendJson(response, 200, {
        object: 'list',
        data: models.map((model) => ({
          id: model,
          object: 'model',
          created: 0,
          owned_by: 'testkit',
        })),
      });
      return;
    }
    const isChat = url.pathname === '/v1/chat/completions';
    const isResponses = url.pathname === '/v1/responses';
    if (request.method !== 'POST' || (!isChat && !isResponses)) {
      sendError(
        response,
        404,
        `Unknown route ${request.method} ${url.pathname}`,
        'invalid_request_error',
        'unknown_url',
      );
      return;
    }
    if (typeof body !== 'object' || body === null) {
      sendError(response, 400, 'Request body must be a JSON object.');
      return;
    }
    modelRequests.push(recorded);
    const next = script.shift();
    if (next === undefined) {
      sendError(
        response,
        500,
        `model server script exhausted after ${modelRequests.length - 1} replies`,
        'server_error',
        'script_exhausted',
      );
      return;
    }
    const reply = typeof next === 'function' ? await next(recorded) : next;
    if (reply.delayMs) await sleep(reply.delayMs);
    if ('reset' in reply) {
      request.socket.destroy();
      return;
    }
    if ('error' in reply) {
      const headers: Record<string, string> =
        reply.error.retryAfterS !== undefined
          ? { 'retry-after': String(reply.error.retryAfterS) }
          : {};
      sendError(
        response,
        reply.error.status,
        reply.error.message ?? `scripted ${reply.error.status}`,
        reply.error.type ?? (reply.error.status >= 500 ? 'server_error' : 'invalid_request_error'),
        reply.error.code,
        headers,
      );
      return;
    }
    const payload = body as {
      model?: unknown;
      stream?: unknown;
      stream_options?: { include_usage?: unknown };
    };
    const model = typeof payload.model === 'string' ? payload.model : (models[0] ?? 'test-model');
    if (isChat) {
      if (payload.stream === true)
        await streamChatCompletion(
          response,
          reply,
          model,
          payload.stream_options?.include_usage === true,
        );
      else sendJson(response, 200, chatCompletion(reply, model));
    } else if (payload.stream === true) await streamResponses(response, reply, model);
    else sendJson(response, 200, responsesObject(reply, model));
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendError(
          response,
          500,
          error instanceof Error ? error.message : String(error),
          'server_error',
        );
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    modelRequests,
    push: (...turns) => {
      script.push(...turns);
    },
    get remaining() {
      return script.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
