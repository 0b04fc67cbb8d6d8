import { describe, expect, it } from 'vitest';
import { desktopSurfaceRegistry } from './desktop-registry.js';
import { COMMAND_REGISTRY } from './registry.js';

describe('desktopSurfaceRegistry', () => {
  it('maps every name and alias to its disposition', () => {
    const table = desktopSurfaceRegistry();
    expect(Object.keys(table)).toHaveLength(
      COMMAND_REGISTRY.reduce((count, command) => count + 1 + command.aliases.length, 0),
    );
    expect(table['/review']).toBeNull();
    expect(table['/quit']).toBe('terminal');
    expect(table['/exit']).toBe('terminal');
    expect(table['/whoami']).toBe('messaging');
    expect(table['/verbose']).toBe('settings');
  });
});
