import { apiServerSectionSchema, platformSchema } from './config-schema.js';
import type { ApiServerConfig, PlatformConfig } from './config-types.js';
import {
  DEFAULT_API_SERVER_HOST,
  DEFAULT_API_SERVER_MAX_REQUEST_BYTES,
  DEFAULT_API_SERVER_PORT,
} from './defaults.js';
import { getSecret } from './home.js';
import { booleanKnob, integerKnob, type Warn } from './knobs.js';
import { isRecord, parseLenient, text } from './lenient-section.js';

// Platforms, their toolsets and the API server: the surfaces the gateway serves.

export function resolvePlatforms(value: unknown, warn: Warn): Record<string, PlatformConfig> {
  const platforms: Record<string, PlatformConfig> = {};
  if (value === null || value === undefined) return platforms;
  if (!isRecord(value)) {
    warn('platforms must be a mapping; ignored');
    return platforms;
  }
  for (const [name, block] of Object.entries(value)) {
    const section = parseLenient(platformSchema, block, `platforms.${name}`, warn);
    const enabled = booleanKnob(section.enabled, false, { key: `platforms.${name}.enabled`, warn });
    platforms[name] = { enabled, settings: section };
  }
  return platforms;
}

export function resolvePlatformToolsets(value: unknown, warn: Warn): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  if (value === null || value === undefined) return result;
  if (!isRecord(value)) {
    warn('platform_toolsets must be a mapping of platform to a list of toolsets; ignored');
    return result;
  }
  for (const [platform, list] of Object.entries(value)) {
    // Not a list ⇒ the platform keeps its default composite; names are coerced to strings.
    if (!Array.isArray(list)) {
      warn(`platform_toolsets.${platform} must be a list; using the platform default`);
      continue;
    }
    result[platform] = list
      .filter((entry) => entry !== null && entry !== undefined)
      .map((entry) => String(entry).trim())
      .filter((entry) => entry !== '');
  }
  return result;
}

export function resolveApiServer(
  value: unknown,
  secret: SecretLookup,
  warn: Warn,
): ApiServerConfig {
  const section = parseLenient(apiServerSectionSchema, value, 'api_server', warn);
  const key = text(section.key) || secret('API_SERVER_KEY')?.trim() || undefined;
  return {
    enabled: booleanKnob(section.enabled, true, { key: 'api_server.enabled', warn }),
    host: text(section.host) || DEFAULT_API_SERVER_HOST,
    port: integerKnob(section.port, DEFAULT_API_SERVER_PORT, {
      key: 'api_server.port',
      range: { min: 0, max: 65_535 },
      warn,
    }),
    key,
    maxRequestBytes: integerKnob(section.max_request_bytes, DEFAULT_API_SERVER_MAX_REQUEST_BYTES, {
      key: 'api_server.max_request_bytes',
      range: { min: 1 },
      warn,
    }),
  };
}

export type SecretLookup = (name: string) => string | undefined;

/**
 * Secrets come from the explicit `env` when one is given; otherwise from `getSecret`, so inside a
 * profile's secret scope a missing key stays missing instead of borrowing the process owner's.
 */
export function secretLookup(env: NodeJS.ProcessEnv | undefined): SecretLookup {
  return env ? (name) => env[name] : getSecret;
}
