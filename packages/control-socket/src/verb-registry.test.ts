import { describe, expect, it } from 'vitest';
import { ControlSocketError } from './errors.js';
import { VerbRegistry } from './verb-registry.js';

describe('VerbRegistry', () => {
  it('lists verbs sorted and lets the gateway add and remove its own', () => {
    const registry = new VerbRegistry({ status: () => 1, identify: () => 2 });
    registry.register('pause-for-update', () => 3);
    expect(registry.verbs()).toEqual(['identify', 'pause-for-update', 'status']);
    expect(registry.unregister('pause-for-update')).toBe(true);
    expect(registry.has('pause-for-update')).toBe(false);
  });

  it('refuses to register a verb twice but lets set replace it', () => {
    const registry = new VerbRegistry({ identify: () => 1 });
    let caught: unknown;
    try {
      registry.register('identify', () => 2);
    } catch (error) {
      caught = error;
    }
    expect(ControlSocketError.isInstance(caught) && caught.code).toBe('verb_exists');
    const replacement = () => 3;
    registry.set('identify', replacement);
    expect(registry.get('identify')).toBe(replacement);
  });

  it('refuses an empty verb name', () => {
    expect(() => new VerbRegistry({ '': () => 1 })).toThrow(ControlSocketError);
  });
});
