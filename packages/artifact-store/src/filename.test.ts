import { describe, expect, it } from 'vitest';
import { MAX_ARTIFACT_FILENAME_LENGTH } from './constants.js';
import { sanitizeArtifactFilename } from './filename.js';

describe('sanitizeArtifactFilename', () => {
  it('replaces path separators so the name can never read as a path', () => {
    expect(sanitizeArtifactFilename('../../etc/passwd')).toBe('.._.._etc_passwd');
    expect(sanitizeArtifactFilename('a\\b.png')).toBe('a_b.png');
  });

  it('trims and drops control characters', () => {
    expect(sanitizeArtifactFilename('  shot\r\n\u0000.png\t ')).toBe('shot.png');
  });

  it('caps the length at 160 characters without splitting a character', () => {
    const long = `${'é'.repeat(200)}.png`;
    const cleaned = sanitizeArtifactFilename(long);
    expect(Array.from(cleaned)).toHaveLength(MAX_ARTIFACT_FILENAME_LENGTH);
    expect(sanitizeArtifactFilename('😀'.repeat(200))).toBe('😀'.repeat(160));
  });

  it('repairs lone surrogates, which no header or encoder can carry, and keeps real pairs', () => {
    expect(sanitizeArtifactFilename('a\uD800b\uDC00c.png')).toBe('a\uFFFDb\uFFFDc.png');
    expect(sanitizeArtifactFilename('\uD83D\uDE00.png')).toBe('😀.png');
    expect(() => encodeURIComponent(sanitizeArtifactFilename('x\uDBFF'))).not.toThrow();
  });
});
