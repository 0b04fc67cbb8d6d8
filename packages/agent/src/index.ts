export {
  COMPACTION_SUMMARY_PREFIX,
  COMPRESSION_SYSTEM_PROMPT,
  type CompressionResult,
  type CompressSessionOptions,
  compressSession,
} from './compression/compress-session.js';
export { CHARS_PER_TOKEN, estimateTokens, messageChars } from './compression/estimate-tokens.js';
export {
  AsyncDelegationRegistry,
  type AsyncDelegationRegistryOptions,
  createDelegationRegistry,
} from './delegation/async-registry.js';
export type {
  AsyncUnit,
  AsyncUnitProgress,
  DelegationOrigin,
  DispatchOutcome,
  ResumeUnitRequest,
} from './delegation/async-unit.js';
export {
  type BuiltChild,
  buildChildSystemPrompt,
  type ChildRole,
  childToolsets,
  SUBAGENT_INTRO,
} from './delegation/build-children.js';
export { checkOutputSchema, parseJsonAnswer } from './delegation/check-output-schema.js';
export type {
  BatchResult,
  ChildResult,
  ChildStatus,
  ToolTraceEntry,
} from './delegation/child-result.js';
export {
  type CompletionDelivery,
  type CompletionDeliveryOptions,
  createCompletionDelivery,
  type DeliveredCompletion,
} from './delegation/completion-delivery.js';
export {
  type AsyncDelegationEvent,
  type DelegationResultRecord,
  type DelegationResumeSpec,
  type DelegationTaskRecord,
  eventFromLedgerRow,
  type ResumableTaskRecord,
} from './delegation/completion-event.js';
export { type CompletionTarget, ownsCompletion } from './delegation/completion-ownership.js';
export { CompletionQueue } from './delegation/completion-queue.js';
export {
  type DelegateTaskOptions,
  type DelegateTaskResult,
  type DelegationCredentialsConfig,
  delegateTask,
} from './delegation/delegate-task.js';
export {
  buildDelegateTaskDescription,
  buildDelegateTaskParameters,
  childrenMayDelegate,
} from './delegation/delegate-task-schema.js';
export { delegateTaskTool, HIDDEN_DELEGATE_FIELDS } from './delegation/delegate-task-tool.js';
export type {
  DelegationLifecycleEvent,
  DelegationRecoveryReport,
} from './delegation/delegation-lifecycle.js';
export {
  COMPLETION_DISPLAY_KIND,
  DELEGATE_BLOCKED_TOOLS,
  DELEGATE_TASK_DESCRIPTION_MAX_CHARS,
  DELEGATE_TASK_TOOL_NAME,
  DELEGATION_MAX_RESUMES,
  MAX_TASK_IMAGES,
  SHUTDOWN_INTERRUPT_REASON,
  STALL_CHECK_INTERVAL_MS,
  STALL_GRACE_MS,
  STALL_IDLE_MS,
  STALL_IN_TOOL_MS,
} from './delegation/delegation-limits.js';
export {
  DELEGATION_ERROR_MESSAGES,
  DELEGATION_NOTES,
  missedSteerNote,
} from './delegation/delegation-messages.js';
export {
  type AgentDelegationRail,
  type CreateDelegationRailOptions,
  createDelegationRail,
  type RailDispatch,
  type RailOrigin,
  type RailRefusal,
  type RailRequest,
} from './delegation/delegation-rail.js';
export {
  ASYNC_DELEGATION_PREFIX,
  COMPLETION_EXPLANATION,
  completionHeader,
  deriveResultOutcome,
  type FormatAsyncDelegationOptions,
  formatAsyncDelegation,
  OUTCOME_ICONS,
  type ResultOutcome,
} from './delegation/format-async-delegation.js';
export { type DelegationTask, normalizeTasks } from './delegation/normalize-tasks.js';
export {
  type ChildRuntime,
  type DelegationRoutingConfig,
  resolveChildRuntime,
} from './delegation/resolve-child-runtime.js';
export { resumeDelegation } from './delegation/resume-delegation.js';
export { completionLine, truncateSummary } from './delegation/run-batch.js';
export {
  type LiveSubagent,
  type SubagentListing,
  SubagentTracker,
} from './delegation/subagent-tracker.js';
export type { AsyncDelegationListing, StallThresholds } from './delegation/unit-record.js';
export {
  AGENT_ERROR_MESSAGES,
  AgentError,
  type AgentErrorCode,
  type AgentErrorOptions,
  TOOL_ERROR_MESSAGES,
} from './errors.js';
export {
  AGENT_EVENT_TYPES,
  type AgentEvent,
  type AgentEventType,
  type MessageCompletedEvent,
  type MessageDeltaEvent,
  type ModelFallbackEvent,
  type ModelRetryEvent,
  type ReasoningDeltaEvent,
  type RunCompletedEvent,
  type RunFailedEvent,
  type RunInterruptedEvent,
  type RunStartedEvent,
  type SessionCompressedEvent,
  type SubagentCompletedEvent,
  type SubagentProgressEvent,
  type SubagentStartedEvent,
  TERMINAL_EVENT_TYPES,
  type ToolCompletedEvent,
  type ToolFailedEvent,
  type ToolStartedEvent,
  type WarningEvent,
} from './events.js';
export type {
  Agent,
  CreateAgentOptions,
  NewSessionOptions,
  RunTurnOptions,
  TurnControl,
  TurnOrigin,
  TurnResult,
  TurnStatus,
} from './loop/agent-types.js';
export { createAgent } from './loop/create-agent.js';
export { planBatches } from './loop/run-tool-calls.js';
export { loadMessages, rowsToMessages, rowToMessageInput } from './loop/transcript.js';
export { EMPTY_RESPONSE_SENTINEL, GRACE_CALL_NOTE, steerNote } from './loop/turn-outcome.js';
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
export {
  buildSystemPrompt,
  CONTEXT_FILE_MAX_CHARS,
  CONTEXT_FILE_NAMES,
  CONTEXT_FILES_TOTAL_MAX_CHARS,
  type ContextFile,
  DEFAULT_IDENTITY,
  loadContextFiles,
  type SystemPromptOptions,
} from './prompt/system-prompt.js';
export {
  CONFIG_RECHECK_MS,
  createProfileRuntime,
  type ProfileAgentRequest,
  type ProfileDeliveryOptions,
  type ProfileRuntime,
  type ProfileRuntimeLogger,
  type ProfileRuntimeOptions,
} from './runtime/profile-runtime.js';
export {
  createProfileRuntimeSet,
  type ProfileRuntimeSet,
  type ProfileRuntimeSetOptions,
  type ProfileServing,
  profileServingOf,
  SERVED_SET_TTL_MS,
} from './runtime/profile-runtime-set.js';
export { patchTool } from './tools/builtin/patch.js';
export { READ_FILE_MAX_BYTES, readFileTool } from './tools/builtin/read-file.js';
export { searchFilesTool } from './tools/builtin/search-files.js';
export { skillViewTool } from './tools/builtin/skill-view.js';
export { runCommand, TERMINAL_KILL_GRACE_MS, terminalTool } from './tools/builtin/terminal.js';
export { type TodoItem, type TodoStatus, todoTool } from './tools/builtin/todo.js';
export { writeFileTool } from './tools/builtin/write-file.js';
export { BUILTIN_TOOLS } from './tools/builtin-tools.js';
export {
  DANGEROUS_PATTERNS,
  type DangerousPattern,
  detectDangerousCommand,
} from './tools/dangerous-commands.js';
export {
  defineTool,
  executeTool,
  type Tool,
  type ToolDefinition,
  type ToolDefinitionContext,
  type ToolOutcome,
  type ToolSpec,
} from './tools/define-tool.js';
export type {
  ApprovalCallback,
  ApprovalDecision,
  ApprovalRequest,
  ToolContext,
} from './tools/tool-context.js';
export { createToolRegistry, type ToolRegistry } from './tools/tool-registry.js';
export {
  CORE_TOOLSETS,
  defaultToolsetFor,
  type ExpandedToolsets,
  expandToolsets,
  listToolsets,
  type ResolveToolsOptions,
  resolveToolNames,
  resolveToolsetNames,
  selectsTool,
  TOOLSETS,
  type ToolsetDefinition,
  type ToolsetInfo,
  toolsetNamed,
} from './tools/toolsets.js';
