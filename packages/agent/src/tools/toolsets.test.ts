import { resolveConfig } from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from './builtin-tools.js';
import { createToolRegistry } from './tool-registry.js';
import { listToolsets, resolveToolNames, resolveToolsetNames } from './toolsets.js';

const registry = createToolRegistry(BUILTIN_TOOLS);
const all = BUILTIN_TOOLS.map((tool) => tool.name);

describe('toolsets', () => {
  it('gives every platform its hermes-<platform> composite by default', () => {
    const config = resolveConfig({});
    expect(resolveToolsetNames(config, 'cli')).toEqual(['hermes-cli']);
    expect(resolveToolsetNames(config, 'api_server')).toEqual(['hermes-api-server']);
    expect(resolveToolsetNames(config, 'tui')).toEqual(['hermes-tui']);
    expect(resolveToolsetNames(config, 'telegram')).toEqual(['hermes-telegram']);
    for (const platform of ['cli', 'api_server', 'tui', 'telegram'])
      expect(resolveToolNames(config, platform, registry)).toEqual(all);
  });

  it('takes an object property name in a toolset list for a tool name, not a toolset', () => {
    const config = resolveConfig({
      platform_toolsets: { api_server: ['constructor', 'toString', '__proto__', 'file'] },
    });
    expect(resolveToolNames(config, 'api_server', registry)).toEqual(
      resolveToolNames(
        resolveConfig({ platform_toolsets: { api_server: ['file'] } }),
        'api_server',
        registry,
      ),
    );
  });

  it('honours toolsets for the CLI, platform_toolsets per platform, and disabled_toolsets last', () => {
    const config = resolveConfig({
      toolsets: ['file'],
      platform_toolsets: { api_server: ['safe'], telegram: ['hermes-telegram'] },
      agent: { disabled_toolsets: ['todo', 'write_file'] },
    });
    expect(resolveToolNames(config, 'cli', registry)).toEqual([
      'read_file',
      'patch',
      'search_files',
    ]);
    expect(resolveToolNames(config, 'api_server', registry)).toEqual([
      'read_file',
      'search_files',
      'skill_view',
    ]);
    expect(resolveToolNames(config, 'telegram', registry)).not.toContain('todo');
    expect(
      resolveToolNames(config, 'cli', registry, { toolsets: ['terminal'], disabled: [] }),
    ).toEqual(['terminal']);
  });

  it('lists toolsets with their state for /v1/toolsets', () => {
    const config = resolveConfig({ platform_toolsets: { api_server: ['file'] } });
    const listed = listToolsets(config, 'api_server', registry);
    expect(listed.find((toolset) => toolset.name === 'file')).toMatchObject({
      enabled: true,
      reasonCode: 'ready',
      tools: ['patch', 'read_file', 'search_files', 'write_file'],
    });
    expect(listed.find((toolset) => toolset.name === 'terminal')).toMatchObject({
      enabled: false,
      reasonCode: 'disabled',
    });
    expect(listed.find((toolset) => toolset.name === 'delegation')).toMatchObject({
      available: true,
      reasonCode: 'disabled',
      tools: ['delegate_task'],
    });
    const withoutDelegation = createToolRegistry(
      BUILTIN_TOOLS.filter((tool) => tool.name !== 'delegate_task'),
    );
    expect(
      listToolsets(config, 'api_server', withoutDelegation).find(
        (toolset) => toolset.name === 'delegation',
      ),
    ).toMatchObject({ available: false, reasonCode: 'not_configured', tools: [] });
  });
});
