/**
 * Shipped defaults and ranges for every knob this package resolves. One source of truth: other
 * packages and tests import these rather than repeating the numbers.
 */

export const DEFAULT_LOOP_WATCHDOG_ENABLED = true;
export const DEFAULT_LOOP_WATCHDOG_INTERVAL_S = 30;
export const DEFAULT_LOOP_WATCHDOG_TIMEOUT_S = 10;
export const DEFAULT_LOOP_WATCHDOG_MAX_STRIKES = 3;

export const LOOP_WATCHDOG_INTERVAL_RANGE = { min: 1, max: 3600 } as const;
export const LOOP_WATCHDOG_TIMEOUT_RANGE = { min: 1, max: 600 } as const;
export const LOOP_WATCHDOG_MAX_STRIKES_RANGE = { min: 1, max: 1000 } as const;

/** How long the startup restore gate waits for boot work before opening (≤ 0 waits for all). */
export const DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S = 30;

export const DEFAULT_API_SERVER_HOST = '127.0.0.1';
export const DEFAULT_API_SERVER_PORT = 8642;
export const DEFAULT_API_SERVER_MAX_REQUEST_BYTES = 10 * 1024 * 1024;

export const DEFAULT_AUXILIARY_TRANSIENT_RETRIES = 2;
export const AUXILIARY_TRANSIENT_RETRIES_RANGE = { min: 0, max: 6 } as const;

export const DEFAULT_DELEGATION_MAX_ITERATIONS = 250;
export const DEFAULT_DELEGATION_MAX_CONCURRENT_CHILDREN = 10;
export const DEFAULT_DELEGATION_MAX_SPAWN_DEPTH = 1;
export const DEFAULT_DELEGATION_MAX_SUMMARY_CHARS = 24_000;
export const DEFAULT_DELEGATION_ONESHOT_MAX_CHILDREN = 2;
/** A child inactivity timeout above 0 is raised to at least this many seconds. */
export const DELEGATION_CHILD_TIMEOUT_FLOOR_S = 30;
/** `delegation.compression_threshold_tokens` below this (and above 0) is ignored with a warning. */
export const DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS = 16_000;

/** The wire protocols a model endpoint may speak. */
export const API_MODES = [
  'chat_completions',
  'codex_responses',
  'anthropic_messages',
  'bedrock_converse',
  'codex_app_server',
] as const;
export type ApiMode = (typeof API_MODES)[number];

/** Side-LLM tasks that have an `auxiliary.<task>` block by default. */
export const AUXILIARY_TASKS = [
  'vision',
  'web_extract',
  'compression',
  'skills_hub',
  'approval',
  'mcp',
  'title_generation',
  'memory_query_rewrite',
  'profile_describer',
  'goal_judge',
  'monitor',
  'moa_reference',
  'moa_aggregator',
  'curator',
  'kanban_decomposer',
  'triage_specifier',
  'review',
] as const;
