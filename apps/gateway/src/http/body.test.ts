import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import { parseJsonText } from './body.js';

/** `depth` levels of objects and arrays, alternating, around a number. */
function nested(depth: number): string {
  let text = '1';
  for (let level = 0; level < depth; level++) text = level % 2 ? `[${text}]` : `{"k":${text}}`;
  return text;
}

describe('parseJsonText', () => {
  it(`takes JSON nested ${MAX_JSON_DEPTH} levels deep and refuses one level more as invalid_request`, () => {
    expect(parseJsonText(nested(MAX_JSON_DEPTH))).toBeTypeOf('object');
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH + 1))).toThrow(
      expect.objectContaining({ status: 400, code: 'invalid_request' }),
    );
  });

  it('counts only nesting: a wide body and a bare value pass, broken JSON is invalid_json', () => {
    const wide = JSON.stringify({
      messages: Array.from({ length: 5000 }, () => ({ content: 'x' })),
    });
    expect(parseJsonText(wide)).toMatchObject({ messages: expect.any(Array) });
    expect(parseJsonText('"text"')).toBe('text');
    expect(() => parseJsonText('{"a":')).toThrow(expect.objectContaining({ code: 'invalid_json' }));
  });
});
