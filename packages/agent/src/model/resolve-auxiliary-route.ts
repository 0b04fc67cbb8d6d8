import type { HermesConfig } from '@hermes/config';
import type { ModelRoute } from './model-route.js';
import {
  type ResolveRuntimeProviderOptions,
  resolveRuntimeProvider,
} from './resolve-runtime-provider.js';

export type AuxiliaryRouteOptions = Pick<ResolveRuntimeProviderOptions, 'secret' | 'home'>;

/**
 * The route for a side task (`auxiliary.<task>`: compression, title_generation, vision, …):
 * an explicit `base_url` first, then a named `provider` (`auto` means none), then the main
 * model's route. A task `model` overrides the model id at every level; `timeout`, `extra_body`
 * and `reasoning_effort` ride along.
 */
export function resolveAuxiliaryRoute(
  config: HermesConfig,
  task: string,
  options: AuxiliaryRouteOptions = {},
): ModelRoute {
  const block = config.auxiliary.tasks[task];
  const base = { ...(options.secret ? { secret: options.secret } : {}) };
  const withHome = options.home ? { ...base, home: options.home } : base;
  const model = block?.model || undefined;
  let route: ModelRoute;
  if (block?.baseUrl) {
    route = resolveRuntimeProvider(config, {
      ...withHome,
      requested: block.provider && block.provider !== 'auto' ? block.provider : 'custom',
      baseUrl: block.baseUrl,
      ...(block.apiKey ? { apiKey: block.apiKey } : {}),
      ...(block.apiMode ? { apiMode: block.apiMode } : {}),
      ...(model ? { model } : { model: config.model.model }),
    });
  } else if (block?.provider && block.provider !== 'auto') {
    route = resolveRuntimeProvider(config, {
      ...withHome,
      requested: block.provider,
      ...(model ? { model } : {}),
      ...(block.apiKey ? { apiKey: block.apiKey } : {}),
      ...(block.apiMode ? { apiMode: block.apiMode } : {}),
    });
  } else {
    route = resolveRuntimeProvider(config, { ...withHome, ...(model ? { model } : {}) });
  }
  if (!block) return route;
  const extraBody = Object.keys(block.extraBody).length > 0 ? block.extraBody : undefined;
  return {
    ...route,
    ...(block.timeoutS === undefined ? {} : { timeoutS: block.timeoutS }),
    ...(block.reasoningEffort ? { reasoningEffort: block.reasoningEffort } : {}),
    ...(extraBody
      ? {
          requestOverrides: {
            ...route.requestOverrides,
            extra_body: {
              ...(route.requestOverrides?.extra_body as Record<string, unknown> | undefined),
              ...extraBody,
            },
          },
        }
      : {}),
  };
}
