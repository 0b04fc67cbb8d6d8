import * as v from 'valibot';
import { API_MODES } from './defaults.js';

/**
 * valibot schemas for the config.yaml sections this package types. Every object is loose, so
 * unknown keys pass through untouched; knobs with coercion rules (numbers, booleans) are typed
 * `unknown` here and resolved by the coercion helpers, which never fail.
 */

/** A string-like scalar (numbers are accepted and stringified, e.g. a numeric API key). */
export const textSchema = v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.finite())]),
  v.transform((value) => String(value).trim()),
);

const optionalText = v.nullish(textSchema);
const optionalKnob = v.nullish(v.unknown());
const stringList = v.array(textSchema);
const mapping = v.record(v.string(), v.unknown());

export const apiModeSchema = v.union([v.picklist(API_MODES), v.literal('')]);

export const modelMappingSchema = v.looseObject({
  default: optionalText,
  model: optionalText,
  provider: optionalText,
  base_url: optionalText,
  api_key: optionalText,
  api_mode: v.nullish(apiModeSchema),
});

/** `model:` is either a bare model id or a mapping. */
export const modelSectionSchema = v.union([textSchema, modelMappingSchema]);

export const auxiliaryTaskSchema = v.looseObject({
  provider: optionalText,
  model: optionalText,
  base_url: optionalText,
  api_key: optionalText,
  api_mode: optionalText,
  timeout: optionalKnob,
  extra_body: v.nullish(mapping),
  reasoning_effort: optionalText,
  fallback_providers: v.nullish(v.array(v.unknown())),
});

export const auxiliarySectionSchema = v.looseObject({
  transient_retries: optionalKnob,
});

export const delegationSectionSchema = v.looseObject({
  model: optionalText,
  provider: optionalText,
  base_url: optionalText,
  api_key: optionalText,
  api_mode: optionalText,
  request_overrides: v.nullish(mapping),
  fallback_providers: v.nullish(v.array(v.unknown())),
  max_iterations: optionalKnob,
  max_concurrent_children: optionalKnob,
  max_spawn_depth: optionalKnob,
  orchestrator_enabled: optionalKnob,
  child_timeout_seconds: optionalKnob,
  reasoning_effort: v.nullish(v.union([textSchema, v.boolean()])),
  subagent_auto_approve: optionalKnob,
  inherit_mcp_toolsets: optionalKnob,
  default_toolsets: v.nullish(stringList),
  max_summary_chars: optionalKnob,
  independent_completions: optionalKnob,
  worktree_isolation: optionalKnob,
  oneshot_max_children: optionalKnob,
  compression_threshold_tokens: optionalKnob,
  surface_child_process_notifications: optionalKnob,
});

export const gatewaySectionSchema = v.looseObject({
  multiplex_profile_allowlist: v.nullish(stringList),
});

export const platformSchema = v.looseObject({
  enabled: optionalKnob,
});

export const platformsSectionSchema = v.record(v.string(), v.nullish(platformSchema));

export const apiServerSectionSchema = v.looseObject({
  enabled: optionalKnob,
  host: optionalText,
  port: optionalKnob,
  key: optionalText,
  max_request_bytes: optionalKnob,
});

/**
 * The top level only checks that the document is a mapping; each section is validated by its own
 * schema so that one bad key drops just that key, not the whole section.
 */
export const topLevelSchema = v.looseObject({});
