export {
  ErrorObjectSchema,
  ErrorResponseSchema,
  EVENT_METHOD,
  type EventEnvelope,
  EventEnvelopeSchema,
  MAX_MESSAGE_BYTES,
  PROTOCOL_VERSION,
  RequestIdSchema,
  RequestSchema,
  ResponseSchema,
  type RpcRequest,
  type RpcResponse,
  SuccessResponseSchema,
} from './envelope.js';
export { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError, type RpcErrorCode } from './error-codes.js';
export { EVENT_TYPES, EVENTS, type EventPayload, type EventType } from './events.js';
export {
  BotEnvelopeSchema,
  BotRosterEntrySchema,
  isMethodName,
  METHOD_NAMES,
  METHODS,
  MessageViewSchema,
  type MethodName,
  type MethodParams,
  type MethodResult,
  ProfileEntrySchema,
  SESSION_LIST_MAX_LIMIT,
  SessionSummarySchema,
  SubagentSchema,
  UsageSchema,
} from './methods.js';
export { buildOpenRpcDocument } from './openrpc.js';
