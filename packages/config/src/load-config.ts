import * as v from 'valibot';
import { coerceNumber, type NumberRange } from './coerce.js';
import { documentData, readConfigDocument } from './config-file.js';
import {
  apiServerSectionSchema,
  auxiliarySectionSchema,
  auxiliaryTaskSchema,
  delegationSectionSchema,
  gatewaySectionSchema,
  modelMappingSchema,
  modelSectionSchema,
  platformSchema,
  topLevelSchema,
} from './config-schema.js';
import {
  type ApiMode,
  AUXILIARY_TASKS,
  AUXILIARY_TRANSIENT_RETRIES_RANGE,
  DEFAULT_API_SERVER_HOST,
  DEFAULT_API_SERVER_MAX_REQUEST_BYTES,
  DEFAULT_API_SERVER_PORT,
  DEFAULT_AUXILIARY_TRANSIENT_RETRIES,
  DEFAULT_DELEGATION_MAX_CONCURRENT_CHILDREN,
  DEFAULT_DELEGATION_MAX_ITERATIONS,
  DEFAULT_DELEGATION_MAX_SPAWN_DEPTH,
  DEFAULT_DELEGATION_MAX_SUMMARY_CHARS,
  DEFAULT_DELEGATION_ONESHOT_MAX_CHILDREN,
  DEFAULT_LOOP_WATCHDOG_ENABLED,
  DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
  DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
  DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
  DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S,
  DELEGATION_CHILD_TIMEOUT_FLOOR_S,
  DELEGATION_COMPRESSION_THRESHOLD_MIN_TOKENS,
  LOOP_WATCHDOG_INTERVAL_RANGE,
  LOOP_WATCHDOG_MAX_STRIKES_RANGE,
  LOOP_WATCHDOG_TIMEOUT_RANGE,
} from './defaults.js';
import { readEnvBoolean, readGatewayKey } from './gateway-keys.js';
import { getHermesHome, getSecret } from './home.js';
import { booleanKnob, integerKnob, numberKnob, type Warn } from './knobs.js';

export interface ModelConfig {
  readonly model: string;
  readonly provider: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: ApiMode | '';
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
}

export interface LoadedConfig {
  readonly file: string;
  readonly exists: boolean;
  /** The file's plain data, unknown keys included. */
  readonly raw: Readonly<Record<string, unknown>>;
  readonly config: HermesConfig;
  /** Values that were ignored in favour of defaults, one sentence each (never secret values). */
  readonly warnings: readonly string[];
}

export interface LoadConfigOptions {
  readonly home?: string;
  /**
   * Environment for env overrides and secrets (default `process.env`, with secrets read through
   * `getSecret` so a profile's secret scope is honoured).
   */
  readonly env?: NodeJS.ProcessEnv;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Validates a mapping against a loose object schema. A key whose value does not fit is reported
 * and dropped (so its default applies); the rest of the section is kept.
 */
function parseLenient<TSchema extends v.GenericSchema<unknown, Record<string, unknown>>>(
  schema: TSchema,
  value: unknown,
  where: string,
  warn: Warn,
): v.InferOutput<TSchema> {
  let current: Record<string, unknown> = {};
  if (isRecord(value)) current = { ...value };
  else if (value !== null && value !== undefined) {
    warn(`${where} must be a mapping; ignored`);
  }
  for (let attempt = 0; attempt <= Object.keys(current).length + 1; attempt++) {
    const result = v.safeParse(schema, current);
    if (result.success) return result.output;
    const issue = result.issues[0];
    const key = issue.path?.[0]?.key;
    if (typeof key !== 'string' || !Object.hasOwn(current, key)) break;
    warn(`${where}.${key}: ${issue.message}; using the default`);
    delete current[key];
  }
  return v.parse(schema, {});
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function resolveModel(value: unknown, warn: Warn): ModelConfig {
  const empty: ModelConfig = { model: '', provider: '', baseUrl: '', apiKey: '', apiMode: '' };
  if (value === null || value === undefined) return empty;
  if (!isRecord(value)) {
    const parsed = v.safeParse(modelSectionSchema, value);
    if (parsed.success && typeof parsed.output === 'string')
      return { ...empty, model: parsed.output };
    warn('model must be a model id or a mapping; ignored');
    return empty;
  }
  const section = parseLenient(modelMappingSchema, value, 'model', warn);
  return {
    model: text(section.default) || text(section.model),
    provider: text(section.provider),
    baseUrl: text(section.base_url),
    apiKey: text(section.api_key),
    apiMode: section.api_mode ?? '',
  };
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
    baseUrl: text(section.base_url),
    apiKey: text(section.api_key),
    apiMode: text(section.api_mode),
    timeoutS: timeout === undefined || Number.isNaN(timeout) ? undefined : timeout,
    extraBody: section.extra_body ?? {},
    reasoningEffort: text(section.reasoning_effort),
  };
}

function resolveAuxiliary(value: unknown, warn: Warn): AuxiliaryConfig {
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

function resolveDelegation(value: unknown, env: NodeJS.ProcessEnv, warn: Warn): DelegationConfig {
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
    baseUrl: text(section.base_url),
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

/**
 * Resolves the gateway knobs from the whole document (they may sit at the top level or under
 * `gateway:`; see `readGatewayKey`).
 */
export function resolveGatewayConfig(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  warn: Warn = () => {},
): GatewayConfig {
  const nested = parseLenient(gatewaySectionSchema, raw.gateway, 'gateway', warn);
  const multiplexEnv = readEnvBoolean(env, 'GATEWAY_MULTIPLEX_PROFILES');
  if (multiplexEnv.warning) warn(multiplexEnv.warning);
  // Name the key where the user wrote it: the top level wins by presence (see readGatewayKey).
  const where = (key: string) => (Object.hasOwn(raw, key) ? key : `gateway.${key}`);
  const gatewayNumber = (key: string, defaultValue: number, range: NumberRange) =>
    numberKnob(readGatewayKey(raw, key), defaultValue, { key: where(key), range, warn });
  const agent = isRecord(raw.agent) ? raw.agent : {};
  const restoreEnv = env.HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT?.trim();
  return {
    loopWatchdog: booleanKnob(readGatewayKey(raw, 'loop_watchdog'), DEFAULT_LOOP_WATCHDOG_ENABLED, {
      key: where('loop_watchdog'),
      warn,
    }),
    loopWatchdogProbeIntervalS: gatewayNumber(
      'loop_watchdog_probe_interval_s',
      DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
      LOOP_WATCHDOG_INTERVAL_RANGE,
    ),
    loopWatchdogProbeTimeoutS: gatewayNumber(
      'loop_watchdog_probe_timeout_s',
      DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      LOOP_WATCHDOG_TIMEOUT_RANGE,
    ),
    loopWatchdogMaxStrikes: integerKnob(
      readGatewayKey(raw, 'loop_watchdog_max_strikes'),
      DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
      { key: where('loop_watchdog_max_strikes'), range: LOOP_WATCHDOG_MAX_STRIKES_RANGE, warn },
    ),
    multiplexProfiles:
      multiplexEnv.value ??
      booleanKnob(readGatewayKey(raw, 'multiplex_profiles'), false, {
        key: where('multiplex_profiles'),
        warn,
      }),
    multiplexProfileAllowlist: nested.multiplex_profile_allowlist ?? undefined,
    // No range: a value ≤ 0 is meaningful (wait for all boot work).
    startupRestoreDrainTimeoutS: restoreEnv
      ? numberKnob(restoreEnv, DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S, {
          key: 'HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT',
          warn,
        })
      : numberKnob(
          agent.gateway_startup_restore_drain_timeout,
          DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S,
          {
            key: 'agent.gateway_startup_restore_drain_timeout',
            warn,
          },
        ),
  };
}

/**
 * The browser extension-control flags. A flag is on only when the value is literally `true`:
 * `"true"`, `1`, `yes`, a list, a missing or non-mapping section all read as off.
 */
export function resolveBrowserConfig(raw: Record<string, unknown>): BrowserConfig {
  const browser = isRecord(raw.browser) ? raw.browser : {};
  const control = isRecord(browser.extension_control) ? browser.extension_control : {};
  return {
    extensionControl: {
      enabled: control.enabled === true,
      developerMode: control.developer_mode === true,
    },
  };
}

function resolvePlatforms(value: unknown, warn: Warn): Record<string, PlatformConfig> {
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

function resolvePlatformToolsets(value: unknown, warn: Warn): Record<string, string[]> {
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

function resolveApiServer(value: unknown, secret: SecretLookup, warn: Warn): ApiServerConfig {
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

type SecretLookup = (name: string) => string | undefined;

/**
 * Secrets come from the explicit `env` when one is given; otherwise from `getSecret`, so inside a
 * profile's secret scope a missing key stays missing instead of borrowing the process owner's.
 */
function secretLookup(env: NodeJS.ProcessEnv | undefined): SecretLookup {
  return env ? (name) => env[name] : getSecret;
}

/** Resolves typed config from already-parsed data (unknown keys are ignored, not rejected). */
export function resolveConfig(
  raw: Record<string, unknown>,
  options: { env?: NodeJS.ProcessEnv; warn?: Warn } = {},
): HermesConfig {
  const env = options.env ?? process.env;
  const secret = secretLookup(options.env);
  const warn = options.warn ?? (() => {});
  const top = parseLenient(topLevelSchema, raw, 'config', warn);
  return {
    model: resolveModel(top.model, warn),
    auxiliary: resolveAuxiliary(top.auxiliary, warn),
    delegation: resolveDelegation(top.delegation, env, warn),
    gateway: resolveGatewayConfig(top, env, warn),
    browser: resolveBrowserConfig(top),
    platforms: resolvePlatforms(top.platforms, warn),
    platformToolsets: resolvePlatformToolsets(top.platform_toolsets, warn),
    apiServer: resolveApiServer(top.api_server, secret, warn),
  };
}

/**
 * Loads `<home>/config.yaml` into typed config. A missing file gives the defaults; invalid YAML
 * throws `ConfigParseError` naming the file, line and column; a value of the wrong type is
 * reported in `warnings` and replaced by its default.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const home = options.home ?? getHermesHome();
  const { file, exists, document } = readConfigDocument(home);
  const raw = documentData(document);
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(`${file}: ${message}`);
  const config = resolveConfig(raw, options.env ? { env: options.env, warn } : { warn });
  return { file, exists, raw, config, warnings };
}
