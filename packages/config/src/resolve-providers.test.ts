import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load-config.js';

async function load(yaml: string) {
  const home = (await tempHome()).path;
  writeFileSync(path.join(home, 'config.yaml'), yaml);
  return loadConfig({ home, env: {} });
}

describe('provider routing sections', () => {
  it('reads providers with their aliases (api, transport, model) and per-model settings', async () => {
    const { config, warnings } = await load(
      [
        'providers:',
        '  local:',
        '    api: http://127.0.0.1:8080/v1',
        '    key_env: LOCAL_KEY',
        '    model: llama',
        '    transport: responses',
        '    models: { llama: { context_length: 8192 } }',
      ].join('\n'),
    );
    expect(warnings).toEqual([]);
    expect(config.providers.local).toEqual({
      name: 'local',
      baseUrl: 'http://127.0.0.1:8080/v1',
      apiKey: '',
      keyEnv: 'LOCAL_KEY',
      defaultModel: 'llama',
      apiMode: 'responses',
      models: { llama: { contextLength: 8192, maxTokens: undefined } },
      requestOverrides: undefined,
    });
  });

  it('keeps named custom providers and drops nameless ones with a warning', async () => {
    const { config, warnings } = await load(
      [
        'custom_providers:',
        '  - { name: lab, base_url: http://lab/v1, model: m1, api_key: k }',
        '  - { base_url: http://nameless/v1 }',
      ].join('\n'),
    );
    expect(config.customProviders.map((entry) => entry.name)).toEqual(['lab']);
    expect(config.customProviders[0]).toMatchObject({ baseUrl: 'http://lab/v1', model: 'm1' });
    expect(warnings.join('\n')).toContain('custom_providers[1] has no name');
  });

  it('accepts fallback entries as provider names or mappings, in order', async () => {
    const { config, warnings } = await load(
      [
        'fallback_providers:',
        '  - openrouter',
        '  - { provider: custom, base_url: http://backup/v1, model: b }',
        '  - { model: only-a-model }',
      ].join('\n'),
    );
    expect(config.fallbackProviders).toEqual([
      { provider: 'openrouter', model: '', baseUrl: '', apiKey: '', apiMode: '' },
      { provider: 'custom', model: 'b', baseUrl: 'http://backup/v1', apiKey: '', apiMode: '' },
    ]);
    expect(warnings.join('\n')).toContain('fallback_providers[2] names neither');
  });

  it('ignores sections of the wrong shape with a warning', async () => {
    const { config, warnings } = await load(
      'providers: [a]\ncustom_providers: {}\nfallback_providers: x\n',
    );
    expect(config.providers).toEqual({});
    expect(config.customProviders).toEqual([]);
    expect(config.fallbackProviders).toEqual([]);
    expect(warnings).toHaveLength(3);
  });
});
