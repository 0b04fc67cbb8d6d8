/**
 * Shipped defaults and ranges for the agent's sections (`agent`, `compression`, `toolsets`,
 * `terminal`, `approvals`). The agent and tests import these instead of repeating numbers.
 */

export const DEFAULT_AGENT_MAX_TURNS = 90;
export const AGENT_MAX_TURNS_RANGE = { min: 1, max: 10_000 } as const;
/** Retries per provider after the first attempt (429, 5xx, connection resets). */
export const DEFAULT_AGENT_API_MAX_RETRIES = 2;
export const AGENT_API_MAX_RETRIES_RANGE = { min: 0, max: 10 } as const;
export const DEFAULT_AGENT_API_TIMEOUT_S = 600;
export const AGENT_API_TIMEOUT_RANGE = { min: 1, max: 86_400 } as const;

export const DEFAULT_COMPRESSION_ENABLED = true;
export const DEFAULT_COMPRESSION_THRESHOLD = 0.5;
export const COMPRESSION_THRESHOLD_RANGE = { min: 0.05, max: 0.95 } as const;
export const DEFAULT_COMPRESSION_PROTECT_LAST_N = 20;
export const COMPRESSION_PROTECT_LAST_N_RANGE = { min: 1, max: 1000 } as const;

export const DEFAULT_TOOLSETS = ['hermes-cli'] as const;

export const DEFAULT_TERMINAL_TIMEOUT_S = 180;
export const TERMINAL_TIMEOUT_RANGE = { min: 1, max: 86_400 } as const;
export const DEFAULT_TERMINAL_MAX_OUTPUT_CHARS = 50_000;
export const TERMINAL_MAX_OUTPUT_CHARS_RANGE = { min: 1000, max: 10_000_000 } as const;

export const APPROVAL_MODES = ['manual', 'smart', 'off'] as const;
export const DEFAULT_APPROVAL_MODE = 'manual';
export const DEFAULT_APPROVAL_TIMEOUT_S = 60;
export const APPROVAL_TIMEOUT_RANGE = { min: 1, max: 86_400 } as const;
