/** How many stored `/v1/responses` each profile keeps (kept in its `state.db`). */
export { MAX_STORED_RESPONSES } from '@hermes/session-store';
export {
  API_STREAM_KEEPALIVE_MS,
  CHAT_STREAM_KEEPALIVE_MS,
  type GatewayOptions,
  GatewayStartError,
  isLoopbackHost,
  type RunningGateway,
  startGateway,
} from './gateway.js';
export { CHAT_STREAM_EVENTS } from './http/chat-events.js';
export { SESSION_ID_HEADER, SESSION_KEY_HEADER } from './http/conversation-input.js';
export { PROFILE_REJECTED_BODY } from './http/profile-prefix.js';
export { HERMES_MODEL_NAME } from './http/routes/info.js';
export { LOG_FILE_NAME, LOG_ROTATE_KEEP, LOG_ROTATE_SIZE } from './logging/logger.js';
export { REDACTED, SecretScrubber } from './logging/secret-scrubber.js';
export { REVIEW_UNAVAILABLE_MESSAGE } from './runtime/slash-commands.js';
