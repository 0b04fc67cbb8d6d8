import { API_MODES, type ApiMode } from '@hermes/config';

export type { ApiMode };

/** The wire protocols this agent speaks. */
export const SUPPORTED_API_MODES = ['chat_completions', 'codex_responses'] as const;
export type SupportedApiMode = (typeof SUPPORTED_API_MODES)[number];

const API_MODE_ALIASES: Readonly<Record<string, ApiMode>> = {
  chat: 'chat_completions',
  chat_completion: 'chat_completions',
  completions: 'chat_completions',
  openai: 'chat_completions',
  responses: 'codex_responses',
  response: 'codex_responses',
  responses_api: 'codex_responses',
  codex: 'codex_responses',
  messages: 'anthropic_messages',
  anthropic: 'anthropic_messages',
  anthropic_message: 'anthropic_messages',
  bedrock: 'bedrock_converse',
  converse: 'bedrock_converse',
  app_server: 'codex_app_server',
};

/** A configured `api_mode` (or alias, any case, `-` or `_`) → its canonical name, else undefined. */
export function normalizeApiMode(value: string): ApiMode | undefined {
  const key = value.trim().toLowerCase().replaceAll('-', '_').replaceAll(' ', '_');
  if (key === '') return undefined;
  if ((API_MODES as readonly string[]).includes(key)) return key as ApiMode;
  return API_MODE_ALIASES[key];
}

export function isSupportedApiMode(mode: ApiMode): mode is SupportedApiMode {
  return (SUPPORTED_API_MODES as readonly string[]).includes(mode);
}

/** Hosts whose API mandates the Responses protocol (exact hostnames; no lookalikes). */
const RESPONSES_HOSTS = new Set(['api.x.ai', 'api.meta.ai', 'api.router.com', 'api.openai.com']);
const ANTHROPIC_HOSTS = new Set(['api.anthropic.com']);

/**
 * The protocol a base URL speaks, by the reference's rules in order: host-mandated hosts, the
 * official OpenAI host, a path ending in `/anthropic`, `api.kimi.com/coding`, else
 * `chat_completions`. Hostnames are compared exactly, so `api.openai.com.evil.test` or
 * `notapi.x.ai` never match. An unparsable URL is `chat_completions`.
 */
export function detectApiMode(baseUrl: string): ApiMode {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'chat_completions';
  }
  // WHATWG URL lower-cases the host; a trailing root dot names the same host.
  const host = url.hostname.replace(/\.$/, '');
  if (ANTHROPIC_HOSTS.has(host)) return 'anthropic_messages';
  if (RESPONSES_HOSTS.has(host)) return 'codex_responses';
  const pathname = url.pathname.replace(/\/+$/, '');
  if (pathname.toLowerCase().endsWith('/anthropic')) return 'anthropic_messages';
  if (host === 'api.kimi.com' && /^\/coding(\/|$)/i.test(pathname)) return 'anthropic_messages';
  return 'chat_completions';
}

/** The hostname of a base URL (lower-case, no trailing dot), or '' when it does not parse. */
export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname.replace(/\.$/, '');
  } catch {
    return '';
  }
}
