import { type DelegationConfig, getSecret, resolveFallbackProviders } from '@hermes/config';
import { AgentError } from '../errors.js';
import type { Agent } from '../loop/agent-types.js';
import { isSupportedApiMode, normalizeApiMode, type SupportedApiMode } from '../model/api-mode.js';
import type { ModelRoute } from '../model/model-route.js';
import { DEFAULT_CONTEXT_LENGTH } from '../model/provider-catalog.js';
import { resolveFallbackRoutes } from '../model/resolve-fallback-routes.js';
import { resolveRuntimeProvider } from '../model/resolve-runtime-provider.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';

/**
 * The block that owns a child's route **and** its fallback chain: `credentialsCfg` of an
 * internal caller (the review engine's `auxiliary.review`), else the `delegation` section.
 */
export interface DelegationRoutingConfig {
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
  readonly requestOverrides?: Readonly<Record<string, unknown>> | undefined;
  /** The chain this block declares (`undefined`: none declared; `[]`: fallback disabled). */
  readonly fallbackProviders?: readonly unknown[] | undefined;
  /** Names the block in warnings (`delegation`, `auxiliary.review`). */
  readonly where?: string;
}

/** Where a child runs. */
export interface ChildRuntime {
  readonly route: ModelRoute;
  readonly fallbackRoutes: readonly ModelRoute[];
  /** A provider, base_url or model was pinned: the chain is the block's own, never the parent's. */
  readonly pinned: boolean;
  /** Fallback entries that were skipped. */
  readonly warnings: readonly string[];
}

/** Providers reached through their own SDKs (never a plain base_url). */
const NATIVE_SDK_PROVIDERS = new Set(['bedrock', 'vertex', 'google', 'google-genai']);

function hostAndPath(baseUrl: string): { host: string; path: string } | undefined {
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return { host: url.hostname.toLowerCase(), path: url.pathname.replace(/\/+$/, '') };
  } catch {
    return undefined;
  }
}

/** §6.5 direct-endpoint heuristics: an explicit valid `api_mode` wins, then the URL. */
function directApiMode(baseUrl: string, explicit: string): string {
  const normalized = explicit ? normalizeApiMode(explicit) : undefined;
  if (normalized) return normalized;
  const parts = hostAndPath(baseUrl);
  if (!parts) return 'chat_completions';
  if (parts.path.endsWith('/anthropic')) return 'anthropic_messages';
  if (parts.host === 'api.kimi.com' && parts.path.startsWith('/coding'))
    return 'anthropic_messages';
  if (parts.host === 'api.anthropic.com') return 'anthropic_messages';
  if (parts.host === 'chatgpt.com' && parts.path.startsWith('/backend-api/codex'))
    return 'codex_responses';
  return 'chat_completions';
}

function directProvider(baseUrl: string, apiMode: string): string {
  const parts = hostAndPath(baseUrl);
  if (
    apiMode === 'codex_responses' &&
    parts?.host === 'chatgpt.com' &&
    parts.path.startsWith('/backend-api/codex')
  )
    return 'openai-codex';
  if (apiMode === 'anthropic_messages' && parts?.host === 'api.anthropic.com') return 'anthropic';
  return 'custom';
}

/** `request_overrides` merged: top-level keys replaced, `extra_body` merged one level. */
export function mergeRequestOverrides(
  base: Readonly<Record<string, unknown>> | undefined,
  over: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (!base) return over;
  if (!over) return base;
  const merged: Record<string, unknown> = { ...base, ...over };
  const baseExtra = base.extra_body;
  const overExtra = over.extra_body;
  if (isMapping(baseExtra) && isMapping(overExtra))
    merged.extra_body = { ...baseExtra, ...overExtra };
  return merged;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withOverrides(
  route: Omit<ModelRoute, 'requestOverrides'>,
  overrides: Readonly<Record<string, unknown>> | undefined,
): ModelRoute {
  return overrides && Object.keys(overrides).length > 0
    ? { ...route, requestOverrides: overrides }
    : route;
}

/** Routing fields of the `delegation` section (the default routing owner). */
export function delegationRouting(delegation: DelegationConfig): DelegationRoutingConfig {
  return {
    provider: delegation.provider,
    model: delegation.model,
    baseUrl: delegation.baseUrl,
    apiKey: delegation.apiKey,
    apiMode: delegation.apiMode,
    requestOverrides: delegation.requestOverrides,
    fallbackProviders: delegation.fallbackProviders,
    where: 'delegation',
  };
}

/**
 * The child's route and fallback chain from its routing owner (§6.5, §4.11): a `base_url` is a
 * direct endpoint (key inherited when empty); no provider inherits the parent's route (with a
 * model override); a provider is resolved like any runtime provider. A pinned block (provider,
 * base_url or model) owns its chain: its `fallback_providers`, none when absent or empty — never
 * the parent's. Returns `{ error }` with the message the caller shows.
 */
export function resolveChildRuntime(
  parent: Agent,
  routing: DelegationRoutingConfig,
): ChildRuntime | { error: string } {
  const cfg = {
    provider: routing.provider.trim(),
    model: routing.model.trim(),
    baseUrl: routing.baseUrl.trim(),
    apiKey: routing.apiKey.trim(),
    apiMode: routing.apiMode.trim().toLowerCase(),
  };
  if (cfg.provider.toLowerCase() === 'auto') cfg.provider = '';
  const where = routing.where ?? 'delegation';
  const secret = parent.options.secret ?? getSecret;
  let parentRoute: ModelRoute;
  try {
    parentRoute = parent.route();
  } catch (error) {
    if (AgentError.isInstance(error)) return { error: error.message };
    throw error;
  }
  const reasoningEffort =
    parent.config.delegation.reasoningEffort || parentRoute.reasoningEffort || '';
  const withReasoning = (route: ModelRoute): ModelRoute => {
    const { reasoningEffort: _dropped, ...rest } = route;
    return reasoningEffort ? { ...rest, reasoningEffort } : rest;
  };
  let route: ModelRoute;
  if (cfg.baseUrl && !NATIVE_SDK_PROVIDERS.has(cfg.provider)) {
    if (!hostAndPath(cfg.baseUrl)) return { error: `${where}.base_url is not a valid http(s) URL` };
    const apiMode = directApiMode(cfg.baseUrl, cfg.apiMode);
    if (!isSupportedApiMode(apiMode as SupportedApiMode))
      return { error: MESSAGES.anthropicUnsupported(`${where}.base_url ${cfg.baseUrl}`) };
    let namedOverrides: Readonly<Record<string, unknown>> | undefined;
    if (cfg.provider) {
      try {
        namedOverrides = resolveRuntimeProvider(parent.config, {
          requested: cfg.provider,
          baseUrl: cfg.baseUrl,
          model: cfg.model || parentRoute.model,
          secret,
          home: parent.home,
        }).requestOverrides;
      } catch {
        namedOverrides = undefined;
      }
    }
    const model = cfg.model || parentRoute.model;
    route = withOverrides(
      {
        provider: directProvider(cfg.baseUrl, apiMode),
        model,
        baseUrl: cfg.baseUrl,
        apiKey: cfg.apiKey || parentRoute.apiKey,
        apiMode: apiMode as SupportedApiMode,
        contextLength:
          model === parentRoute.model
            ? (parentRoute.contextLength ?? DEFAULT_CONTEXT_LENGTH)
            : DEFAULT_CONTEXT_LENGTH,
        ...(parentRoute.timeoutS === undefined ? {} : { timeoutS: parentRoute.timeoutS }),
        ...(parentRoute.maxTokens === undefined ? {} : { maxTokens: parentRoute.maxTokens }),
      },
      mergeRequestOverrides(namedOverrides, routing.requestOverrides),
    );
  } else if (!cfg.provider) {
    const model = cfg.model || parentRoute.model;
    const { requestOverrides: parentOverrides, ...inherited } = parentRoute;
    route = withOverrides(
      {
        ...inherited,
        model,
        ...(model === parentRoute.model ? {} : { contextLength: DEFAULT_CONTEXT_LENGTH }),
      },
      mergeRequestOverrides(parentOverrides, routing.requestOverrides),
    );
  } else {
    try {
      const resolved = resolveRuntimeProvider(parent.config, {
        requested: cfg.provider,
        ...(cfg.model ? { model: cfg.model } : {}),
        ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
        ...(cfg.apiMode ? { apiMode: cfg.apiMode } : {}),
        secret,
        home: parent.home,
      });
      const { requestOverrides: runtimeOverrides, ...rest } = resolved;
      route = withOverrides(
        {
          ...rest,
          ...(parentRoute.maxTokens === undefined || rest.maxTokens !== undefined
            ? {}
            : { maxTokens: parentRoute.maxTokens }),
        },
        mergeRequestOverrides(runtimeOverrides, routing.requestOverrides),
      );
    } catch (error) {
      if (!AgentError.isInstance(error)) throw error;
      if (error.code === 'missing_api_key')
        return { error: MESSAGES.providerNoKey(cfg.provider, error.message) };
      if (error.code === 'model_not_configured' || error.code === 'invalid_base_url')
        return { error: MESSAGES.providerNoBaseUrl(cfg.provider, error.message) };
      return { error: MESSAGES.providerUnresolved(cfg.provider, error.message) };
    }
  }
  route = withReasoning(route);
  const pinned = Boolean(cfg.provider || cfg.baseUrl || cfg.model);
  if (!pinned) {
    let fallbacks: readonly ModelRoute[] = [];
    try {
      fallbacks = parent.fallbackRoutes();
    } catch {
      fallbacks = [];
    }
    return { route, fallbackRoutes: fallbacks, pinned, warnings: [] };
  }
  const warnings: string[] = [];
  const entries = resolveFallbackProviders(
    routing.fallbackProviders ?? [],
    `${where}.fallback_providers`,
    (message) => warnings.push(message),
  );
  const chain = resolveFallbackRoutes(parent.config, entries, { secret, home: parent.home });
  return {
    route,
    fallbackRoutes: chain.routes.map(withReasoning),
    pinned,
    warnings: [...warnings, ...chain.warnings, ...chain.keyless],
  };
}
