import type { SupportedApiMode } from './api-mode.js';

/**
 * Everything one model call needs: where, who, which protocol and which extras. Produced by
 * `resolveRuntimeProvider` / `resolveAuxiliaryRoute`; a caller (delegation, the review engine)
 * may also build one directly and hand it to `createAgent({ route })`.
 */
export interface ModelRoute {
  /** Provider name as configured (`openai`, `custom`, `custom:lab`, a `providers.<name>` key). */
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: SupportedApiMode;
  /** Extra request fields merged into every call (an `extra_body` key is merged too). */
  readonly requestOverrides?: Readonly<Record<string, unknown>>;
  readonly contextLength?: number;
  readonly maxTokens?: number;
  readonly reasoningEffort?: string;
  /** Per-call timeout, seconds. */
  readonly timeoutS?: number;
}

/** A route with its secret removed, for events and logs. */
export function describeRoute(route: ModelRoute): {
  provider: string;
  model: string;
  baseUrl: string;
  apiMode: SupportedApiMode;
} {
  return {
    provider: route.provider,
    model: route.model,
    baseUrl: route.baseUrl,
    apiMode: route.apiMode,
  };
}
