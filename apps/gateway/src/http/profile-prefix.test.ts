import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../gateway.js';
import { splitProfilePrefix } from './profile-prefix.js';

describe('splitProfilePrefix', () => {
  it('splits /p/<name>/rest and leaves bare paths alone', () => {
    expect(splitProfilePrefix('/p/work/v1/models')).toEqual({
      profile: 'work',
      path: '/v1/models',
    });
    expect(splitProfilePrefix('/p/work')).toEqual({ profile: 'work', path: '/' });
    expect(splitProfilePrefix('/v1/models')).toEqual({ profile: null, path: '/v1/models' });
    expect(splitProfilePrefix('/pp/work/x')).toEqual({ profile: null, path: '/pp/work/x' });
  });

  it('refuses an empty or undecodable profile segment instead of guessing', () => {
    expect(splitProfilePrefix('/p//v1/models')).toBeUndefined();
    expect(splitProfilePrefix('/p/%20/v1/models')).toBeUndefined();
    expect(splitProfilePrefix('/p/%E0%A4%A/v1/models')).toBeUndefined();
  });
});

describe('isLoopbackHost', () => {
  it('accepts only loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.4',
      '10.0.0.1',
      'example.com',
      '127.0.0.1.nip.io',
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
