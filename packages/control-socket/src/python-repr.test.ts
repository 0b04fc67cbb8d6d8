import { describe, expect, it } from 'vitest';
import { pythonRepr } from './python-repr.js';

describe('pythonRepr', () => {
  it('quotes strings like Python: single quotes, double when the text holds only a single quote', () => {
    expect(pythonRepr('restart')).toBe("'restart'");
    expect(pythonRepr("it's")).toBe('"it\'s"');
    expect(pythonRepr(`it's "x"`)).toBe(`'it\\'s "x"'`);
    expect(pythonRepr('a\nb\\c\u0001')).toBe("'a\\nb\\\\c\\x01'");
  });

  it('escapes what Python cannot print and keeps printable non-ASCII text as it is', () => {
    // Python: repr('a\xa0\u200b\u2028\U000e0001é😀\x85 \ud800')
    expect(pythonRepr('a\u00a0\u200b\u2028\u{e0001}é😀\u0085 \ud800')).toBe(
      "'a\\xa0\\u200b\\u2028\\U000e0001é😀\\x85 \\ud800'",
    );
  });

  it('spells None, booleans, numbers, lists and dicts the Python way', () => {
    expect(pythonRepr(null)).toBe('None');
    expect(pythonRepr(undefined)).toBe('None');
    expect(pythonRepr(false)).toBe('False');
    expect(pythonRepr(1.5)).toBe('1.5');
    expect(pythonRepr([1, 'a', null])).toBe("[1, 'a', None]");
    expect(pythonRepr({ a: true })).toBe("{'a': True}");
  });

  it('stops expanding containers nested too deep to print, instead of overflowing the stack', () => {
    let deep: unknown = [];
    for (let level = 0; level < 50_000; level += 1) deep = [deep];
    const text = pythonRepr(deep);
    expect(text.startsWith('[[[')).toBe(true);
    expect(text).toContain('[...]');
    expect(text.length).toBeLessThan(1000);
    expect(pythonRepr({ a: { b: [1] } })).toBe("{'a': {'b': [1]}}");
  });
});
