import * as v from 'valibot';
import type { Warn } from './knobs.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Validates a mapping against a loose object schema. A key whose value does not fit is reported
 * and dropped (so its default applies); the rest of the section is kept.
 */
export function parseLenient<TSchema extends v.GenericSchema<unknown, Record<string, unknown>>>(
  schema: TSchema,
  value: unknown,
  where: string,
  warn: Warn,
): v.InferOutput<TSchema> {
  let current: Record<string, unknown> = {};
  if (isRecord(value)) current = { ...value };
  else if (value !== null && value !== undefined) {
    warn(`${where} must be a mapping; ignored`);
  }
  for (let attempt = 0; attempt <= Object.keys(current).length + 1; attempt++) {
    const result = v.safeParse(schema, current);
    if (result.success) return result.output;
    const issue = result.issues[0];
    const key = issue.path?.[0]?.key;
    if (typeof key !== 'string' || !Object.hasOwn(current, key)) break;
    warn(`${where}.${key}: ${issue.message}; using the default`);
    delete current[key];
  }
  return v.parse(schema, {});
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * A `base_url` as text, kept as written; one that is not an `http:` or `https:` URL is reported
 * (every model call through it fails, with the same words) but not dropped, so the call's error
 * names it too. The value is not repeated: a URL can carry credentials.
 */
export function baseUrlText(value: unknown, where: string, warn: Warn): string {
  const url = text(value);
  if (url === '') return url;
  let valid = false;
  try {
    const { protocol } = new URL(url);
    valid = protocol === 'http:' || protocol === 'https:';
  } catch {
    // Not a URL at all.
  }
  if (!valid) warn(`${where} is not a valid http(s) URL`);
  return url;
}
