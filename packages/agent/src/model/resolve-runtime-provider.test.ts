import path from 'node:path';
import { resolveConfig } from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import { DEFAULT_CONTEXT_LENGTH, NO_KEY_REQUIRED } from './provider-catalog.js';
import { resolveAuxiliaryRoute } from './resolve-auxiliary-route.js';
import { resolveFallbackRoutes } from './resolve-fallback-routes.js';
import { resolveRuntimeProvider } from './resolve-runtime-provider.js';

const home = '/srv/hermes-home';
const secrets =
  (values: Record<string, string>) =>
  (name: string): string | undefined =>
    values[name];
const none = secrets({});

function thrown(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (error) {
    if (AgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an AgentError');
}

describe('resolveRuntimeProvider', () => {
  it('says which key to set when no endpoint is configured', () => {
    const error = thrown(() => resolveRuntimeProvider(resolveConfig({}), { secret: none, home }));
    expect(error.code).toBe('model_not_configured');
    expect(error.message).toBe(
      "model.base_url is not set — set it in config.yaml or run 'hermes config set model.base_url …'",
    );
    expect(error.message).toBe(AGENT_ERROR_MESSAGES.baseUrlMissing);
  });

  it('names the provider, the env key and the home .env when a key is missing', () => {
    const config = resolveConfig({ model: { provider: 'openrouter', default: 'x/y' } });
    const error = thrown(() => resolveRuntimeProvider(config, { secret: none, home }));
    expect(error.code).toBe('missing_api_key');
    expect(error.message).toBe(
      `no API key for provider openrouter — set OPENROUTER_API_KEY in ${path.join(home, '.env')}`,
    );
  });

  it('names the model key when no model id is configured', () => {
    const config = resolveConfig({ model: { base_url: 'http://127.0.0.1:9/v1' } });
    const error = thrown(() => resolveRuntimeProvider(config, { secret: none, home }));
    expect(error.code).toBe('model_id_missing');
    expect(error.message).toBe(AGENT_ERROR_MESSAGES.modelIdMissing);
  });

  it('refuses an unknown provider and an unsupported protocol with their messages', () => {
    const unknown = thrown(() =>
      resolveRuntimeProvider(resolveConfig({ model: { provider: 'nope', default: 'm' } }), {
        secret: none,
      }),
    );
    expect(unknown.message).toBe(AGENT_ERROR_MESSAGES.unknownProvider('nope'));
    const anthropic = thrown(() =>
      resolveRuntimeProvider(
        resolveConfig({ model: { base_url: 'https://api.anthropic.com/v1', default: 'c' } }),
        { secret: none },
      ),
    );
    expect(anthropic.code).toBe('unsupported_api_mode');
    expect(anthropic.message).toBe(AGENT_ERROR_MESSAGES.unsupportedApiMode('anthropic_messages'));
    const bad = thrown(() =>
      resolveRuntimeProvider(resolveConfig({ model: { base_url: 'ftp://x', default: 'm' } }), {
        secret: none,
      }),
    );
    expect(bad.message).toBe(AGENT_ERROR_MESSAGES.invalidBaseUrl('model.base_url'));
  });

  it('routes a custom base_url without a key, detecting the protocol from the host', () => {
    const route = resolveRuntimeProvider(
      resolveConfig({ model: { base_url: 'http://127.0.0.1:8080/v1', default: 'local' } }),
      { secret: none },
    );
    expect(route).toMatchObject({
      provider: 'custom',
      model: 'local',
      baseUrl: 'http://127.0.0.1:8080/v1',
      apiKey: NO_KEY_REQUIRED,
      apiMode: 'chat_completions',
      contextLength: DEFAULT_CONTEXT_LENGTH,
    });
  });

  it("sends a known provider's API its key from .env when model.base_url names it, and nowhere else", () => {
    const keys = secrets({ OPENAI_API_KEY: 'sk-openai', OPENROUTER_API_KEY: 'sk-or' });
    const at = (baseUrl: string, secret = keys) =>
      resolveRuntimeProvider(resolveConfig({ model: { base_url: baseUrl, default: 'm' } }), {
        secret,
        home,
      });
    expect(at('https://api.openai.com/v1')).toMatchObject({
      provider: 'custom',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-openai',
    });
    expect(at('https://API.OpenAI.com./v1/').apiKey).toBe('sk-openai');
    expect(at('https://openrouter.ai/api/v1').apiKey).toBe('sk-or');
    // A lookalike host, plain http or a local server never gets a provider's key.
    for (const other of [
      'https://api.openai.com.evil.test/v1',
      'http://api.openai.com/v1',
      'https://api.openai.com:8443/v1',
      'http://127.0.0.1:11434/v1',
    ])
      expect(at(other).apiKey, other).toBe(NO_KEY_REQUIRED);
    // model.api_key still wins.
    const own = resolveRuntimeProvider(
      resolveConfig({
        model: { base_url: 'https://api.openai.com/v1', default: 'm', api_key: 'sk-own' },
      }),
      { secret: keys },
    );
    expect(own.apiKey).toBe('sk-own');
    // Without any key the turn is refused up front, naming the key to set.
    const missing = thrown(() => at('https://api.openai.com/v1', none));
    expect(missing.code).toBe('missing_api_key');
    expect(missing.message).toBe(
      AGENT_ERROR_MESSAGES.missingApiKey('custom', 'OPENAI_API_KEY', home),
    );
  });

  it('auto-detects a built-in provider from the secret scope, never process.env', () => {
    process.env.OPENAI_API_KEY = 'from-process-env';
    try {
      const config = resolveConfig({ model: { default: 'gpt-5' } });
      const route = resolveRuntimeProvider(config, { secret: secrets({ OPENAI_API_KEY: 'sk-1' }) });
      expect(route).toMatchObject({
        provider: 'openai',
        apiKey: 'sk-1',
        apiMode: 'codex_responses',
        baseUrl: 'https://api.openai.com/v1',
      });
      expect(() => resolveRuntimeProvider(config, { secret: none })).toThrow(AgentError);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });

  it('uses providers.<name> blocks with key_env, api aliases and per-model limits', () => {
    const config = resolveConfig({
      model: { provider: 'lab', default: 'big' },
      providers: {
        lab: {
          api: 'http://lab.internal/v1',
          key_env: 'LAB_KEY',
          transport: 'responses',
          models: { big: { context_length: 32000, max_tokens: 1000 } },
          request_overrides: { temperature: 0.2 },
        },
      },
    });
    const route = resolveRuntimeProvider(config, { secret: secrets({ LAB_KEY: 'k' }) });
    expect(route).toMatchObject({
      provider: 'lab',
      baseUrl: 'http://lab.internal/v1',
      apiKey: 'k',
      apiMode: 'codex_responses',
      contextLength: 32000,
      maxTokens: 1000,
      requestOverrides: { temperature: 0.2 },
    });
    const missing = thrown(() => resolveRuntimeProvider(config, { secret: none, home }));
    expect(missing.message).toBe(AGENT_ERROR_MESSAGES.missingApiKey('lab', 'LAB_KEY', home));
  });

  it('resolves custom:<name> and keeps a named custom provider its name', () => {
    const config = resolveConfig({
      model: { provider: 'custom:box', default: '' },
      custom_providers: [{ name: 'box', base_url: 'http://box/v1', model: 'm', api_key: 'bk' }],
    });
    expect(resolveRuntimeProvider(config, { secret: none })).toMatchObject({
      provider: 'custom:box',
      model: 'm',
      apiKey: 'bk',
    });
    expect(resolveRuntimeProvider(config, { secret: none, requested: 'box' }).provider).toBe('box');
  });
});

describe('resolveAuxiliaryRoute', () => {
  const base = {
    model: { base_url: 'http://main/v1', default: 'main-model', api_key: 'mk' },
    providers: { side: { base_url: 'http://side/v1', api_key: 'sk', default_model: 'side-m' } },
  };

  it('prefers an explicit base_url, then a provider, then the main model', () => {
    const explicit = resolveAuxiliaryRoute(
      resolveConfig({
        ...base,
        auxiliary: {
          compression: { base_url: 'http://aux/v1', model: 'aux-m', provider: 'side', timeout: 9 },
        },
      }),
      'compression',
      { secret: none },
    );
    expect(explicit).toMatchObject({ baseUrl: 'http://aux/v1', model: 'aux-m', timeoutS: 9 });
    const byProvider = resolveAuxiliaryRoute(
      resolveConfig({ ...base, auxiliary: { compression: { provider: 'side' } } }),
      'compression',
      { secret: none },
    );
    expect(byProvider).toMatchObject({
      provider: 'side',
      baseUrl: 'http://side/v1',
      model: 'side-m',
    });
    const main = resolveAuxiliaryRoute(resolveConfig(base), 'compression', { secret: none });
    expect(main).toMatchObject({
      provider: 'custom',
      baseUrl: 'http://main/v1',
      model: 'main-model',
    });
  });

  it('merges the task extra_body into the request overrides', () => {
    const route = resolveAuxiliaryRoute(
      resolveConfig({ ...base, auxiliary: { title_generation: { extra_body: { top_k: 3 } } } }),
      'title_generation',
      { secret: none },
    );
    expect(route.requestOverrides).toEqual({ extra_body: { top_k: 3 } });
  });
});

describe('resolveFallbackRoutes', () => {
  it('resolves the chain in order and skips entries it cannot use, with a warning', () => {
    const config = resolveConfig({
      model: { base_url: 'http://main/v1', default: 'm' },
      fallback_providers: [
        'openrouter',
        { provider: 'custom', base_url: 'http://backup/v1', model: 'b' },
        { base_url: 'http://second/v1' },
      ],
    });
    const { routes, warnings } = resolveFallbackRoutes(config, undefined, { secret: none, home });
    expect(routes.map((route) => [route.baseUrl, route.model])).toEqual([
      ['http://backup/v1', 'b'],
      ['http://second/v1', 'm'],
    ]);
    expect(warnings).toEqual([
      `fallback_providers[0] skipped: ${AGENT_ERROR_MESSAGES.missingApiKey('openrouter', 'OPENROUTER_API_KEY', home)}`,
    ]);
  });

  it('warns when a remote (https) entry is left without a key, because no other key is sent to it; a local one or one with its own key is quiet', () => {
    const config = resolveConfig({
      model: { base_url: 'https://main.example/v1', default: 'm', api_key: 'sk-main' },
      fallback_providers: [
        { base_url: 'https://proxy.example/v1' },
        { base_url: 'https://keyed.example/v1', api_key: 'sk-keyed' },
        { base_url: 'http://127.0.0.1:11434/v1' },
      ],
    });
    const { routes, warnings, keyless } = resolveFallbackRoutes(config, undefined, {
      secret: none,
      home,
    });
    expect(warnings).toEqual([]);
    expect(routes.map((route) => route.apiKey)).toEqual([
      NO_KEY_REQUIRED,
      'sk-keyed',
      NO_KEY_REQUIRED,
    ]);
    expect(keyless).toEqual([
      "fallback_providers[0] (https://proxy.example/v1) has no api_key of its own and is sent no key: a provider's key or model.api_key goes only to its own endpoint",
    ]);
  });
});

/*
 * A key goes only to the endpoint it was configured for: `model.api_key` to `model.base_url`, a
 * provider's key (its `api_key`, `key_env` or built-in `.env` name) to that provider's own base
 * URL — never to another `base_url` an entry names without a key of its own.
 */
describe('keys stay with their endpoints', () => {
  const keys = secrets({ OPENAI_API_KEY: 'sk-openai', LAB_KEY: 'sk-lab-env' });
  const config = (extra: Record<string, unknown>) =>
    resolveConfig({
      model: { base_url: 'http://main.internal/v1', default: 'm', api_key: 'sk-main' },
      providers: { lab: { base_url: 'http://lab.internal/v1', api_key: 'sk-lab' } },
      custom_providers: [{ name: 'box', base_url: 'http://box.internal/v1', key_env: 'LAB_KEY' }],
      ...extra,
    });
  const fallbackKeys = (entries: unknown[]) =>
    resolveFallbackRoutes(config({ fallback_providers: entries }), undefined, {
      secret: keys,
      home,
    }).routes.map((route) => [route.baseUrl, route.apiKey]);

  it('a fallback entry with its own base_url and no key gets no key, not model.api_key (was: provider custom with the main key)', () => {
    expect(fallbackKeys([{ base_url: 'http://other.internal/v1' }])).toEqual([
      ['http://other.internal/v1', NO_KEY_REQUIRED],
    ]);
    expect(fallbackKeys([{ provider: 'custom', base_url: 'http://127.0.0.1:11434/v1' }])).toEqual([
      ['http://127.0.0.1:11434/v1', NO_KEY_REQUIRED],
    ]);
  });

  it('a fallback entry naming a provider and another base_url gets none of that provider’s keys', () => {
    expect(
      fallbackKeys([
        { provider: 'lab', base_url: 'http://other.internal/v1' },
        { provider: 'openai', base_url: 'http://127.0.0.1:8000/v1' },
        { provider: 'custom:box', base_url: 'http://other.internal/v1' },
      ]),
    ).toEqual([
      ['http://other.internal/v1', NO_KEY_REQUIRED],
      ['http://127.0.0.1:8000/v1', NO_KEY_REQUIRED],
      ['http://other.internal/v1', NO_KEY_REQUIRED],
    ]);
  });

  it('a fallback entry keeps the keys of its own endpoint, and its own api_key anywhere', () => {
    expect(
      fallbackKeys([
        { provider: 'custom', model: 'm2' },
        { base_url: 'http://MAIN.internal/v1/' },
        { provider: 'lab' },
        { provider: 'lab', base_url: 'http://lab.internal/v1/' },
        { provider: 'custom:box' },
        { provider: 'openai', base_url: 'https://api.openai.com/v1' },
        { base_url: 'https://api.openai.com/v1' },
        { provider: 'lab', base_url: 'http://other.internal/v1', api_key: 'sk-entry' },
      ]),
    ).toEqual([
      ['http://main.internal/v1', 'sk-main'],
      ['http://MAIN.internal/v1/', 'sk-main'],
      ['http://lab.internal/v1', 'sk-lab'],
      ['http://lab.internal/v1/', 'sk-lab'],
      ['http://box.internal/v1', 'sk-lab-env'],
      ['https://api.openai.com/v1', 'sk-openai'],
      ['https://api.openai.com/v1', 'sk-openai'],
      ['http://other.internal/v1', 'sk-entry'],
    ]);
  });

  it('the main provider’s key, steered by model.base_url, is not sent to a fallback’s other base_url', () => {
    const steered = resolveConfig({
      model: {
        provider: 'lab',
        base_url: 'http://proxy.internal/v1',
        default: 'm',
        api_key: 'sk-main',
      },
      providers: { lab: { base_url: 'http://lab.internal/v1', api_key: 'sk-lab' } },
      fallback_providers: [
        { provider: 'lab', base_url: 'http://other.internal/v1' },
        { provider: 'lab', base_url: 'http://proxy.internal/v1' },
      ],
    });
    const { routes } = resolveFallbackRoutes(steered, undefined, { secret: keys, home });
    expect(routes.map((route) => [route.baseUrl, route.apiKey])).toEqual([
      ['http://other.internal/v1', NO_KEY_REQUIRED],
      ['http://proxy.internal/v1', 'sk-main'],
    ]);
  });

  it('an auxiliary task with another base_url and no key gets no key; on the main base_url it shares the main key', () => {
    const task = (block: Record<string, unknown>) =>
      resolveAuxiliaryRoute(config({ auxiliary: { compression: block } }), 'compression', {
        secret: keys,
        home,
      });
    expect(task({ base_url: 'http://aux.internal/v1' }).apiKey).toBe(NO_KEY_REQUIRED);
    expect(task({ base_url: 'http://aux.internal/v1', provider: 'lab' }).apiKey).toBe(
      NO_KEY_REQUIRED,
    );
    expect(task({ base_url: 'http://aux.internal/v1', api_key: 'sk-aux' }).apiKey).toBe('sk-aux');
    expect(task({ base_url: 'http://main.internal/v1' }).apiKey).toBe('sk-main');
    expect(task({ provider: 'lab', model: 'lab-model' }).apiKey).toBe('sk-lab');
    expect(task({}).apiKey).toBe('sk-main');
  });
});
