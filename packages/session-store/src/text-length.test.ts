import { describe, expect, it } from 'vitest';
import { codePointLength, truncateCodePoints } from './text-length.js';

/** The definition: walk every grapheme from the start, keep those that fit. */
function referenceTruncate(text: string, max: number): string {
  const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let count = 0;
  let end = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    const points = codePointLength(segment);
    if (count + points > max) break;
    count += points;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

// Pieces that join into clusters, or look as if they might: CR LF, combining marks, emoji with
// skin tones and ZWJ, flags (regional indicator pairs), Hangul jamo, Devanagari with virama and
// lone surrogates, mixed with plain ASCII.
const PALETTE = [
  'a',
  'Z',
  ' ',
  '.',
  '\r',
  '\n',
  '\r\n',
  '\u0301',
  'e\u0301',
  '😀',
  '👍🏽',
  '👨‍👩‍👧',
  '\u200d',
  '🇫🇷',
  '🇩',
  '\u1100\u1161\u11a8',
  'क्षि',
  '\ud800',
  '\udc00',
  'ß',
  '中',
];

describe('truncateCodePoints', () => {
  it('cuts exactly where walking every grapheme would, for any mix of clusters', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 3000; round += 1) {
      const length = Math.floor(random() * 60);
      const text = Array.from(
        { length },
        () => PALETTE[Math.floor(random() * PALETTE.length)] as string,
      ).join('');
      const max = Math.floor(random() * 70);
      expect(truncateCodePoints(text, max), JSON.stringify({ text, max })).toBe(
        referenceTruncate(text, max),
      );
    }
  });
});
