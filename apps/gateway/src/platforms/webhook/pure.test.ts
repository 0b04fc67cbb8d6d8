import { describe, expect, it } from 'vitest';
import { IdempotencyCache } from './idempotency-cache.js';
import { FixedRateWindow } from './rate-window.js';
import { PRETTY_PAYLOAD_MAX_CHARS, renderPrompt } from './routes.js';
import { signV1, signV2, verifySignature } from './signature.js';

const body = Buffer.from('{"action":"opened"}');

describe('webhook signature', () => {
  it('accepts a V2 signature inside the tolerance and refuses one outside it', () => {
    const header = signV2('s3cret', body, 1_000_000);
    expect(verifySignature({ secret: 's3cret', body, v2: header, nowS: 1_000_299 })).toEqual({
      ok: true,
      version: 'v2',
      signed: `1000000:${header.slice('t=1000000,v1='.length)}`,
    });
    expect(verifySignature({ secret: 's3cret', body, v2: header, nowS: 1_000_301 }).ok).toBe(false);
    expect(verifySignature({ secret: 's3cret', body, v2: header, nowS: 999_699 }).ok).toBe(false);
  });

  it('refuses a V2 signature made with another secret or over another body', () => {
    const header = signV2('s3cret', body, 50);
    expect(verifySignature({ secret: 'other', body, v2: header, nowS: 50 }).ok).toBe(false);
    expect(
      verifySignature({ secret: 's3cret', body: Buffer.from('{}'), v2: header, nowS: 50 }).ok,
    ).toBe(false);
    expect(verifySignature({ secret: 's3cret', body, v2: 't=50', nowS: 50 }).ok).toBe(false);
  });

  it('prefers V2 when both headers are sent, and accepts V1 alone (with or without the sha256= prefix)', () => {
    expect(
      verifySignature({ secret: 'k', body, v1: signV1('k', body), v2: 'garbage', nowS: 1 }).ok,
    ).toBe(false);
    expect(verifySignature({ secret: 'k', body, v1: signV1('k', body), nowS: 1 })).toEqual({
      ok: true,
      version: 'v1',
    });
    expect(verifySignature({ secret: 'k', body, v1: signV1('k', body).slice(7), nowS: 1 }).ok).toBe(
      true,
    );
    expect(verifySignature({ secret: 'k', body, v1: signV1('x', body), nowS: 1 }).ok).toBe(false);
    expect(verifySignature({ secret: 'k', body, nowS: 1 }).ok).toBe(false);
  });
});

describe('fixed rate window', () => {
  it('allows the limit per window, per key, and opens again when the window ends', () => {
    let now = 0;
    const window = new FixedRateWindow({ windowMs: 60_000, now: () => now });
    expect([1, 2, 3].map(() => window.hit('a', 2))).toEqual([true, true, false]);
    expect(window.hit('b', 2)).toBe(true);
    now = 59_999;
    expect(window.hit('a', 2)).toBe(false);
    now = 60_000;
    expect(window.hit('a', 2)).toBe(true);
  });
});

describe('idempotency cache', () => {
  it('reports a repeat inside the TTL as a duplicate and forgets it after', () => {
    let now = 0;
    const cache = new IdempotencyCache({ ttlMs: 1000, now: () => now });
    expect(cache.add('d1')).toBe(true);
    expect(cache.add('d1')).toBe(false);
    now = 1000;
    expect(cache.add('d1')).toBe(true);
  });

  it('evicts the oldest ids past its size cap', () => {
    const cache = new IdempotencyCache({ maxEntries: 2 });
    cache.add('a');
    cache.add('b');
    cache.add('c');
    expect(cache.has('a')).toBe(false);
    expect(cache.has('c')).toBe(true);
  });
});

describe('webhook prompt', () => {
  it('quotes a small payload indented and a large one compact, so nesting cannot multiply its size', () => {
    const small = { repository: { name: 'hermes' } };
    expect(renderPrompt('{payload}', { route: 'r', event: undefined, payload: small })).toBe(
      JSON.stringify(small, null, 2),
    );
    // 64 levels deep, about 1 MiB compact: indented, every value would carry up to 128 spaces.
    let deep: unknown = Array.from({ length: 60_000 }, () => 1);
    for (let level = 0; level < 63; level += 1) deep = [deep];
    const compact = JSON.stringify(deep);
    expect(compact.length).toBeGreaterThan(PRETTY_PAYLOAD_MAX_CHARS);
    const prompt = renderPrompt(undefined, { route: 'r', event: 'push', payload: deep });
    expect(prompt).toContain(compact);
    expect(prompt.length).toBeLessThan(compact.length + 100);
  });
});
