import type { FallbackProviderConfig, HermesConfig } from '@hermes/config';
import { AgentError } from '../errors.js';
import { schemeOf } from './endpoint-url.js';
import type { ModelRoute } from './model-route.js';
import { NO_KEY_REQUIRED } from './provider-catalog.js';
import {
  type ResolveRuntimeProviderOptions,
  resolveRuntimeProvider,
} from './resolve-runtime-provider.js';

export interface FallbackRoutes {
  readonly routes: ModelRoute[];
  /** One sentence per entry that could not be resolved (it is skipped, never fatal). */
  readonly warnings: string[];
  /** One sentence per remote (https) entry kept without a key: no other key is sent to it. */
  readonly keyless: string[];
}

/**
 * Resolves a fallback chain (default `fallback_providers`) into routes, in order. An entry that
 * cannot be resolved (no key, unknown provider) is skipped with a warning, so a broken backup
 * never stops the main route from working.
 */
export function resolveFallbackRoutes(
  config: HermesConfig,
  entries: readonly FallbackProviderConfig[] = config.fallbackProviders,
  options: Pick<ResolveRuntimeProviderOptions, 'secret' | 'home'> = {},
): FallbackRoutes {
  const routes: ModelRoute[] = [];
  const warnings: string[] = [];
  const keyless: string[] = [];
  for (const [index, entry] of entries.entries()) {
    try {
      const route = resolveRuntimeProvider(config, {
        ...options,
        requested: entry.provider || 'custom',
        ...(entry.model ? { model: entry.model } : { model: config.model.model }),
        ...(entry.baseUrl ? { baseUrl: entry.baseUrl } : {}),
        ...(entry.apiKey ? { apiKey: entry.apiKey } : {}),
        ...(entry.apiMode ? { apiMode: entry.apiMode } : {}),
      });
      routes.push(route);
      // Keys stay with their endpoints, so a remote endpoint named without a key of its own is
      // sent none — say so now rather than leave the user a 401 from the backup when it is needed.
      if (entry.baseUrl && route.apiKey === NO_KEY_REQUIRED && schemeOf(route.baseUrl) === 'https')
        keyless.push(
          `fallback_providers[${index}] (${route.baseUrl}) has no api_key of its own and is sent no key: a provider's key or model.api_key goes only to its own endpoint`,
        );
    } catch (error) {
      if (!AgentError.isInstance(error)) throw error;
      warnings.push(`fallback_providers[${index}] skipped: ${error.message}`);
    }
  }
  return { routes, warnings, keyless };
}
