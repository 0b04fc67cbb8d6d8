/**
 * Text measured the way people count it. Limits count Unicode code points (an emoji is one, not
 * the two UTF-16 units `String.length` reports), and cuts never fall inside a grapheme cluster
 * (a surrogate pair, an emoji with its modifiers, a letter with its combining marks).
 */

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** The longest prefix with at most `max` code points that ends on a grapheme boundary. */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text; // at most `max` UTF-16 units: at most `max` code points
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

/** Moves a UTF-16 cut point off the middle of a surrogate pair (backwards). */
export function safeCutIndex(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return Math.max(0, Math.min(index, text.length));
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}
