import * as v from 'valibot';
import type {
  CustomProviderConfig,
  FallbackProviderConfig,
  ModelSettingsConfig,
  ProviderConfig,
} from './agent-config-types.js';
import { textSchema } from './config-schema.js';
import { integerKnob, type Warn } from './knobs.js';
import { baseUrlText, isRecord, parseLenient, text } from './lenient-section.js';

// Provider routing: `providers.<name>`, `custom_providers[]` and `fallback_providers[]`.

const optionalText = v.nullish(textSchema);
const mapping = v.record(v.string(), v.unknown());

const providerSchema = v.looseObject({
  base_url: optionalText,
  api: optionalText,
  api_key: optionalText,
  key_env: optionalText,
  default_model: optionalText,
  model: optionalText,
  api_mode: optionalText,
  transport: optionalText,
  models: v.nullish(mapping),
  request_overrides: v.nullish(mapping),
});

const customProviderSchema = v.looseObject({
  name: optionalText,
  base_url: optionalText,
  api_key: optionalText,
  key_env: optionalText,
  api_mode: optionalText,
  model: optionalText,
  models: v.nullish(mapping),
  request_overrides: v.nullish(mapping),
});

const fallbackSchema = v.looseObject({
  provider: optionalText,
  model: optionalText,
  base_url: optionalText,
  api_key: optionalText,
  api_mode: optionalText,
});

function resolveModelSettings(
  value: unknown,
  where: string,
  warn: Warn,
): Record<string, ModelSettingsConfig> {
  const models: Record<string, ModelSettingsConfig> = {};
  if (!isRecord(value)) return models;
  for (const [id, block] of Object.entries(value)) {
    const settings = isRecord(block) ? block : {};
    const positive = (key: string) => {
      const raw = settings[key];
      if (raw === null || raw === undefined) return undefined;
      const parsed = integerKnob(raw, 0, {
        key: `${where}.${id}.${key}`,
        range: { min: 1 },
        warn,
      });
      return parsed > 0 ? parsed : undefined;
    };
    models[id] = { contextLength: positive('context_length'), maxTokens: positive('max_tokens') };
  }
  return models;
}

export function resolveProviders(value: unknown, warn: Warn): Record<string, ProviderConfig> {
  const providers: Record<string, ProviderConfig> = {};
  if (value === null || value === undefined) return providers;
  if (!isRecord(value)) {
    warn('providers must be a mapping of provider name to settings; ignored');
    return providers;
  }
  for (const [name, block] of Object.entries(value)) {
    const where = `providers.${name}`;
    const section = parseLenient(providerSchema, block, where, warn);
    providers[name] = {
      name,
      baseUrl: baseUrlText(section.base_url || section.api, `${where}.base_url`, warn),
      apiKey: text(section.api_key),
      keyEnv: text(section.key_env),
      defaultModel: text(section.default_model) || text(section.model),
      apiMode: text(section.api_mode) || text(section.transport),
      models: resolveModelSettings(section.models, `${where}.models`, warn),
      requestOverrides: section.request_overrides ?? undefined,
    };
  }
  return providers;
}

export function resolveCustomProviders(value: unknown, warn: Warn): CustomProviderConfig[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) {
    warn('custom_providers must be a list; ignored');
    return [];
  }
  const entries: CustomProviderConfig[] = [];
  for (const [index, block] of value.entries()) {
    const where = `custom_providers[${index}]`;
    const section = parseLenient(customProviderSchema, block, where, warn);
    const name = text(section.name);
    if (!name) {
      warn(`${where} has no name; ignored`);
      continue;
    }
    entries.push({
      name,
      baseUrl: baseUrlText(section.base_url, `${where}.base_url`, warn),
      apiKey: text(section.api_key),
      keyEnv: text(section.key_env),
      apiMode: text(section.api_mode),
      model: text(section.model),
      models: resolveModelSettings(section.models, `${where}.models`, warn),
      requestOverrides: section.request_overrides ?? undefined,
    });
  }
  return entries;
}

/** A fallback entry is a provider name, or a mapping with `provider` and/or `base_url`. */
export function resolveFallbackProviders(
  value: unknown,
  where: string,
  warn: Warn,
): FallbackProviderConfig[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) {
    warn(`${where} must be a list; ignored`);
    return [];
  }
  const entries: FallbackProviderConfig[] = [];
  for (const [index, entry] of value.entries()) {
    if (typeof entry === 'string' && entry.trim() !== '') {
      entries.push({ provider: entry.trim(), model: '', baseUrl: '', apiKey: '', apiMode: '' });
      continue;
    }
    const section = parseLenient(fallbackSchema, entry, `${where}[${index}]`, warn);
    const provider = text(section.provider);
    const baseUrl = baseUrlText(section.base_url, `${where}[${index}].base_url`, warn);
    if (!provider && !baseUrl) {
      warn(`${where}[${index}] names neither a provider nor a base_url; ignored`);
      continue;
    }
    entries.push({
      provider,
      model: text(section.model),
      baseUrl,
      apiKey: text(section.api_key),
      apiMode: text(section.api_mode),
    });
  }
  return entries;
}
