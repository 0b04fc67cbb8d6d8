import { delegationSectionSchema } from './config-schema.js';
import type { DelegationConfig } from './config-types.js';
import {
  DEFAULT_DELEGATION_MAX_CONCURRENT_CHILDREN,
  DEFAULT_DELEGATION_MAX_ITERATIONS,
  DEFAULT_DELEGATION_MAX_SPAWN_DEPTH,
  DEFAULT_DELEGATION_MAX_SUMMARY_CHARS,
  DEFAULT_DELEGATION_ONESHOT_MAX_CHILDREN,
  DELEGATION_CHILD_TIMEOUT_FLOOR_S,
  DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS,
} from './defaults.js';
import { booleanKnob, integerKnob, numberKnob, type Warn } from './knobs.js';
import { baseUrlText, parseLenient, text } from './lenient-section.js';

export function resolveDelegation(
  value: unknown,
  env: NodeJS.ProcessEnv,
  warn: Warn,
): DelegationConfig {
  const section = parseLenient(delegationSectionSchema, value, 'delegation', warn);
  // The environment fallbacks apply only when the key is absent; warnings name the source used.
  const fromEnv = (key: string, envName: string): { value: unknown; key: string } =>
    section[key] === null || section[key] === undefined
      ? { value: env[envName]?.trim() || undefined, key: envName }
      : { value: section[key], key: `delegation.${key}` };
  const concurrent = fromEnv('max_concurrent_children', 'DELEGATION_MAX_CONCURRENT_CHILDREN');
  const timeout = fromEnv('child_timeout_seconds', 'DELEGATION_CHILD_TIMEOUT_SECONDS');
  const childTimeout = numberKnob(timeout.value, 0, { key: timeout.key, range: { min: 0 }, warn });
  const spawnDepth = integerKnob(section.max_spawn_depth, DEFAULT_DELEGATION_MAX_SPAWN_DEPTH, {
    key: 'delegation.max_spawn_depth',
    warn,
  });
  if (spawnDepth < 1) warn(`delegation.max_spawn_depth ${spawnDepth} is below floor 1; using 1`);
  const compression = integerKnob(section.compression_threshold_tokens, 0, {
    key: 'delegation.compression_threshold_tokens',
    range: { min: 0 },
    warn,
  });
  if (compression > 0 && compression < DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS) {
    warn(
      `delegation.compression_threshold_tokens must be at least ${DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS}; ignored`,
    );
  }
  const flag = (key: string, defaultValue: boolean) =>
    booleanKnob(section[key], defaultValue, { key: `delegation.${key}`, warn });
  const reasoning = section.reasoning_effort;
  return {
    model: text(section.model),
    provider: text(section.provider),
    baseUrl: baseUrlText(section.base_url, 'delegation.base_url', warn),
    apiKey: text(section.api_key),
    apiMode: text(section.api_mode),
    requestOverrides: section.request_overrides ?? undefined,
    fallbackProviders: section.fallback_providers ?? undefined,
    maxIterations: integerKnob(section.max_iterations, DEFAULT_DELEGATION_MAX_ITERATIONS, {
      key: 'delegation.max_iterations',
      range: { min: 1 },
      warn,
    }),
    maxConcurrentChildren: Math.max(
      1,
      integerKnob(concurrent.value, DEFAULT_DELEGATION_MAX_CONCURRENT_CHILDREN, {
        key: concurrent.key,
        warn,
      }),
    ),
    maxSpawnDepth: Math.max(1, spawnDepth),
    orchestratorEnabled: flag('orchestrator_enabled', true),
    childTimeoutSeconds:
      childTimeout > 0 ? Math.max(DELEGATION_CHILD_TIMEOUT_FLOOR_S, childTimeout) : 0,
    reasoningEffort: reasoning === false ? 'none' : typeof reasoning === 'string' ? reasoning : '',
    subagentAutoApprove: flag('subagent_auto_approve', false),
    inheritMcpToolsets: flag('inherit_mcp_toolsets', true),
    defaultToolsets: section.default_toolsets ?? undefined,
    maxSummaryChars: integerKnob(section.max_summary_chars, DEFAULT_DELEGATION_MAX_SUMMARY_CHARS, {
      key: 'delegation.max_summary_chars',
      range: { min: 0 },
      warn,
    }),
    independentCompletions: flag('independent_completions', false),
    worktreeIsolation: flag('worktree_isolation', false),
    oneshotMaxChildren: integerKnob(
      section.oneshot_max_children,
      DEFAULT_DELEGATION_ONESHOT_MAX_CHILDREN,
      { key: 'delegation.oneshot_max_children', range: { min: 0 }, warn },
    ),
    compressionThresholdTokens:
      compression >= DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS ? compression : 0,
    surfaceChildProcessNotifications: flag('surface_child_process_notifications', false),
  };
}
