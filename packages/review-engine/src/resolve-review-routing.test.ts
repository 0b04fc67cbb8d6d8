import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUXILIARY_TASKS, loadConfig } from '@hermes/config';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveReviewFallbackProviders, resolveReviewRouting } from './resolve-review-routing.js';

const homes: string[] = [];
function homeWith(yaml: string): string {
  const home = mkdtempSync(join(tmpdir(), 'review-routing-'));
  homes.push(home);
  writeFileSync(join(home, 'config.yaml'), yaml);
  return home;
}
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

describe('resolveReviewRouting', () => {
  it('gives exactly the five fields for a pinned provider and model', () => {
    expect(
      resolveReviewRouting({
        auxiliary: { review: { provider: 'openrouter', model: 'anthropic/claude-opus-4.6' } },
      }),
    ).toEqual({
      provider: 'openrouter',
      model: 'anthropic/claude-opus-4.6',
      baseUrl: '',
      apiKey: '',
      apiMode: '',
    });
  });

  it('inherits (null) for provider auto with an empty model, an empty section and a missing one', () => {
    expect(
      resolveReviewRouting({ auxiliary: { review: { provider: 'auto', model: '' } } }),
    ).toBeNull();
    expect(resolveReviewRouting({ auxiliary: {} })).toBeNull();
    expect(resolveReviewRouting({})).toBeNull();
    expect(resolveReviewRouting(undefined)).toBeNull();
    expect(resolveReviewRouting(null)).toBeNull();
  });

  it('does not count an api key or api mode alone as a configured route', () => {
    expect(
      resolveReviewRouting({
        auxiliary: { review: { api_key: 'sk-x', api_mode: 'chat_completions' } },
      }),
    ).toBeNull();
  });

  it('pins a model on the inherited provider for provider auto with a model', () => {
    expect(
      resolveReviewRouting({ auxiliary: { review: { provider: 'AUTO', model: ' gpt-5 ' } } }),
    ).toEqual({
      provider: '',
      model: 'gpt-5',
      baseUrl: '',
      apiKey: '',
      apiMode: '',
    });
  });

  it('treats falsy values as empty, strips text and turns other values into text', () => {
    expect(
      resolveReviewRouting({
        auxiliary: {
          review: {
            provider: false,
            model: 0,
            base_url: ' http://127.0.0.1:9/v1 ',
            api_key: [],
            api_mode: {},
          },
        },
      }),
    ).toEqual({
      provider: '',
      model: '',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      apiMode: '',
    });
    expect(resolveReviewRouting({ auxiliary: { review: { model: 4 } } })?.model).toBe('4');
  });

  it('returns null for junk instead of throwing', () => {
    const hostile = {
      get auxiliary(): unknown {
        throw new Error('boom');
      },
    };
    for (const config of [
      hostile,
      { auxiliary: 'review' },
      { auxiliary: { review: ['x'] } },
      'text' as never,
    ])
      expect(resolveReviewRouting(config)).toBeNull();
  });

  it('reads the raw config.yaml mapping and the loaded HermesConfig alike', () => {
    const home = homeWith(
      'auxiliary:\n  review:\n    provider: custom\n    model: reviewer-1\n    base_url: http://127.0.0.1:9/v1\n    api_key: sk-review\n',
    );
    const loaded = loadConfig({ home });
    const expected = {
      provider: 'custom',
      model: 'reviewer-1',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-review',
      apiMode: '',
    };
    expect(resolveReviewRouting(loaded.raw)).toEqual(expected);
    expect(resolveReviewRouting(loaded.config)).toEqual(expected);
    expect(
      resolveReviewRouting(loadConfig({ home: homeWith('model: gpt-5\n') }).config),
    ).toBeNull();
  });

  it('pins a route on a provider alone, and on a base URL alone with provider auto', () => {
    expect(resolveReviewRouting({ auxiliary: { review: { provider: 'openrouter' } } })).toEqual({
      provider: 'openrouter',
      model: '',
      baseUrl: '',
      apiKey: '',
      apiMode: '',
    });
    expect(
      resolveReviewRouting({
        auxiliary: { review: { provider: ' Auto ', base_url: 'http://127.0.0.1:9/v1' } },
      }),
    ).toEqual({
      provider: '',
      model: '',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      apiMode: '',
    });
    const loaded = loadConfig({
      home: homeWith('auxiliary:\n  review:\n    provider: openrouter\n'),
    });
    expect(resolveReviewRouting(loaded.raw)?.provider).toBe('openrouter');
    expect(resolveReviewRouting(loaded.config)?.provider).toBe('openrouter');
  });

  it('carries the api_mode and api_key of a pinned endpoint, from the raw mapping and the loaded HermesConfig', () => {
    const home = homeWith(
      'auxiliary:\n  review:\n    base_url: http://127.0.0.1:9/v1\n    api_key: sk-review\n    api_mode: codex_responses\n',
    );
    const loaded = loadConfig({ home });
    const expected = {
      provider: '',
      model: '',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-review',
      apiMode: 'codex_responses',
    };
    expect(resolveReviewRouting(loaded.raw)).toEqual(expected);
    expect(resolveReviewRouting(loaded.config)).toEqual(expected);
  });

  it('reads a blank YAML value as unset without dropping the rest of the route', () => {
    // `provider:` with nothing after it is null in YAML; the model below it still pins the route.
    const home = homeWith('auxiliary:\n  review:\n    provider:\n    model: reviewer-1\n');
    const loaded = loadConfig({ home });
    const expected = { provider: '', model: 'reviewer-1', baseUrl: '', apiKey: '', apiMode: '' };
    expect((loaded.raw.auxiliary as { review: { provider: unknown } }).review.provider).toBeNull();
    expect(resolveReviewRouting(loaded.raw)).toEqual(expected);
    expect(resolveReviewRouting(loaded.config)).toEqual(expected);
  });

  it('keeps true and non-empty lists and mappings as text: only empty values are unset', () => {
    expect(resolveReviewRouting({ auxiliary: { review: { model: true } } })?.model).toBe('true');
    expect(resolveReviewRouting({ auxiliary: { review: { model: ['m'] } } })?.model).toBe('["m"]');
    expect(
      resolveReviewRouting({ auxiliary: { review: { provider: { name: 'p' } } } })?.provider,
    ).toBe('{"name":"p"}');
  });

  it('finds review among the auxiliary tasks @hermes/config registers by default', () => {
    expect(AUXILIARY_TASKS).toContain('review');
  });
});

describe('resolveReviewFallbackProviders', () => {
  it('hands a pinned route its own chain, an explicit empty list as none, and nothing when inheriting', () => {
    const chain = [{ provider: 'openrouter', model: 'backup' }];
    expect(
      resolveReviewFallbackProviders({
        auxiliary: { review: { model: 'm', fallback_providers: chain } },
      }),
    ).toEqual(chain);
    expect(
      resolveReviewFallbackProviders({
        auxiliary: { review: { model: 'm', fallback_providers: [] } },
      }),
    ).toEqual([]);
    expect(resolveReviewFallbackProviders({ auxiliary: { review: { model: 'm' } } })).toEqual([]);
    expect(
      resolveReviewFallbackProviders({
        auxiliary: { review: { provider: 'auto', fallback_providers: chain } },
      }),
    ).toEqual([]);
  });

  it('reads the chain of a hand-made camelCase block as well', () => {
    const chain = [{ provider: 'openrouter', model: 'backup' }];
    expect(
      resolveReviewFallbackProviders({
        auxiliary: { review: { model: 'm', fallbackProviders: chain } },
      }),
    ).toEqual(chain);
  });

  it('gives no chain instead of throwing when the chain cannot be read', () => {
    const review = {
      model: 'm',
      get fallback_providers(): unknown {
        throw new Error('boom');
      },
    };
    expect(resolveReviewFallbackProviders({ auxiliary: { review } })).toEqual([]);
  });
});
