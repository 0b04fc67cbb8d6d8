import { coerceBoolean, coerceInteger, coerceNumber, type NumberRange } from './coerce.js';

/** Receives one sentence per value that was ignored in favour of its default. */
export type Warn = (message: string) => void;

export interface KnobOptions {
  /** Where the value came from, as the user wrote it (`delegation.max_iterations`, an env name). */
  readonly key: string;
  readonly warn: Warn;
  readonly range?: NumberRange;
}

function isSet(value: unknown): boolean {
  return value !== null && value !== undefined;
}

function describeRange(range: NumberRange | undefined): string {
  if (range?.min !== undefined && range.max !== undefined)
    return ` from ${range.min} to ${range.max}`;
  if (range?.min !== undefined) return ` of at least ${range.min}`;
  if (range?.max !== undefined) return ` of at most ${range.max}`;
  return '';
}

/*
 * The coercion helpers degrade silently; these wrappers keep that rule (a mistake never aborts
 * loading) but say which key was ignored, so a typo does not go unnoticed. A value that is simply
 * absent (or YAML null) is not a mistake and says nothing. Warnings name the key, never the value:
 * a value in the wrong place may be a pasted secret.
 */

/** `coerceNumber`, warning when a value was set but not used. */
export function numberKnob(value: unknown, defaultValue: number, options: KnobOptions): number {
  const result = coerceNumber(value, Number.NaN, options.range);
  if (!Number.isNaN(result)) return result;
  if (isSet(value)) {
    options.warn(
      `${options.key} must be a finite number${describeRange(options.range)}; using the default ${defaultValue}`,
    );
  }
  return defaultValue;
}

/** `coerceInteger`, warning when a value was set but not used. */
export function integerKnob(value: unknown, defaultValue: number, options: KnobOptions): number {
  const result = coerceInteger(value, Number.NaN, options.range);
  if (!Number.isNaN(result)) return result;
  if (isSet(value)) {
    options.warn(
      `${options.key} must be a whole number${describeRange(options.range)}; using the default ${defaultValue}`,
    );
  }
  return defaultValue;
}

/** `coerceBoolean`, warning when a value was set but is not a recognised switch. */
export function booleanKnob(
  value: unknown,
  defaultValue: boolean,
  options: Omit<KnobOptions, 'range'>,
): boolean {
  const recognised = coerceBoolean(value, true) === coerceBoolean(value, false);
  if (isSet(value) && !recognised) {
    options.warn(
      `${options.key} must be true or false (also yes/no, on/off, 1/0); using the default ${defaultValue}`,
    );
  }
  return coerceBoolean(value, defaultValue);
}
