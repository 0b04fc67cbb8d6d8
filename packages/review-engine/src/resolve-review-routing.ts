import { isRecord } from './message-text.js';

/**
 * The review's routing owner: the model and endpoint the reviewer runs on. Each field is a trimmed
 * string, `''` when unset. `null` (from `resolveReviewRouting`) means "inherit the primary agent's
 * model, provider and credentials".
 */
export interface ReviewCredentials {
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
}

/**
 * Anything holding an `auxiliary.review` block: the raw `config.yaml` mapping (`loadConfig().raw`
 * from `@hermes/config`, snake_case keys such as `base_url`), or the loaded `HermesConfig`
 * (`loadConfig().config`, camelCase keys such as `baseUrl`), or a hand-made object of either shape.
 */
export interface ReviewConfigInput {
  readonly auxiliary?: unknown;
}

/**
 * A value as the reference's "falsy becomes empty" rule sees it: missing, null, false, 0, NaN, an
 * empty string, list or mapping → `''` (JavaScript alone would keep `[]` and `{}`); anything else
 * as text, trimmed.
 */
function field(value: unknown): string {
  if (value === undefined || value === null || value === false || value === '') return '';
  if (typeof value === 'number') return value === 0 || Number.isNaN(value) ? '' : String(value);
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.length === 0 ? '' : JSON.stringify(value);
  if (typeof value === 'object')
    return Object.keys(value).length === 0 ? '' : JSON.stringify(value);
  return String(value).trim();
}

function reviewBlock(
  config: ReviewConfigInput | null | undefined,
): Record<string, unknown> | undefined {
  if (!isRecord(config)) return undefined;
  const auxiliary = config.auxiliary;
  if (auxiliary === undefined || auxiliary === null) return {};
  if (!isRecord(auxiliary)) return undefined;
  const review = auxiliary.review;
  if (review === undefined || review === null) return {};
  return isRecord(review) ? review : undefined;
}

/** The snake_case key when the block has it, else the camelCase one. */
function read(block: Record<string, unknown>, snake: string, camel: string): unknown {
  return snake in block ? block[snake] : block[camel];
}

/**
 * Where the reviewer runs, from `auxiliary.review`: `{ provider, model, baseUrl, apiKey, apiMode }`
 * when the block pins a provider, model or base URL; `null` (inherit the primary agent's route)
 * when it does not — a missing section, `provider: auto` with no model and no base URL, or only an
 * `api_key` / `api_mode`. `provider: auto` with a model pins that model on the primary agent's
 * provider (`provider` is then `''`). Never throws: an unreadable config means `null`.
 */
export function resolveReviewRouting(
  config: ReviewConfigInput | null | undefined,
): ReviewCredentials | null {
  try {
    const block = reviewBlock(config);
    if (block === undefined) return null;
    let provider = field(read(block, 'provider', 'provider'));
    if (provider.toLowerCase() === 'auto') provider = '';
    const credentials: ReviewCredentials = {
      provider,
      model: field(read(block, 'model', 'model')),
      baseUrl: field(read(block, 'base_url', 'baseUrl')),
      apiKey: field(read(block, 'api_key', 'apiKey')),
      apiMode: field(read(block, 'api_mode', 'apiMode')),
    };
    if (credentials.provider === '' && credentials.model === '' && credentials.baseUrl === '')
      return null;
    return credentials;
  } catch {
    return null;
  }
}

/**
 * The fallback chain a pinned review route owns: `auxiliary.review.fallback_providers`
 * (`fallbackProviders`) when it is a list, else `[]` — a pinned reviewer never borrows the primary
 * agent's chain or `delegation.fallback_providers`, and an explicit empty list turns fallback off.
 * Always `[]` when the route is not pinned (`resolveReviewRouting` gives `null`).
 */
export function resolveReviewFallbackProviders(
  config: ReviewConfigInput | null | undefined,
): readonly unknown[] {
  try {
    if (resolveReviewRouting(config) === null) return [];
    const block = reviewBlock(config);
    const chain =
      block === undefined ? undefined : read(block, 'fallback_providers', 'fallbackProviders');
    return Array.isArray(chain) ? [...chain] : [];
  } catch {
    return [];
  }
}
