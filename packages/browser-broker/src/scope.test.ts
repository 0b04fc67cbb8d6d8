import { describe, expect, it } from 'vitest';
import { createScope, sameIdentity, sameScope, scopeKey, scopeToWire } from './scope.js';

const base = {
  principalId: 'principal:default:abc',
  profileId: 'default',
  sessionId: 's1',
  controllerId: 'c1',
  browserProfileId: 'b1',
  transportFamily: 'local-api',
};

describe('scope', () => {
  it('treats scopes that differ only in capabilities as the same identity but different scopes', () => {
    const first = createScope({ ...base, capabilities: ['browser_click'] });
    const second = createScope({ ...base, capabilities: ['browser_snapshot'] });
    expect(sameIdentity(first, second)).toBe(true);
    expect(sameScope(first, second)).toBe(false);
    expect(scopeKey(first)).not.toBe(scopeKey(second));
  });

  it('ignores capability order in the full key', () => {
    const first = createScope({ ...base, capabilities: ['a', 'b'] });
    const second = createScope({ ...base, capabilities: ['b', 'a'] });
    expect(sameScope(first, second)).toBe(true);
  });

  it('distinguishes a missing field from the text "null"', () => {
    const missing = createScope({ ...base, controllerId: null });
    const text = createScope({ ...base, controllerId: 'null' });
    expect(sameIdentity(missing, text)).toBe(false);
  });

  it('writes the wire form with snake_case keys and sorted capabilities', () => {
    const wire = scopeToWire(createScope({ ...base, capabilities: ['b', 'a'] }));
    expect(wire.capabilities).toEqual(['a', 'b']);
    expect(wire.browser_profile_id).toBe('b1');
  });

  it('is frozen', () => {
    const scope = createScope(base);
    expect(Object.isFrozen(scope)).toBe(true);
  });

  it('cannot gain a capability after creation, whatever the caller tries', () => {
    const scope = createScope({ ...base, capabilities: ['browser_snapshot'] });
    const capabilities = scope.capabilities as Set<string>;
    expect(() => capabilities.add('browser_evaluate')).toThrow(TypeError);
    expect(() => Set.prototype.add.call(capabilities, 'browser_evaluate')).toThrow(TypeError);
    expect(() => capabilities.delete('browser_snapshot')).toThrow(TypeError);
    expect(() => capabilities.clear()).toThrow(TypeError);
    expect([...scope.capabilities]).toEqual(['browser_snapshot']);
    expect(scope.capabilities.has('browser_evaluate')).toBe(false);
    expect(scope.capabilities.size).toBe(1);
  });

  it("keeps no reference to the caller's capability collection", () => {
    const requested = new Set(['browser_snapshot']);
    const scope = createScope({ ...base, capabilities: requested });
    requested.add('browser_evaluate');
    expect(scope.capabilities.has('browser_evaluate')).toBe(false);
  });
});
