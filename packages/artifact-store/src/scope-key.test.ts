import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE, ArtifactError } from './errors.js';
import { artifactScopeKey } from './scope-key.js';

describe('artifactScopeKey', () => {
  it('is stable for the same principal and transport family', () => {
    const first = artifactScopeKey({
      principalId: 'principal:default:a',
      transportFamily: 'local-api',
    });
    const second = artifactScopeKey({
      principalId: 'principal:default:a',
      transportFamily: 'local-api',
    });
    expect(first).toBe(second);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the SHA-256 hex of principal, NUL and transport family', () => {
    const expected = createHash('sha256')
      .update('principal:default:a\u0000local-api', 'utf8')
      .digest('hex');
    expect(
      artifactScopeKey({ principalId: 'principal:default:a', transportFamily: 'local-api' }),
    ).toBe(expected);
  });

  it('differs per principal and per transport family', () => {
    const base = artifactScopeKey({
      principalId: 'principal:default:a',
      transportFamily: 'local-api',
    });
    expect(
      artifactScopeKey({ principalId: 'principal:default:b', transportFamily: 'local-api' }),
    ).not.toBe(base);
    expect(
      artifactScopeKey({ principalId: 'principal:default:a', transportFamily: 'remote-api' }),
    ).not.toBe(base);
  });

  it('keeps principal and family apart with a separator, so shifted text cannot collide', () => {
    expect(artifactScopeKey({ principalId: 'ab', transportFamily: 'c' })).not.toBe(
      artifactScopeKey({ principalId: 'a', transportFamily: 'bc' }),
    );
  });

  it('ignores the session and other controller fields', () => {
    const withoutSession = artifactScopeKey({ principalId: 'p', transportFamily: 'local-api' });
    const controllerScope = {
      principalId: 'p',
      transportFamily: 'local-api',
      sessionId: 'session-1',
      profileId: 'default',
      controllerId: 'controller-1',
      capabilities: new Set(['browser_snapshot']),
    };
    expect(artifactScopeKey(controllerScope)).toBe(withoutSession);
  });

  it.each([
    [{ transportFamily: 'local-api' }],
    [{ principalId: '', transportFamily: 'local-api' }],
    [{ principalId: '   ', transportFamily: 'local-api' }],
  ])('requires a principal (%j)', (scope) => {
    expect(() => artifactScopeKey(scope)).toThrow(ArtifactError);
    expect(() => artifactScopeKey(scope)).toThrow(ARTIFACT_PRINCIPAL_REQUIRED_MESSAGE);
  });
});
