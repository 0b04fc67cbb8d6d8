import { describe, expect, it } from 'vitest';
import { defineCommand } from './command-def.js';
import { buildDesktopSurfaceRegistry, desktopSurfaceRegistry } from './desktop-registry.js';
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

  it('calls a chat-platform-only command messaging unless it names another disposition', () => {
    const table = buildDesktopSurfaceRegistry([
      defineCommand({ name: 'ping', description: 'x', category: 'Info', gatewayOnly: true }),
      defineCommand({
        name: 'pair',
        description: 'x',
        category: 'Info',
        aliases: ['link'],
        gatewayOnly: true,
        desktop: 'hidden',
      }),
      defineCommand({ name: 'note', description: 'x', category: 'Info' }),
    ]);
    expect(table).toEqual({
      '/ping': 'messaging',
      '/pair': 'hidden',
      '/link': 'hidden',
      '/note': null,
    });
  });
});
