import { documentData, readConfigDocument } from './config-file.js';
import { topLevelSchema } from './config-schema.js';
import type { HermesConfig } from './config-types.js';
import { getHermesHome } from './home.js';
import type { Warn } from './knobs.js';
import { parseLenient } from './lenient-section.js';
import {
  resolveAgent,
  resolveApprovals,
  resolveCompression,
  resolveTerminal,
  resolveToolsets,
} from './resolve-agent.js';
import { resolveDelegation } from './resolve-delegation.js';
import { resolveBrowserConfig, resolveGatewayConfig } from './resolve-gateway.js';
import { resolveAuxiliary, resolveModel } from './resolve-model.js';
import {
  resolveCustomProviders,
  resolveFallbackProviders,
  resolveProviders,
} from './resolve-providers.js';
import {
  resolveApiServer,
  resolvePlatforms,
  resolvePlatformToolsets,
  secretLookup,
} from './resolve-surfaces.js';

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
    providers: resolveProviders(top.providers, warn),
    customProviders: resolveCustomProviders(top.custom_providers, warn),
    fallbackProviders: resolveFallbackProviders(top.fallback_providers, 'fallback_providers', warn),
    agent: resolveAgent(top.agent, warn),
    compression: resolveCompression(top.compression, warn),
    toolsets: resolveToolsets(top.toolsets, warn),
    terminal: resolveTerminal(top.terminal, warn),
    approvals: resolveApprovals(top.approvals, warn),
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
