import { describe, expect, it } from 'vitest';
import { pythonRepr } from './python-repr.js';

describe('pythonRepr', () => {
  it('quotes strings like Python: single quotes, double when the text holds only a single quote', () => {
    expect(pythonRepr('restart')).toBe("'restart'");
    expect(pythonRepr("it's")).toBe('"it\'s"');
    expect(pythonRepr(`it's "x"`)).toBe(`'it\\'s "x"'`);
    expect(pythonRepr('a\nb\\c\u0001')).toBe("'a\\nb\\\\c\\x01'");
  });

  it('spells None, booleans, numbers, lists and dicts the Python way', () => {
    expect(pythonRepr(null)).toBe('None');
    expect(pythonRepr(undefined)).toBe('None');
    expect(pythonRepr(false)).toBe('False');
    expect(pythonRepr(1.5)).toBe('1.5');
    expect(pythonRepr([1, 'a', null])).toBe("[1, 'a', None]");
    expect(pythonRepr({ a: true })).toBe("{'a': True}");
  });
});
