/** A provider the agent knows without configuration. */
export interface BuiltinProvider {
  readonly name: string;
  readonly baseUrl: string;
  /** The `.env` name that holds its key. */
  readonly keyEnv: string;
}

/**
 * Built-in providers, in auto-detection order (with `model.provider: auto` and no
 * `model.base_url`, the first one whose key is present wins).
 */
export const BUILTIN_PROVIDERS: readonly BuiltinProvider[] = [
  { name: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY' },
  { name: 'openai', baseUrl: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY' },
  { name: 'nous', baseUrl: 'https://inference-api.nousresearch.com/v1', keyEnv: 'NOUS_API_KEY' },
  { name: 'xai', baseUrl: 'https://api.x.ai/v1', keyEnv: 'XAI_API_KEY' },
  { name: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', keyEnv: 'DEEPSEEK_API_KEY' },
  { name: 'groq', baseUrl: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY' },
  { name: 'mistral', baseUrl: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY' },
  { name: 'together', baseUrl: 'https://api.together.xyz/v1', keyEnv: 'TOGETHER_API_KEY' },
  {
    name: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    keyEnv: 'GEMINI_API_KEY',
  },
];

export function findBuiltinProvider(name: string): BuiltinProvider | undefined {
  return BUILTIN_PROVIDERS.find((provider) => provider.name === name);
}

/**
 * The built-in provider a base URL points at: same `https:` origin as its API (exact host, so
 * `api.openai.com.evil.test` is not OpenAI; any path, so a versioned or trailing-slash URL is).
 * Its key may go there, and nowhere else.
 */
export function builtinProviderAt(baseUrl: string): BuiltinProvider | undefined {
  let origin: string;
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== 'https:') return undefined;
    origin = `${url.protocol}//${url.host.replace(/\.$/, '')}`;
  } catch {
    return undefined;
  }
  return BUILTIN_PROVIDERS.find((provider) => new URL(provider.baseUrl).origin === origin);
}

/** Sent to custom endpoints that need no key (the SDK requires a non-empty one). */
export const NO_KEY_REQUIRED = 'no-key-required';

/** The context window assumed when neither config nor a provider block names one. */
export const DEFAULT_CONTEXT_LENGTH = 128_000;
