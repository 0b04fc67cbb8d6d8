import type { FallbackProviderConfig, HermesConfig } from '@hermes/config';
import { AgentError } from '../errors.js';
import type { ModelRoute } from './model-route.js';
import {
  type ResolveRuntimeProviderOptions,
  resolveRuntimeProvider,
} from './resolve-runtime-provider.js';

export interface FallbackRoutes {
  readonly routes: ModelRoute[];
  /** One sentence per entry that could not be resolved (it is skipped, never fatal). */
  readonly warnings: string[];
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
  for (const [index, entry] of entries.entries()) {
    try {
      routes.push(
        resolveRuntimeProvider(config, {
          ...options,
          requested: entry.provider || 'custom',
          ...(entry.model ? { model: entry.model } : { model: config.model.model }),
          ...(entry.baseUrl ? { baseUrl: entry.baseUrl } : {}),
          ...(entry.apiKey ? { apiKey: entry.apiKey } : {}),
          ...(entry.apiMode ? { apiMode: entry.apiMode } : {}),
        }),
      );
    } catch (error) {
      if (!AgentError.isInstance(error)) throw error;
      warnings.push(`fallback_providers[${index}] skipped: ${error.message}`);
    }
  }
  return { routes, warnings };
}
