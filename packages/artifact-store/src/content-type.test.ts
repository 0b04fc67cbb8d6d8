import { describe, expect, it } from 'vitest';
import { normalizeContentType } from './content-type.js';

describe('normalizeContentType', () => {
  it('strips parameters and lower-cases', () => {
    expect(normalizeContentType(' Image/PNG ; charset=binary')).toBe('image/png');
    expect(normalizeContentType('text/plain;charset=utf-8')).toBe('text/plain');
  });

  it('turns a missing value into an empty string', () => {
    expect(normalizeContentType(undefined)).toBe('');
    expect(normalizeContentType(null)).toBe('');
  });
});
