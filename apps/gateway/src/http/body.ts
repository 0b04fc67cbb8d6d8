import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import * as v from 'valibot';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { HttpError, httpErrors } from './errors.js';

function tooLarge(limit: number): HttpError {
  return new HttpError({
    status: 413,
    code: 'request_too_large',
    message: `Request body exceeds ${limit} bytes (api_server.max_request_bytes)`,
  });
}

/** Refuses a declared `Content-Length` over the limit before anything is read. */
export function assertDeclaredLength(context: Context, limit: number): void {
  const declared = context.req.header('content-length');
  if (declared === undefined) return;
  const length = Number(declared);
  if (Number.isFinite(length) && length > limit) throw tooLarge(limit);
}

/**
 * Collects a Node request body up to `limit` bytes. Past it the rest is discarded as it arrives
 * (never buffered), so the 413 still reaches the client on the same connection.
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        cleanup();
        incoming.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    // A client that goes away mid-body: nothing to answer, but the handler must not wait forever.
    const onClose = () => {
      cleanup();
      reject(
        new HttpError({
          status: 400,
          code: 'request_aborted',
          message: 'Request body was not completed',
        }),
      );
    };
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('error', onError);
    incoming.once('close', onClose);
  });
}

/** Reads the body as UTF-8 text, never more than `limit` bytes of it. */
export async function readCappedText(context: Context, limit: number): Promise<string> {
  assertDeclaredLength(context, limit);
  // Served by @hono/node-server: read the Node request itself (the web-stream adapter copies
  // every chunk), unless something already started reading it.
  const incoming = (context.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming && !incoming.readableDidRead && !incoming.readableEnded) {
    return readIncoming(incoming, limit);
  }
  const body = context.req.raw.body;
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A JSON object. valibot's object and record schemas take an array too (it is an object), as an
 * empty object or one keyed by index: where a field must be an object, an array is refused.
 */
export const JsonObjectSchema = v.custom<Record<string, unknown>>(
  (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
  (issue) =>
    `Invalid type: Expected Object but received ${Array.isArray(issue.input) ? 'Array' : issue.received}`,
);

/** `v.looseObject(entries)` that refuses an array. */
export function looseJsonObject<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  return v.pipe(JsonObjectSchema, v.looseObject(entries));
}

/** The first failing field of a valibot result, as `a.b[2]`. */
export function issuePath(issue: v.BaseIssue<unknown>): string | null {
  const keys = (issue.path ?? []).map((item) => String(item.key));
  return keys.length > 0 ? keys.join('.') : null;
}

/** An issue quotes the value (and names the key) it refused: each is cut to this many characters. */
const ISSUE_TEXT_MAX_CHARS = 200;

/** A refused value (or key) as an error quotes it: cut to `ISSUE_TEXT_MAX_CHARS` characters. */
export function clipQuoted(text: string): string {
  return text.length > ISSUE_TEXT_MAX_CHARS ? `${text.slice(0, ISSUE_TEXT_MAX_CHARS)}…` : text;
}

export function invalidFromIssues(issues: readonly v.BaseIssue<unknown>[]): HttpError {
  const first = issues[0];
  const path = first ? issuePath(first) : null;
  const param = path === null ? null : clipQuoted(path);
  const message = first
    ? param
      ? `Invalid '${param}': ${clipQuoted(first.message)}`
      : `Invalid request body: ${clipQuoted(first.message)}`
    : 'Invalid request body';
  return new HttpError({ status: 400, code: 'invalid_request', message, param });
}

/** A request body's JSON text as a value: 400 `invalid_json`, or `invalid_request` when too deep. */
export function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw httpErrors.invalidJson();
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH))
    throw httpErrors.invalidRequest(`Request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/**
 * Reads and validates a JSON body. An empty body counts as `{}` only when `emptyAsObject`; bad
 * JSON → 400 `invalid_json`; a body that does not match the schema → 400 `invalid_request`
 * naming the first bad field (or JSON nested deeper than `MAX_JSON_DEPTH`); over the limit → 413.
 */
export async function readJsonBody<TSchema extends v.GenericSchema>(
  context: Context,
  schema: TSchema,
  options: { limit: number; emptyAsObject?: boolean },
): Promise<v.InferOutput<TSchema>> {
  const text = await readCappedText(context, options.limit);
  const value = text.trim() === '' && options.emptyAsObject ? {} : parseJsonText(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError({
      status: 400,
      code: 'invalid_request',
      message: 'Request body must be a JSON object',
    });
  }
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) throw invalidFromIssues(parsed.issues);
  return parsed.output;
}

/** Validates a query object (all values strings) against a schema. */
export function parseQuery<TSchema extends v.GenericSchema>(
  context: Context,
  schema: TSchema,
): v.InferOutput<TSchema> {
  const parsed = v.safeParse(schema, context.req.query());
  if (!parsed.success) throw invalidFromIssues(parsed.issues);
  return parsed.output;
}
