export {
  type ArtifactReferenceValidator,
  type ArtifactValidationScope,
  toArtifactValidationScope,
} from './artifact-validation.js';
export { AsyncMutex } from './async-mutex.js';
export {
  BrowserControlBroker,
  type BrowserControlBrokerOptions,
  type CompletionInput,
  type DispatchRequest,
  type SessionLaneQuery,
} from './broker.js';
export {
  browserControlProtocolSupported,
  filterBrowserControlCapabilities,
  isArtifactCapability,
  isDeveloperCapability,
} from './capabilities.js';
export { type MonotonicClock, monotonicSeconds } from './clock.js';
export * from './constants.js';
export {
  BrowserControlError,
  type BrowserControlErrorCode,
  BrowserControllerConnectionError,
  ControllerCancelled,
  ControllerRejected,
  ControllerTicketInvalid,
  ControllerTimeout,
  ControllerUnavailable,
} from './errors.js';
export {
  type ExtensionControlFlagSource,
  type ExtensionControlFlags,
  flagsFromConfigReader,
  liveExtensionControlFlags,
  readFlags,
} from './flags.js';
export type { BrowserControlFrame, ControllerSend } from './frames.js';
export {
  type BrowserControlIdentity,
  getBrowserControlIdentity,
  withBrowserControlIdentity,
} from './identity-context.js';
export {
  defaultNavigationUrlPolicy,
  type NavigationUrlPolicy,
  NavigationUrlRejected,
} from './navigation-policy.js';
export type { DeadlineScheduler } from './pending-command.js';
export * from './protocol.js';
export { toReferenceJson } from './python-json.js';
export {
  BROWSER_TOOLS,
  CONTROLLER_ROUTING_ALIAS_KEYS,
  EXTENSION_ROUTED_BROWSER_TOOLS,
  extensionControllerAvailable,
  type RouteBrowserToolOptions,
  type RoutedBrowserHandlerOptions,
  type RouterBroker,
  routeBrowserTool,
  routedBrowserHandler,
} from './router.js';
export {
  type ControllerScope,
  type ControllerScopeInput,
  createScope,
  identityKey,
  replacementLaneKey,
  sameIdentity,
  sameScope,
  scopeKey,
  scopeToWire,
  type WireScope,
  withCapabilities,
} from './scope.js';
export { getBrowserControlBroker } from './shared-broker.js';
export { type Ticket, TicketBook } from './ticket-book.js';
export {
  type ArtifactTransportInfo,
  browserExtensionControlFeature,
  DEFAULT_ARTIFACT_TRANSPORT,
} from './transport/capabilities-document.js';
export {
  type ControllerConnection,
  type ControllerConnectionOptions,
  serveControllerConnection,
} from './transport/controller-connection.js';
export {
  type BrowserControlIdentityMiddlewareOptions,
  browserControlIdentityMiddleware,
} from './transport/identity-middleware.js';
export {
  bearerMatches,
  deriveApiPrincipal,
  nodePeerAddress,
  transportFamilyForPeer,
} from './transport/principal.js';
export {
  type BrowserControlRoutesOptions,
  createBrowserControlRoutes,
  MAX_REGISTER_BODY_BYTES,
  REGISTER_ERROR_CODES,
} from './transport/routes.js';
export { createWebSocketSender, type WebSocketSenderOptions } from './transport/send-bridge.js';
export {
  type BrowserControlUpgradeHandler,
  type BrowserControlUpgradeOptions,
  createBrowserControlUpgradeHandler,
  ticketFromProtocols,
} from './transport/upgrade.js';
export {
  BROWSER_TURN_PROTOCOL,
  bindBrowserTurnTarget,
  parseBrowserTurnTarget,
  type TurnTarget,
} from './turn-target.js';
