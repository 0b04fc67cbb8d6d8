import type {
  AgentConfig,
  ApprovalsConfig,
  CompressionConfig,
  CustomProviderConfig,
  FallbackProviderConfig,
  ProviderConfig,
  TerminalConfig,
} from './agent-config-types.js';
import type { ApiMode } from './defaults.js';

// The typed view of `config.yaml` that `loadConfig` returns, one interface per section.

export interface ModelConfig {
  readonly model: string;
  readonly provider: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: ApiMode | '';
  /** `model.context_length`: the context window in tokens, when configured. */
  readonly contextLength: number | undefined;
  /** `model.max_tokens`: the reply budget sent with each call, when configured. */
  readonly maxTokens: number | undefined;
}

export interface AuxiliaryTaskConfig {
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
  readonly timeoutS: number | undefined;
  readonly extraBody: Readonly<Record<string, unknown>>;
  readonly reasoningEffort: string;
  /**
   * The block's own `fallback_providers`, entries as written (`undefined`: none declared; `[]`:
   * fallback off). `auxiliary.review`'s is the chain of a reviewer pinned to its own route.
   */
  readonly fallbackProviders: readonly unknown[] | undefined;
}

export interface AuxiliaryConfig {
  readonly review: AuxiliaryTaskConfig;
  /** Every `auxiliary.<task>` block, the known tasks always present. */
  readonly tasks: Readonly<Record<string, AuxiliaryTaskConfig>>;
  readonly transientRetries: number;
}

export interface DelegationConfig {
  readonly model: string;
  readonly provider: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
  readonly requestOverrides: Readonly<Record<string, unknown>> | undefined;
  readonly fallbackProviders: readonly unknown[] | undefined;
  readonly maxIterations: number;
  readonly maxConcurrentChildren: number;
  readonly maxSpawnDepth: number;
  readonly orchestratorEnabled: boolean;
  /** 0 = no inactivity cap; otherwise at least `DELEGATION_CHILD_TIMEOUT_FLOOR_S`. */
  readonly childTimeoutSeconds: number;
  /** `''` = inherit; `'none'` when the YAML said `false` (thinking disabled). */
  readonly reasoningEffort: string;
  readonly subagentAutoApprove: boolean;
  readonly inheritMcpToolsets: boolean;
  readonly defaultToolsets: readonly string[] | undefined;
  readonly maxSummaryChars: number;
  readonly independentCompletions: boolean;
  readonly worktreeIsolation: boolean;
  readonly oneshotMaxChildren: number;
  readonly compressionThresholdTokens: number;
  readonly surfaceChildProcessNotifications: boolean;
}

export interface GatewayConfig {
  readonly loopWatchdog: boolean;
  readonly loopWatchdogProbeIntervalS: number;
  readonly loopWatchdogProbeTimeoutS: number;
  readonly loopWatchdogMaxStrikes: number;
  readonly multiplexProfiles: boolean;
  readonly multiplexProfileAllowlist: readonly string[] | undefined;
  readonly startupRestoreDrainTimeoutS: number;
}

export interface BrowserConfig {
  readonly extensionControl: {
    /** True only when config says literally `true`. */
    readonly enabled: boolean;
    /** True only when config says literally `true`. */
    readonly developerMode: boolean;
  };
}

export interface PlatformConfig {
  readonly enabled: boolean;
  /** The platform's whole block, unknown keys included. */
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface ApiServerConfig {
  readonly enabled: boolean;
  readonly host: string;
  readonly port: number;
  /**
   * `api_server.key`, else the `API_SERVER_KEY` secret: from `env` when one is passed, else from
   * the current secret scope (`withHomeScope`), else `process.env` (where `applyEnvFile` puts the
   * home's `.env`).
   */
  readonly key: string | undefined;
  readonly maxRequestBytes: number;
}

export interface HermesConfig {
  readonly model: ModelConfig;
  readonly auxiliary: AuxiliaryConfig;
  readonly delegation: DelegationConfig;
  readonly gateway: GatewayConfig;
  readonly browser: BrowserConfig;
  readonly platforms: Readonly<Record<string, PlatformConfig>>;
  readonly platformToolsets: Readonly<Record<string, readonly string[]>>;
  readonly apiServer: ApiServerConfig;
  readonly providers: Readonly<Record<string, ProviderConfig>>;
  readonly customProviders: readonly CustomProviderConfig[];
  readonly fallbackProviders: readonly FallbackProviderConfig[];
  readonly agent: AgentConfig;
  readonly compression: CompressionConfig;
  /** `toolsets`: the CLI's toolsets (default `["hermes-cli"]`). */
  readonly toolsets: readonly string[];
  readonly terminal: TerminalConfig;
  readonly approvals: ApprovalsConfig;
}
