import { MAX_ARTIFACT_FILENAME_LENGTH } from './constants.js';

/**
 * A display name for an artifact: trimmed, path separators turned into `_`, control characters
 * dropped, a lone UTF-16 surrogate (which no encoding can carry) turned into U+FFFD, cut to 160
 * characters (code points). The result is only ever shown (receipt, `Content-Disposition`),
 * never joined into a path: files are named by their artifact id alone.
 */
export function sanitizeArtifactFilename(value: string): string {
  let cleaned = '';
  for (const character of value.trim()) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 32 || code === 127) continue;
    if (code >= 0xd800 && code <= 0xdfff) {
      cleaned += '\uFFFD';
      continue;
    }
    cleaned += character === '/' || character === '\\' ? '_' : character;
  }
  return Array.from(cleaned).slice(0, MAX_ARTIFACT_FILENAME_LENGTH).join('');
}
