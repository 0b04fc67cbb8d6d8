import { describe, expect, it } from 'vitest';
import { isTransientNetworkError } from './transient-errors.js';

function withCode(code: string, cause?: unknown): Error {
  return Object.assign(new Error(code), { code, cause });
}

describe('isTransientNetworkError', () => {
  it('recognises network codes anywhere in the cause chain, up to 12 levels', () => {
    expect(isTransientNetworkError(withCode('ECONNRESET'))).toBe(true);
    expect(isTransientNetworkError(new Error('outer', { cause: withCode('UND_ERR_SOCKET') }))).toBe(
      true,
    );
    let deep: unknown = withCode('EPIPE');
    for (let depth = 0; depth < 11; depth += 1) deep = new Error(`level ${depth}`, { cause: deep });
    expect(isTransientNetworkError(deep)).toBe(true);
    deep = new Error('one more', { cause: deep });
    expect(isTransientNetworkError(deep)).toBe(false);
  });

  it('counts a host name that does not resolve (offline) as transient, as the model retry does', () => {
    const lookup = withCode('ENOTFOUND');
    expect(isTransientNetworkError(new TypeError('fetch failed', { cause: lookup }))).toBe(true);
    expect(isTransientNetworkError(withCode('EAI_AGAIN'))).toBe(true);
  });

  it('leaves programming errors alone', () => {
    expect(isTransientNetworkError(new TypeError('x is undefined'))).toBe(false);
    expect(isTransientNetworkError(withCode('ENOENT'))).toBe(false);
    expect(isTransientNetworkError('ECONNRESET')).toBe(false);
    expect(isTransientNetworkError(null)).toBe(false);
  });
});
