import * as v from 'valibot';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';

/** Throws `invalid_argument` naming the first offending field (`what.field`). */
export function parseInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  value: unknown,
  what: string,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = v.getDotPath(issue);
  throw new SessionStoreError({
    code: 'invalid_argument',
    message: ERROR_MESSAGES.invalidArgument(
      path ? `${what}.${path}` : what,
      issue.expected ? `${issue.expected} (${issue.message})` : issue.message,
    ),
  });
}

export const NonNegativeInteger = v.pipe(
  v.number(),
  v.integer('a whole number'),
  v.minValue(0, 'at least 0'),
  v.maxValue(Number.MAX_SAFE_INTEGER),
);

export const NonNegativeNumber = v.pipe(
  v.number(),
  v.finite('a finite number'),
  v.minValue(0, 'at least 0'),
);

/** Validates an optional numeric option with a clear error (NaN, Infinity and strings refused). */
export function optionalInteger(
  name: string,
  value: unknown,
  range: { min: number; max?: number },
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > max) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument(
        name,
        `a whole number from ${range.min}${range.max === undefined ? '' : ` to ${range.max}`}, got ${describe(value)}`,
      ),
    });
  }
  return value;
}

export function optionalNumber(
  name: string,
  value: unknown,
  range: { min: number; exclusiveMin?: boolean },
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < range.min ||
    (range.exclusiveMin && value === range.min)
  ) {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument(
        name,
        `a finite number ${range.exclusiveMin ? 'above' : 'of at least'} ${range.min}, got ${describe(value)}`,
      ),
    });
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value;
}

/** A page size: a whole number (else `invalid_argument`), clamped to 1…max; absent → default. */
export function pageSize(
  name: string,
  value: unknown,
  limits: { default: number; max: number },
): number {
  const given = optionalInteger(name, value, { min: Number.MIN_SAFE_INTEGER });
  return given === undefined ? limits.default : Math.min(Math.max(1, given), limits.max);
}

/** A non-negative whole number (an offset, a cursor id); absent → default. */
export function nonNegativeInteger(name: string, value: unknown, fallback: number): number {
  return optionalInteger(name, value, { min: 0 }) ?? fallback;
}
