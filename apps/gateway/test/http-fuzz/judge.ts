import { isDeepStrictEqual } from 'node:util';
import type Database from 'better-sqlite3';
import { parseEvents } from '../gateway-process.js';
import type { WireRequest, WireResponse } from './client.js';
import type { FuzzCase } from './mutations.js';
import type { RawProbe } from './raw-probes.js';

/** The body of a request addressed to a profile the gateway does not serve (documented as is). */
export const PROFILE_REFUSAL = { error: 'Unknown or unconfigured profile' };

/** What the store holds: every session row, the transcript size, stored responses, leases. */
export interface StoreSnapshot {
  readonly sessions: unknown[];
  readonly messages: unknown;
  readonly responses: unknown[];
  readonly leases: unknown;
}

export function snapshotStore(database: Database.Database): StoreSnapshot {
  return {
    sessions: database.prepare('SELECT * FROM sessions ORDER BY id').all(),
    messages: database.prepare('SELECT count(*) AS count, max(id) AS last FROM messages').get(),
    responses: database
      .prepare('SELECT response_id FROM stored_responses ORDER BY response_id')
      .pluck()
      .all(),
    leases: database.prepare('SELECT count(*) FROM session_turn_leases').pluck().get(),
  };
}

/**
 * Snapshots of the store, taken again only when another connection has committed since the last
 * one (SQLite's `data_version`): a refusal that wrote nothing costs one pragma.
 */
export class StoreWatch {
  readonly #database: Database.Database;
  readonly #version: Database.Statement;
  #cached: { version: unknown; snapshot: StoreSnapshot } | undefined;

  constructor(database: Database.Database) {
    this.#database = database;
    this.#version = database.prepare('PRAGMA data_version');
  }

  current(): StoreSnapshot {
    const version = this.#version.pluck().get();
    const cached = this.#cached;
    if (cached !== undefined && cached.version === version) return cached.snapshot;
    const snapshot = snapshotStore(this.#database);
    this.#cached = { version, snapshot };
    return snapshot;
  }
}

/** The first difference between two snapshots, for the report. */
export function snapshotDifference(before: StoreSnapshot, after: StoreSnapshot): string | null {
  if (before.sessions.length !== after.sessions.length)
    return `sessions ${before.sessions.length} → ${after.sessions.length}`;
  for (const [index, row] of before.sessions.entries()) {
    const other = after.sessions[index];
    if (!isDeepStrictEqual(row, other))
      return `session row changed: ${JSON.stringify(row)} → ${JSON.stringify(other)}`;
  }
  if (!isDeepStrictEqual(before.messages, after.messages))
    return `messages ${JSON.stringify(before.messages)} → ${JSON.stringify(after.messages)}`;
  if (!isDeepStrictEqual(before.responses, after.responses))
    return `stored responses ${before.responses.length} → ${after.responses.length}`;
  if (before.leases !== after.leases) return `turn leases ${before.leases} → ${after.leases}`;
  return null;
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** Problems with an error body: the OpenAI shape `{error: {message, type, param, code}}`. */
export function errorShapeProblems(value: unknown): string[] {
  const error = (value as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return ['no error object'];
  const fields = error as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof fields.message !== 'string' || fields.message === '') problems.push('no message');
  if (typeof fields.type !== 'string' || fields.type === '') problems.push('no type');
  if (!(fields.param === null || typeof fields.param === 'string'))
    problems.push('param neither null nor a string');
  if (typeof fields.code !== 'string' || fields.code === '') problems.push('no code');
  return problems;
}

/** The events a stream ends with (chat completions end with `data: [DONE]`). */
const TERMINAL_EVENTS = new Set([
  'done',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'error',
]);

/**
 * A streamed answer carries its failures inside: an `error` event (chat stream, runs, Responses)
 * or a `data: {"error": …}` line (chat completions). With a healthy model there must be none
 * that is a server error, and each must name its code.
 */
function streamProblems(text: string, failureAllowed: boolean): string[] {
  const problems: string[] = [];
  // Comments (keep-alives) are no events.
  const events = parseEvents(text).filter(({ event }) => event !== ':');
  // Every stream ends by saying so: a stream cut short (a handler that threw) is no answer.
  const last = events[events.length - 1];
  if (!last || !(TERMINAL_EVENTS.has(last.event) || last.data === '[DONE]'))
    problems.push(`stream ended without its last event (after ${last ? last.event : 'nothing'})`);
  for (const { event, data } of events) {
    if (data === '[DONE]') continue;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      problems.push(`stream event ${event} is not JSON: ${data.slice(0, 100)}`);
      continue;
    }
    const record = value as Record<string, unknown>;
    const failure =
      event === 'error' || event === 'run.failed' || event === 'response.failed'
        ? record
        : record.error !== undefined
          ? record
          : undefined;
    if (!failure) continue;
    const nested = (failure.error ?? failure) as Record<string, unknown> | string;
    const code =
      typeof nested === 'object' && nested !== null
        ? (nested.code ??
          (nested as { response?: { error?: { code?: unknown } } }).response?.error?.code)
        : undefined;
    // A turn whose model failed may end so, with the code that says why.
    if (failureAllowed && typeof code === 'string' && code !== '' && code !== 'internal_error')
      continue;
    problems.push(`stream failed (${event}): code ${String(code)}: ${data.slice(0, 200)}`);
  }
  return problems;
}

/** Everything wrong with one answer; empty when it keeps the contract. */
export function judgeAnswer(input: {
  fuzzCase: FuzzCase;
  response: WireResponse;
  storeChange: string | null;
  /** The model was told to fail this request's turns: a 502 (the provider failed) is its answer. */
  modelFailed: boolean;
}): string[] {
  const { fuzzCase, response, storeChange, modelFailed } = input;
  const { status } = response;
  const problems: string[] = [];
  if (status >= 500 && !(modelFailed && status === 502)) problems.push(`server error ${status}`);
  const ok = status >= 200 && status < 400;
  if (ok && fuzzCase.verdict === 'reject')
    problems.push(`answered ${status} to a request the contract refuses`);
  if (
    status >= 400 &&
    status < 500 &&
    fuzzCase.verdict === 'accept' &&
    !(status === 429 && fuzzCase.template.rateLimited)
  )
    problems.push(`refused a valid request with ${status}`);
  const contentType = String(response.headers['content-type'] ?? '');
  const headless = fuzzCase.request.method === 'HEAD' || status === 304;
  if (status >= 400 && !headless) {
    const parsed = parseJson(response.body);
    if (!parsed.ok) problems.push('error body is not JSON');
    else if (isDeepStrictEqual(parsed.value, PROFILE_REFUSAL)) {
      if (status !== 404 || !fuzzCase.request.path.startsWith('/p/'))
        problems.push(`profile refusal with status ${status} on ${fuzzCase.request.path}`);
      if (fuzzCase.profileServed) problems.push('a profile the gateway serves answered as unknown');
    } else {
      if (fuzzCase.profileRefused) problems.push('an unknown profile answered something else');
      problems.push(
        ...errorShapeProblems(parsed.value).map((problem) => `error shape: ${problem}`),
      );
      const code = (parsed.value as { error?: { code?: unknown } }).error?.code;
      if (code === 'internal_error') problems.push('internal_error code');
    }
  }
  if (status >= 400 && storeChange) problems.push(`refused, yet the store changed: ${storeChange}`);
  if (status >= 200 && status < 300 && !headless) {
    if (contentType.startsWith('text/event-stream'))
      // A replay (GET) shows a run that failed earlier, when the model was told to fail it.
      problems.push(
        ...streamProblems(
          response.body.toString('utf8'),
          modelFailed || fuzzCase.request.method === 'GET',
        ),
      );
    else if (contentType.startsWith('application/json') && !parseJson(response.body).ok)
      problems.push('2xx body is not JSON');
  }
  return problems;
}

/** A request and its answer, short enough to read in a test report, under a first line. */
export function describeWire(
  title: string,
  request: WireRequest,
  response: WireResponse | string,
  limits: { readonly path: number; readonly body: number; readonly answer: number },
): string {
  const clip = (text: string, max: number) =>
    text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${clip(JSON.stringify(value), 120)}`)
    .join('; ');
  const body =
    request.body === undefined
      ? '(none)'
      : clip(JSON.stringify(request.body.toString('latin1')), limits.body);
  const answer =
    typeof response === 'string'
      ? response
      : `${response.status} ${clip(response.body.toString('utf8'), limits.answer)}`;
  return [
    title,
    `  ${request.method} ${clip(request.path, limits.path)}${request.chunked ? ' (chunked)' : ''}`,
    `  headers ${headers}`,
    `  body ${body}`,
    `  → ${answer}`,
  ].join('\n');
}

/** A request and its answer, short enough to read in a test report. */
export function describeExchange(fuzzCase: FuzzCase, response: WireResponse | string): string {
  return describeWire(
    `#${fuzzCase.index} ${fuzzCase.template.name} [${fuzzCase.mutations.join(' | ') || 'valid'}] expect ${fuzzCase.verdict}`,
    fuzzCase.request,
    response,
    { path: 300, body: 400, answer: 500 },
  );
}

/** Everything wrong with what a raw probe got back (each answer on its connection). */
export function rawAnswerProblems(
  probe: RawProbe,
  responses: readonly { status: number; body: string }[],
): string[] {
  const problems: string[] = [];
  const first = responses[0];
  if (probe.expect === 'error' && !(first && first.status >= 400 && first.status < 500))
    problems.push(`expected a 4xx, got ${first ? first.status : 'no answer'}`);
  for (const { status, body } of responses) {
    if (status >= 500) problems.push(`server error ${status}`);
    if (status < 400) continue;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      problems.push(`${status} error body is not JSON: ${JSON.stringify(body.slice(0, 100))}`);
      continue;
    }
    problems.push(
      ...errorShapeProblems(value).map((problem) => `${status} error shape: ${problem}`),
    );
  }
  return problems;
}
