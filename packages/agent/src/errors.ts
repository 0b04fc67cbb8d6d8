import path from 'node:path';

const MARKER = Symbol.for('@hermes/agent.error');

export type AgentErrorCode =
  | 'model_not_configured'
  | 'model_id_missing'
  | 'missing_api_key'
  | 'unknown_provider'
  | 'unsupported_api_mode'
  | 'invalid_base_url'
  | 'provider_error'
  | 'provider_unavailable'
  | 'session_busy'
  | 'session_not_found'
  | 'session_exists'
  | 'duplicate_tool'
  | 'unknown_tool'
  | 'compression_failed'
  | 'compression_busy'
  | 'interrupted'
  | 'profile_not_served'
  | 'profile_closed'
  | 'no_delegation_registry';

export interface AgentErrorOptions {
  readonly code: AgentErrorCode;
  readonly message: string;
  readonly cause?: unknown;
  /** HTTP status of a provider failure. */
  readonly status?: number;
  /** The provider (route name) involved, when one is. */
  readonly provider?: string;
}

/**
 * The one base error of `@hermes/agent`. `code` is stable and meant for programs; `message` is
 * written for the person who can act on it and never carries a secret or a stack trace.
 */
export class AgentError extends Error {
  readonly code: AgentErrorCode;
  readonly status: number | undefined;
  readonly provider: string | undefined;
  readonly [MARKER] = true;

  constructor(options: AgentErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.status = options.status;
    this.provider = options.provider;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is AgentError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }

  /** The wire shape surfaces send (`{ code, message }`). */
  toJSON(): { code: AgentErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** Exact user-facing texts; tests and surfaces import these instead of repeating them. */
export const AGENT_ERROR_MESSAGES = {
  baseUrlMissing:
    "model.base_url is not set — set it in config.yaml or run 'hermes config set model.base_url …'",
  modelIdMissing:
    "model.default is not set — set it in config.yaml or run 'hermes config set model.default …'",
  missingApiKey: (provider: string, envName: string, home: string) =>
    `no API key for provider ${provider} — set ${envName} in ${path.join(home, '.env')}`,
  unknownProvider: (provider: string) =>
    `unknown provider '${provider}' — add a providers.${provider} block to config.yaml, or use custom:<name> for a custom_providers entry`,
  unsupportedApiMode: (apiMode: string) =>
    `api_mode '${apiMode}' is not supported by this agent — use chat_completions or codex_responses`,
  invalidBaseUrl: (where: string) => `${where} is not a valid http(s) URL`,
  providerUnavailable: (provider: string, detail: string) =>
    `provider ${provider} is unavailable (${detail}) and no fallback provider answered`,
  sessionBusy: (sessionId: string) =>
    `session ${sessionId} is busy: another turn is running — wait for it to finish or interrupt it`,
  sessionNotFound: (sessionId: string) => `session ${sessionId} not found`,
  sessionExists: (sessionId: string) =>
    `session ${sessionId} already exists: a new conversation needs an id nobody has used`,
  duplicateTool: (name: string) => `tool '${name}' is registered twice`,
  unknownTool: (name: string) => `unknown tool '${name}'`,
  compressionBusy: (sessionId: string) =>
    `session ${sessionId} is already being compressed by another process`,
  interrupted: 'the turn was interrupted',
  profileNotFound: (name: string) => `profile not found: ${name}`,
  profileNotServed: (name: string) => `profile ${name} is not served by this process`,
  profileEnvUnreadable: (name: string, detail: string) =>
    `profile ${name} cannot be served: its .env cannot be read (${detail})`,
  profileClosed: (name: string) => `profile ${name} is closed`,
  noDelegationRegistry: (name: string) =>
    `profile ${name} runs one-shot: it has no async delegation registry`,
} as const;

/** Tool-result texts the model sees (sent as `{"error": "…"}`). */
export const TOOL_ERROR_MESSAGES = {
  unknownTool: (name: string) => `Unknown tool '${name}'. Use one of the tools you were given.`,
  invalidJson: (detail: string) => `Invalid JSON in tool arguments: ${detail}`,
  invalidArguments: (detail: string) => `Invalid arguments: ${detail}`,
  interrupted: 'Interrupted: the turn was stopped before this call finished.',
  noResultRecorded: 'No result was recorded for this call (the turn ended before it finished).',
} as const;
