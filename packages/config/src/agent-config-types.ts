// Typed views of the config.yaml sections the agent reads: provider routing, the tool loop,
// context compression, toolsets, the terminal tool and command approvals.

/** Per-model settings a provider block may carry (`models.<id>`). */
export interface ModelSettingsConfig {
  readonly contextLength: number | undefined;
  readonly maxTokens: number | undefined;
}

/** One `providers.<name>` block. */
export interface ProviderConfig {
  readonly name: string;
  /** `base_url`, else `api`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The `.env` name holding the key (`key_env`). */
  readonly keyEnv: string;
  readonly defaultModel: string;
  /** `api_mode`, else `transport` (aliases are normalised by the agent). */
  readonly apiMode: string;
  readonly models: Readonly<Record<string, ModelSettingsConfig>>;
  readonly requestOverrides: Readonly<Record<string, unknown>> | undefined;
}

/** One `custom_providers[]` entry (addressed as `custom:<name>`). */
export interface CustomProviderConfig {
  readonly name: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly keyEnv: string;
  readonly apiMode: string;
  readonly model: string;
  readonly models: Readonly<Record<string, ModelSettingsConfig>>;
  readonly requestOverrides: Readonly<Record<string, unknown>> | undefined;
}

/** One `fallback_providers[]` entry; a bare string is a provider name. */
export interface FallbackProviderConfig {
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
}

export interface AgentConfig {
  /** `agent.max_turns`: model calls per turn before the grace call. */
  readonly maxTurns: number;
  readonly reasoningEffort: string;
  /** Toolset or tool names subtracted last from every platform's resolved set. */
  readonly disabledToolsets: readonly string[];
  /** Stream model replies (`agent.stream`, default true). */
  readonly stream: boolean;
  /** Attempts per provider for 429 / 5xx / connection resets (`agent.api_max_retries` + 1). */
  readonly apiMaxRetries: number;
  /** Request timeout for one model call, seconds. */
  readonly apiTimeoutS: number;
}

export interface CompressionConfig {
  readonly enabled: boolean;
  /** Fraction of the model's context window at which compression starts. */
  readonly threshold: number;
  /** Messages kept verbatim after the summary. */
  readonly protectLastN: number;
}

export interface TerminalConfig {
  /** Default command timeout, seconds. */
  readonly timeoutS: number;
  /** Characters of output kept (head and tail) per command. */
  readonly maxOutputChars: number;
  /** Working directory when the turn names none; `''` = the process's. */
  readonly cwd: string;
}

export type ApprovalMode = 'manual' | 'smart' | 'off';

export interface ApprovalsConfig {
  /** `manual` (default) and `smart` ask for dangerous commands; `off` never asks. */
  readonly mode: ApprovalMode;
  /** Seconds a surface has to answer an approval request before it counts as denied. */
  readonly timeoutS: number;
}
