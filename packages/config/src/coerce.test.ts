import { describe, expect, it } from 'vitest';
import { coerceBoolean, coerceInteger, coerceNumber, parseBooleanToken } from './coerce.js';

describe('coerceBoolean', () => {
  it.each(['true', '1', 'yes', 'on', ' YES ', 'On'])('reads %j as true', (value) => {
    expect(coerceBoolean(value, false)).toBe(true);
  });
  it.each(['false', '0', 'no', 'off'])('reads %j as false', (value) => {
    expect(coerceBoolean(value, true)).toBe(false);
  });
  it('falls back to the default for null, unknown strings and non-scalars', () => {
    expect(coerceBoolean(null, true)).toBe(true);
    expect(coerceBoolean(undefined, false)).toBe(false);
    expect(coerceBoolean('maybe', true)).toBe(true);
    expect(coerceBoolean(['x'], false)).toBe(false);
    expect(coerceBoolean(Number.NaN, true)).toBe(true);
  });
  it('reads numbers by non-zero', () => {
    expect(coerceBoolean(0, true)).toBe(false);
    expect(coerceBoolean(2, false)).toBe(true);
  });
  it('tells an unrecognised token from false', () => {
    expect(parseBooleanToken('nope')).toBeUndefined();
    expect(parseBooleanToken('off')).toBe(false);
  });
});

describe('coerceNumber and coerceInteger', () => {
  it('rejects non-finite values by falling back to the default', () => {
    expect(coerceNumber(Number.POSITIVE_INFINITY, 30)).toBe(30);
    expect(coerceNumber(Number.NaN, 30)).toBe(30);
    expect(coerceNumber('Infinity', 30)).toBe(30);
    expect(coerceInteger(Number.POSITIVE_INFINITY, 3)).toBe(3);
  });
  it('falls back to the default, not the nearest bound, when out of range', () => {
    expect(coerceNumber(86_400, 30, { min: 1, max: 3600 })).toBe(30);
    expect(coerceNumber(0.5, 30, { min: 1, max: 3600 })).toBe(30);
    expect(coerceInteger(1e9, 3, { min: 1, max: 1000 })).toBe(3);
  });
  it('accepts in-range numbers and numeric strings', () => {
    expect(coerceNumber('45.5', 30, { min: 1, max: 3600 })).toBe(45.5);
    expect(coerceNumber(3600, 30, { min: 1, max: 3600 })).toBe(3600);
    expect(coerceInteger('12', 3, { min: 1, max: 1000 })).toBe(12);
    expect(coerceInteger(7.9, 3)).toBe(7);
  });
  it('falls back for booleans, blanks and junk', () => {
    expect(coerceNumber(true, 30)).toBe(30);
    expect(coerceNumber('', 30)).toBe(30);
    expect(coerceNumber('12abc', 30)).toBe(30);
    expect(coerceInteger({}, 3)).toBe(3);
  });
});
