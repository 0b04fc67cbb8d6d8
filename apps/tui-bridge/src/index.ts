export { Bridge, type BridgeOptions, type BridgeSurface, TUI_PLATFORM } from './bridge.js';
export { type BridgeCliOptions, runBridgeCli } from './cli.js';
export {
  CLOSE_END_REASON,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DENIED_TITLE_SOURCES,
  SESSION_LIST_DEFAULT_LIMIT,
  SHUTDOWN_END_REASON,
} from './constants.js';
export * from './contract/index.js';
export {
  type RunBridgeOptions,
  type RunningStdioBridge,
  type RunningWebSocketBridge,
  runBridge,
  type StartWebSocketBridgeOptions,
  startWebSocketBridge,
} from './run-bridge.js';
export type { DelegationSupport, SubagentView } from './runtime/delegation-support.js';
export { currentUiSession, type UiSessionIdentity } from './runtime/ui-scope.js';
export {
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
  tokensMatch,
  WebSocketBridgeError,
} from './transport/websocket.js';
export { BRIDGE_VERSION } from './version.js';
