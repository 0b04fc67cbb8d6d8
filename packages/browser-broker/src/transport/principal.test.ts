import { describe, expect, it } from 'vitest';
import { bearerMatches, deriveApiPrincipal, transportFamilyForPeer } from './principal.js';

describe('API principal and transport family', () => {
  it('derives a stable principal that depends on profile and key', () => {
    const principal = deriveApiPrincipal({ profile: 'default', apiKey: 'secret' });
    expect(principal).toMatch(/^principal:default:[0-9a-f]{32}$/);
    expect(deriveApiPrincipal({ profile: 'default', apiKey: 'secret' })).toBe(principal);
    expect(deriveApiPrincipal({ profile: 'default', apiKey: 'other' })).not.toBe(principal);
    expect(deriveApiPrincipal({ profile: 'work', apiKey: 'secret' })).not.toContain(
      principal.slice(-32),
    );
  });

  it('treats loopback peers, IPv4-mapped included, as local-api', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', 'localhost']) {
      expect(transportFamilyForPeer(address)).toBe('local-api');
    }
    for (const address of ['10.0.0.2', '::ffff:192.168.1.4', undefined]) {
      expect(transportFamilyForPeer(address)).toBe('remote-api');
    }
  });

  it('matches only the exact bearer key', () => {
    expect(bearerMatches('Bearer secret', 'secret')).toBe(true);
    expect(bearerMatches('bearer secret', 'secret')).toBe(true);
    expect(bearerMatches('Bearer secreT', 'secret')).toBe(false);
    expect(bearerMatches('secret', 'secret')).toBe(false);
    expect(bearerMatches(undefined, 'secret')).toBe(false);
    expect(bearerMatches('Bearer ', '')).toBe(false);
  });
});
