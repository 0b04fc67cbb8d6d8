import {
  type CustomProviderConfig,
  getHermesHome,
  getSecret,
  type HermesConfig,
  type ModelSettingsConfig,
  type ProviderConfig,
} from '@hermes/config';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import { detectApiMode, isSupportedApiMode, normalizeApiMode } from './api-mode.js';
import { endpointOf, schemeOf } from './endpoint-url.js';
import type { ModelRoute } from './model-route.js';
import {
  builtinProviderAt,
  DEFAULT_CONTEXT_LENGTH,
  findBuiltinProvider,
  NO_KEY_REQUIRED,
} from './provider-catalog.js';

/** Reads a secret by name; defaults to `@hermes/config`'s `getSecret` (the profile's scope). */
export type SecretReader = (name: string) => string | undefined;

export interface ResolveRuntimeProviderOptions {
  /** A provider to use instead of `model.provider` (`auto`, a name, `custom`, `custom:<name>`). */
  readonly requested?: string;
  /** A model id to use instead of the configured default. */
  readonly model?: string;
  /**
   * A direct endpoint; wins over the provider's own `base_url`. Unless it is that same endpoint,
   * none of the provider's keys go with it: only `apiKey`, or a built-in's key at its own API.
   */
  readonly baseUrl?: string;
  /** The key for this route (with `baseUrl`: that endpoint's own key). */
  readonly apiKey?: string;
  readonly apiMode?: string;
  readonly secret?: SecretReader;
  /** The home named in "set <KEY> in <home>/.env" (default `getHermesHome()`). */
  readonly home?: string;
}

interface Candidate {
  provider: string;
  baseUrl: string;
  apiKey: string;
  keyEnv: string;
  /** Custom endpoints may run without a key (a local server). */
  keyOptional: boolean;
  apiMode: string;
  defaultModel: string;
  models: Readonly<Record<string, ModelSettingsConfig>>;
  requestOverrides: Readonly<Record<string, unknown>> | undefined;
}

function fromProviderBlock(entry: ProviderConfig): Candidate {
  return {
    provider: entry.name,
    baseUrl: entry.baseUrl || findBuiltinProvider(entry.name)?.baseUrl || '',
    apiKey: entry.apiKey,
    keyEnv: entry.keyEnv || findBuiltinProvider(entry.name)?.keyEnv || '',
    keyOptional: !findBuiltinProvider(entry.name),
    apiMode: entry.apiMode,
    defaultModel: entry.defaultModel,
    models: entry.models,
    requestOverrides: entry.requestOverrides,
  };
}

function fromCustomProvider(entry: CustomProviderConfig, provider: string): Candidate {
  return {
    provider,
    baseUrl: entry.baseUrl,
    apiKey: entry.apiKey,
    keyEnv: entry.keyEnv,
    keyOptional: true,
    apiMode: entry.apiMode,
    defaultModel: entry.model,
    models: entry.models,
    requestOverrides: entry.requestOverrides,
  };
}

function mainCustom(config: HermesConfig): Candidate {
  return {
    provider: 'custom',
    baseUrl: config.model.baseUrl,
    apiKey: config.model.apiKey,
    keyEnv: '',
    keyOptional: true,
    apiMode: config.model.apiMode,
    defaultModel: '',
    models: {},
    requestOverrides: undefined,
  };
}

function candidateFor(
  config: HermesConfig,
  requested: string,
  secret: SecretReader,
  explicitBaseUrl: boolean,
): Candidate {
  if (requested === '' || requested === 'auto') {
    if (config.model.baseUrl || explicitBaseUrl) return mainCustom(config);
    for (const name of ['openrouter', 'openai', 'nous', 'xai', 'deepseek', 'groq']) {
      const builtin = findBuiltinProvider(name);
      if (builtin && secret(builtin.keyEnv)) return candidateFor(config, name, secret, false);
    }
    throw new AgentError({
      code: 'model_not_configured',
      message: AGENT_ERROR_MESSAGES.baseUrlMissing,
    });
  }
  if (requested === 'custom') {
    if (!config.model.baseUrl && !explicitBaseUrl)
      throw new AgentError({
        code: 'model_not_configured',
        message: AGENT_ERROR_MESSAGES.baseUrlMissing,
      });
    return mainCustom(config);
  }
  if (requested.startsWith('custom:')) {
    const name = requested.slice('custom:'.length);
    const entry = config.customProviders.find((candidate) => candidate.name === name);
    if (!entry)
      throw new AgentError({
        code: 'unknown_provider',
        message: AGENT_ERROR_MESSAGES.unknownProvider(requested),
        provider: requested,
      });
    return fromCustomProvider(entry, requested);
  }
  const block = config.providers[requested];
  if (block) return fromProviderBlock(block);
  const builtin = findBuiltinProvider(requested);
  if (builtin) {
    return {
      provider: builtin.name,
      baseUrl: builtin.baseUrl,
      apiKey: '',
      keyEnv: builtin.keyEnv,
      keyOptional: false,
      apiMode: '',
      defaultModel: '',
      models: {},
      requestOverrides: undefined,
    };
  }
  // A bare custom_providers name keeps its configured name (not `custom`).
  const custom = config.customProviders.find((candidate) => candidate.name === requested);
  if (custom) return fromCustomProvider(custom, requested);
  throw new AgentError({
    code: 'unknown_provider',
    message: AGENT_ERROR_MESSAGES.unknownProvider(requested),
    provider: requested,
  });
}

function validBaseUrl(value: string): boolean {
  const scheme = schemeOf(value);
  return scheme === 'http' || scheme === 'https';
}

function sameEndpoint(left: string, right: string): boolean {
  return left !== '' && right !== '' && endpointOf(left) === endpointOf(right);
}

/**
 * The one place a model route is decided: CLI, gateway, delegation and the review engine all
 * call it. Order: an explicit `baseUrl` option, the requested (or configured) provider, auto
 * detection. Keys are read through the secret scope (`getSecret`), never `process.env` directly,
 * so a multiplexing gateway's profiles never see each other's keys. Throws `AgentError` with a
 * message that says what to set.
 */
export function resolveRuntimeProvider(
  config: HermesConfig,
  options: ResolveRuntimeProviderOptions = {},
): ModelRoute {
  const secret = options.secret ?? getSecret;
  const requested = (options.requested ?? config.model.provider).trim();
  const isMain = options.requested === undefined || options.requested === config.model.provider;
  const candidate = candidateFor(
    config,
    requested.toLowerCase() === 'auto' ? '' : requested,
    secret,
    Boolean(options.baseUrl),
  );
  // The main block's base_url / api_key steer the main provider (e.g. openai through a proxy).
  if (isMain && candidate.provider !== 'custom' && !requested.startsWith('custom')) {
    if (config.model.baseUrl) candidate.baseUrl = config.model.baseUrl;
    if (config.model.apiKey) candidate.apiKey = config.model.apiKey;
    if (config.model.apiMode) candidate.apiMode = config.model.apiMode;
  }
  // A key belongs to the endpoint it was configured for. Another base_url (a fallback entry's, an
  // auxiliary task's) gets none of the candidate's keys — `model.api_key`, a provider's `api_key`
  // or its `.env` secret — only a key of its own, a built-in's at that built-in's own API (below),
  // or none (a local server).
  if (options.baseUrl) {
    if (!sameEndpoint(options.baseUrl, candidate.baseUrl)) {
      candidate.apiKey = '';
      candidate.keyEnv = '';
      candidate.keyOptional = true;
    }
    candidate.baseUrl = options.baseUrl;
  }
  if (options.apiKey) candidate.apiKey = options.apiKey;
  if (options.apiMode) candidate.apiMode = options.apiMode;

  if (!candidate.baseUrl)
    throw new AgentError({
      code: 'model_not_configured',
      message: AGENT_ERROR_MESSAGES.baseUrlMissing,
      provider: candidate.provider,
    });
  if (!validBaseUrl(candidate.baseUrl))
    throw new AgentError({
      code: 'invalid_base_url',
      message: AGENT_ERROR_MESSAGES.invalidBaseUrl(
        candidate.provider === 'custom'
          ? 'model.base_url'
          : `the base_url of ${candidate.provider}`,
      ),
      provider: candidate.provider,
    });

  // An endpoint without a key of its own that is a known provider's API (`model.base_url:
  // https://api.openai.com/v1`) uses that provider's key from .env, and must have one.
  if (!candidate.apiKey && !candidate.keyEnv) {
    const known = builtinProviderAt(candidate.baseUrl);
    if (known) {
      candidate.keyEnv = known.keyEnv;
      candidate.keyOptional = false;
    }
  }

  const home = options.home ?? getHermesHome();
  let apiKey = candidate.apiKey || (candidate.keyEnv ? (secret(candidate.keyEnv) ?? '') : '');
  if (!apiKey) {
    if (!candidate.keyOptional)
      throw new AgentError({
        code: 'missing_api_key',
        message: AGENT_ERROR_MESSAGES.missingApiKey(candidate.provider, candidate.keyEnv, home),
        provider: candidate.provider,
      });
    if (candidate.keyEnv)
      throw new AgentError({
        code: 'missing_api_key',
        message: AGENT_ERROR_MESSAGES.missingApiKey(candidate.provider, candidate.keyEnv, home),
        provider: candidate.provider,
      });
    apiKey = NO_KEY_REQUIRED;
  }

  const model = options.model || (isMain ? config.model.model : '') || candidate.defaultModel;
  if (!model)
    throw new AgentError({
      code: 'model_id_missing',
      message: AGENT_ERROR_MESSAGES.modelIdMissing,
      provider: candidate.provider,
    });

  const apiMode = candidate.apiMode
    ? normalizeApiMode(candidate.apiMode)
    : detectApiMode(candidate.baseUrl);
  if (apiMode === undefined || !isSupportedApiMode(apiMode))
    throw new AgentError({
      code: 'unsupported_api_mode',
      message: AGENT_ERROR_MESSAGES.unsupportedApiMode(apiMode ?? candidate.apiMode),
      provider: candidate.provider,
    });

  const settings = candidate.models[model];
  const contextLength =
    (isMain ? config.model.contextLength : undefined) ??
    settings?.contextLength ??
    DEFAULT_CONTEXT_LENGTH;
  const maxTokens = (isMain ? config.model.maxTokens : undefined) ?? settings?.maxTokens;
  const reasoningEffort = config.agent.reasoningEffort;
  return {
    provider: candidate.provider,
    model,
    baseUrl: candidate.baseUrl,
    apiKey,
    apiMode,
    contextLength,
    timeoutS: config.agent.apiTimeoutS,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(candidate.requestOverrides ? { requestOverrides: candidate.requestOverrides } : {}),
    ...(reasoningEffort ? { reasoningEffort } : {}),
  };
}
