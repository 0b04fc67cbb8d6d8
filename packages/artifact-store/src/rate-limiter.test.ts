import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMIT_MAX_REQUESTS, DEFAULT_RATE_LIMIT_WINDOW_SECONDS } from './constants.js';
import { ArtifactRateLimiter } from './rate-limiter.js';

function manualClock() {
  let current = 0;
  return {
    now: () => current,
    advanceSeconds(seconds: number) {
      current += seconds * 1000;
    },
  };
}

describe('ArtifactRateLimiter', () => {
  it('defaults to 30 requests per 60 seconds', () => {
    const clock = manualClock();
    const limiter = new ArtifactRateLimiter({ now: clock.now });
    expect(limiter.maxRequests).toBe(DEFAULT_RATE_LIMIT_MAX_REQUESTS);
    expect(limiter.windowSeconds).toBe(DEFAULT_RATE_LIMIT_WINDOW_SECONDS);
    const verdicts = Array.from({ length: 31 }, () => limiter.allow('upload:p'));
    expect(verdicts.filter(Boolean)).toHaveLength(30);
    expect(verdicts.at(-1)).toBe(false);
  });

  it('slides: a slot frees exactly when its oldest request leaves the window', () => {
    const clock = manualClock();
    const limiter = new ArtifactRateLimiter({ maxRequests: 2, windowSeconds: 10, now: clock.now });
    expect(limiter.allow('k')).toBe(true);
    clock.advanceSeconds(5);
    expect(limiter.allow('k')).toBe(true);
    expect(limiter.allow('k')).toBe(false);

    clock.advanceSeconds(4.9);
    expect(limiter.allow('k')).toBe(false);
    clock.advanceSeconds(0.2);
    expect(limiter.allow('k')).toBe(true);
    expect(limiter.allow('k')).toBe(false);
  });

  it('counts each key on its own', () => {
    const limiter = new ArtifactRateLimiter({ maxRequests: 1, now: manualClock().now });
    expect(limiter.allow('upload:a')).toBe(true);
    expect(limiter.allow('upload:a')).toBe(false);
    expect(limiter.allow('upload:b')).toBe(true);
    expect(limiter.allow('download:a')).toBe(true);
  });

  it('refuses an empty or non-string key', () => {
    const limiter = new ArtifactRateLimiter();
    expect(limiter.allow('')).toBe(false);
    expect(limiter.allow(undefined)).toBe(false);
    expect(limiter.allow(42)).toBe(false);
  });

  it('reset forgets one key, or every key', () => {
    const limiter = new ArtifactRateLimiter({ maxRequests: 1, now: manualClock().now });
    limiter.allow('a');
    limiter.allow('b');
    limiter.reset('a');
    expect(limiter.allow('a')).toBe(true);
    expect(limiter.allow('b')).toBe(false);
    limiter.reset();
    expect(limiter.allow('b')).toBe(true);
  });
});
