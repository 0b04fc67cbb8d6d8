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

/**
 * The longest prefix with at most `max` code points that ends on a grapheme boundary. Counts to
 * the cut, then asks the segmenter only about the cluster around it — iterating a text's
 * graphemes from the start costs about 1 µs each (70 µs for a 63-character preview, measured),
 * and between two ASCII characters other than CR LF there is always a boundary.
 */
export function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text; // at most `max` UTF-16 units: at most `max` code points
  let cut = 0;
  for (let count = 0; count < max && cut < text.length; count += 1) {
    const code = text.charCodeAt(cut);
    const pair =
      code >= 0xd800 &&
      code <= 0xdbff &&
      cut + 1 < text.length &&
      isLowSurrogate(text.charCodeAt(cut + 1));
    cut += pair ? 2 : 1;
  }
  if (cut >= text.length) return text;
  const before = text.charCodeAt(cut - 1);
  const after = text.charCodeAt(cut);
  if (before < 0x80 && after < 0x80 && !(before === 0x0d && after === 0x0a)) {
    return text.slice(0, cut);
  }
  const cluster = graphemes.segment(text).containing(cut);
  return text.slice(0, cluster ? cluster.index : cut);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves a UTF-16 cut point off the middle of a surrogate pair (backwards). */
export function safeCutIndex(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return Math.max(0, Math.min(index, text.length));
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}
