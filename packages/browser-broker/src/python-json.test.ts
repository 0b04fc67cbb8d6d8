import { describe, expect, it } from 'vitest';
import { toReferenceJson } from './python-json.js';

describe('toReferenceJson', () => {
  it('uses the reference separators', () => {
    expect(
      toReferenceJson({ title: 'Example Domain', url: 'https://example.test/', refs: [] }),
    ).toBe('{"title": "Example Domain", "url": "https://example.test/", "refs": []}');
    expect(toReferenceJson([1, { a: [true, null] }])).toBe('[1, {"a": [true, null]}]');
  });

  it('keeps non-ASCII characters and escapes quotes', () => {
    expect(toReferenceJson({ text: 'héllo "日本"' })).toBe('{"text": "héllo \\"日本\\""}');
  });

  it('drops undefined members like JSON.stringify and reads as null at top level', () => {
    expect(toReferenceJson({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(toReferenceJson([undefined])).toBe('[null]');
    expect(toReferenceJson(undefined)).toBe('null');
  });

  it('round-trips through JSON.parse', () => {
    const value = { nested: { list: [1, 2.5, 'x'], empty: {} }, flag: false };
    expect(JSON.parse(toReferenceJson(value))).toEqual(value);
  });
});
