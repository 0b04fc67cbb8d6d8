import type { HermesConfig } from '@hermes/config';
import { createModelClient, type ModelClient } from '../model/model-client.js';
import type { ModelRoute } from '../model/model-route.js';
import { resolveFallbackRoutes } from '../model/resolve-fallback-routes.js';
import { resolveRuntimeProvider, type SecretReader } from '../model/resolve-runtime-provider.js';
import type { CreateAgentOptions } from './agent-types.js';

/** A warning about the fallback chain, as the `warning` event reports it. */
export interface RouteWarning {
  readonly code: 'fallback_skipped' | 'fallback_without_key';
  readonly message: string;
}

/** Where an agent's turns go: the main route, then its fallback chain. */
export interface AgentRoutes {
  readonly main: ModelRoute;
  readonly fallbacks: readonly ModelRoute[];
  /** Fallback entries skipped or kept without a key (reported at each turn's start). */
  readonly warnings: readonly RouteWarning[];
}

/** An agent's routes, resolved on first use, and the one model client its turns share. */
export interface AgentModel {
  /** Resolves the routes the first time it succeeds, then answers the same ones; throws `AgentError`. */
  routes(): AgentRoutes;
  /** The routes if a turn (or `route()`) resolved them already. */
  resolvedRoutes(): AgentRoutes | undefined;
  /** One client per agent: its SDK clients and connections are reused turn after turn. */
  client(main: ModelRoute, fallbacks: readonly ModelRoute[]): ModelClient;
}

export function createAgentModel(input: {
  readonly options: CreateAgentOptions;
  readonly config: HermesConfig;
  readonly secret: SecretReader;
  readonly home: string;
}): AgentModel {
  const { options, config, secret, home } = input;
  let routes: AgentRoutes | undefined;
  let modelClient: ModelClient | undefined;
  return {
    routes() {
      if (routes) return routes;
      const main = options.route ?? resolveRuntimeProvider(config, { secret, home });
      if (options.fallbackRoutes || options.route) {
        routes = { main, fallbacks: options.fallbackRoutes ?? [], warnings: [] };
      } else {
        const chain = resolveFallbackRoutes(config, config.fallbackProviders, { secret, home });
        routes = {
          main,
          fallbacks: chain.routes,
          warnings: [
            ...chain.warnings.map((message) => ({ code: 'fallback_skipped' as const, message })),
            ...chain.keyless.map((message) => ({ code: 'fallback_without_key' as const, message })),
          ],
        };
      }
      return routes;
    },
    resolvedRoutes: () => routes,
    client(main, fallbacks) {
      modelClient ??= createModelClient({
        routes: [main, ...fallbacks],
        maxRetries: options.maxRetries ?? config.agent.apiMaxRetries,
        stream: options.stream ?? config.agent.stream,
      });
      return modelClient;
    },
  };
}
