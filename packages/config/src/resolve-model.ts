import * as v from 'valibot';
import { coerceNumber } from './coerce.js';
import {
  auxiliarySectionSchema,
  auxiliaryTaskSchema,
  modelMappingSchema,
  modelSectionSchema,
} from './config-schema.js';
import type { AuxiliaryConfig, AuxiliaryTaskConfig, ModelConfig } from './config-types.js';
import {
  AUXILIARY_TASKS,
  AUXILIARY_TRANSIENT_RETRIES_RANGE,
  DEFAULT_AUXILIARY_TRANSIENT_RETRIES,
} from './defaults.js';
import { integerKnob, type Warn } from './knobs.js';
import { baseUrlText, isRecord, parseLenient, text } from './lenient-section.js';

export function resolveModel(value: unknown, warn: Warn): ModelConfig {
  const empty: ModelConfig = {
    model: '',
    provider: '',
    baseUrl: '',
    apiKey: '',
    apiMode: '',
    contextLength: undefined,
    maxTokens: undefined,
  };
  if (value === null || value === undefined) return empty;
  if (!isRecord(value)) {
    const parsed = v.safeParse(modelSectionSchema, value);
    if (parsed.success && typeof parsed.output === 'string')
      return { ...empty, model: parsed.output };
    warn('model must be a model id or a mapping; ignored');
    return empty;
  }
  const section = parseLenient(modelMappingSchema, value, 'model', warn);
  const [preferred, legacy] = [text(section.default), text(section.model)];
  if (preferred && legacy && preferred !== legacy)
    warn(
      `model.model (${legacy}) is ignored: it is the legacy name of model.default, which is set (${preferred}) and wins; set model.default instead`,
    );
  return {
    model: preferred || legacy,
    provider: text(section.provider),
    baseUrl: baseUrlText(section.base_url, 'model.base_url', warn),
    apiKey: text(section.api_key),
    apiMode: section.api_mode ?? '',
    contextLength: positiveInteger(section.context_length, 'model.context_length', warn),
    maxTokens: positiveInteger(section.max_tokens, 'model.max_tokens', warn),
  };
}

/** An optional positive whole number; absent (or invalid, with a warning) is `undefined`. */
function positiveInteger(value: unknown, key: string, warn: Warn): number | undefined {
  if (value === null || value === undefined) return undefined;
  const parsed = integerKnob(value, 0, { key, range: { min: 1 }, warn });
  return parsed > 0 ? parsed : undefined;
}

function resolveAuxiliaryTask(value: unknown, where: string, warn: Warn): AuxiliaryTaskConfig {
  const section = parseLenient(auxiliaryTaskSchema, value, where, warn);
  const timeout =
    section.timeout === null || section.timeout === undefined
      ? undefined
      : coerceNumber(section.timeout, Number.NaN, { min: 0 });
  if (timeout !== undefined && Number.isNaN(timeout))
    warn(`${where}.timeout must be a non-negative number; ignored`);
  return {
    provider: text(section.provider) || 'auto',
    model: text(section.model),
    baseUrl: baseUrlText(section.base_url, `${where}.base_url`, warn),
    apiKey: text(section.api_key),
    apiMode: text(section.api_mode),
    timeoutS: timeout === undefined || Number.isNaN(timeout) ? undefined : timeout,
    extraBody: section.extra_body ?? {},
    reasoningEffort: text(section.reasoning_effort),
    fallbackProviders: section.fallback_providers ?? undefined,
  };
}

export function resolveAuxiliary(value: unknown, warn: Warn): AuxiliaryConfig {
  const section = parseLenient(auxiliarySectionSchema, value, 'auxiliary', warn);
  const tasks: Record<string, AuxiliaryTaskConfig> = {};
  for (const task of AUXILIARY_TASKS)
    tasks[task] = resolveAuxiliaryTask(undefined, `auxiliary.${task}`, warn);
  for (const [key, block] of Object.entries(section)) {
    if (key === 'transient_retries' || !isRecord(block)) continue;
    tasks[key] = resolveAuxiliaryTask(block, `auxiliary.${key}`, warn);
  }
  return {
    review: tasks.review as AuxiliaryTaskConfig,
    tasks,
    transientRetries: integerKnob(section.transient_retries, DEFAULT_AUXILIARY_TRANSIENT_RETRIES, {
      key: 'auxiliary.transient_retries',
      range: AUXILIARY_TRANSIENT_RETRIES_RANGE,
      warn,
    }),
  };
}
