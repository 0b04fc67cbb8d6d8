export {
  AGENT_ERROR_MESSAGES,
  AgentError,
  type AgentErrorCode,
  type AgentErrorOptions,
  TOOL_ERROR_MESSAGES,
} from './errors.js';
export {
  type ApiMode,
  detectApiMode,
  isSupportedApiMode,
  normalizeApiMode,
  SUPPORTED_API_MODES,
  type SupportedApiMode,
} from './model/api-mode.js';
export { buildChatCompletionsBody } from './model/chat-completions-transport.js';
export {
  addUsage,
  type ChatMessage,
  emptyUsage,
  type ModelTurn,
  type ToolCall,
  type Usage,
} from './model/chat-message.js';
export type { FunctionSchema } from './model/function-schema.js';
export {
  type CompleteOptions,
  type CompleteResult,
  createModelClient,
  type ModelClient,
  type ModelClientNotice,
  type ModelClientOptions,
} from './model/model-client.js';
export { describeRoute, type ModelRoute } from './model/model-route.js';
export {
  BUILTIN_PROVIDERS,
  type BuiltinProvider,
  DEFAULT_CONTEXT_LENGTH,
} from './model/provider-catalog.js';
export {
  type AuxiliaryRouteOptions,
  resolveAuxiliaryRoute,
} from './model/resolve-auxiliary-route.js';
export { type FallbackRoutes, resolveFallbackRoutes } from './model/resolve-fallback-routes.js';
export {
  type ResolveRuntimeProviderOptions,
  resolveRuntimeProvider,
  type SecretReader,
} from './model/resolve-runtime-provider.js';
export { buildResponsesBody, DEFAULT_RESPONSES_INSTRUCTIONS } from './model/responses-transport.js';
export { parseRetryAfter } from './model/retry-policy.js';
export { sanitizeMessages } from './model/sanitize-messages.js';
