import { describe, expect, it } from 'vitest';
import { REDACTED, SecretScrubber } from './secret-scrubber.js';

describe('SecretScrubber', () => {
  it('replaces every known secret wherever it appears, longest first', () => {
    const scrubber = new SecretScrubber();
    scrubber.add('sk-live-123456', 'sk-live-123456-extended');
    expect(scrubber.scrub('a sk-live-123456-extended b sk-live-123456 c')).toBe(
      `a ${REDACTED} b ${REDACTED} c`,
    );
  });

  it('catches the JSON-escaped form of a secret with quotes or backslashes', () => {
    const scrubber = new SecretScrubber();
    scrubber.add('pa"ss\\word-1');
    const line = JSON.stringify({ msg: 'failed with pa"ss\\word-1' });
    expect(scrubber.scrub(line)).not.toContain('word-1');
  });

  it('takes secrets from variables whose names say so, and ignores short or blank values', () => {
    const scrubber = new SecretScrubber();
    scrubber.addFromEnvironment({
      OPENAI_API_KEY: 'sk-abcdef0123',
      GITHUB_TOKEN: 'ghp_0123456789',
      DB_PASSWORD: 'hunter22',
      PATH: '/usr/bin:/bin',
      SHORT_KEY: 'abc',
      EMPTY_SECRET: '',
    });
    expect(scrubber.size).toBe(3);
    expect(scrubber.scrub('/usr/bin:/bin sk-abcdef0123 hunter22')).toBe(
      `/usr/bin:/bin ${REDACTED} ${REDACTED}`,
    );
  });
});
