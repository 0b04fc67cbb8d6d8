/**
 * Coercion rules for user-written values (config.yaml, environment variables). A user mistake
 * degrades to the default — it never throws and never aborts loading.
 */

const TRUE_TOKENS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_TOKENS = new Set(['0', 'false', 'no', 'off']);

/**
 * Parses a boolean token (`true/1/yes/on`, `false/0/no/off`, case-insensitive, trimmed).
 * Returns `undefined` for anything else so callers can tell "unrecognised" from "false".
 */
export function parseBooleanToken(value: string): boolean | undefined {
  const token = value.trim().toLowerCase();
  if (TRUE_TOKENS.has(token)) return true;
  if (FALSE_TOKENS.has(token)) return false;
  return undefined;
}

/**
 * `null`/`undefined` → default; recognised strings → their meaning; other strings → default;
 * booleans as is; finite numbers by non-zero; anything else → default.
 */
export function coerceBoolean(value: unknown, defaultValue: boolean): boolean {
  if (value === null || value === undefined) return defaultValue;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return parseBooleanToken(value) ?? defaultValue;
  if (typeof value === 'number') return Number.isFinite(value) ? value !== 0 : defaultValue;
  return defaultValue;
}

export interface NumberRange {
  readonly min?: number;
  readonly max?: number;
}

function toFiniteNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') return undefined;
    const parsed = Number(trimmed);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

function inRange(value: number, range: NumberRange | undefined): boolean {
  if (range?.min !== undefined && value < range.min) return false;
  if (range?.max !== undefined && value > range.max) return false;
  return true;
}

/**
 * A finite number within `range`, else the default — not the nearest bound: an operator who
 * wrote 86400 for a 1–3600 knob made a mistake, and the shipped default is the safe answer.
 * Non-finite values (`.inf`, `.nan` in YAML) and booleans fall back too.
 */
export function coerceNumber(value: unknown, defaultValue: number, range?: NumberRange): number {
  const parsed = toFiniteNumber(value);
  if (parsed === undefined || !inRange(parsed, range)) return defaultValue;
  return parsed;
}

/**
 * Like `coerceNumber`, for integers: a finite value is truncated toward zero before the range
 * check (as `int()` would); non-finite values and anything out of range give the default.
 */
export function coerceInteger(value: unknown, defaultValue: number, range?: NumberRange): number {
  const parsed = toFiniteNumber(value);
  if (parsed === undefined) return defaultValue;
  const truncated = Math.trunc(parsed);
  if (!Number.isSafeInteger(truncated) || !inRange(truncated, range)) return defaultValue;
  return truncated;
}

/** A trimmed string for string-like scalars, else the default. */
export function coerceString(value: unknown, defaultValue = ''): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return defaultValue;
}
