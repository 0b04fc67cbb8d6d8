export { CODE_SHA_ENV, type ReadCodeIdentityOptions, readCodeIdentity } from './code-identity.js';
export * from './constants.js';
export {
  identifyGateway,
  type QueryOptions,
  queryControlSocket,
  queryGatewayStatus,
} from './control-client.js';
export {
  type ControlServer,
  type ControlServerOptions,
  type ControlServerStartResult,
  startControlServer,
} from './control-server.js';
export {
  CODE_IDENTITY_FAILED_LOG,
  type CodeIdentityProvider,
  createDefaultVerbHandlers,
  createIdentifyHandler,
  createStatusHandler,
  type DefaultVerbOptions,
} from './default-verbs.js';
export {
  ControlSocketError,
  type ControlSocketErrorCode,
  type ControlSocketErrorOptions,
} from './errors.js';
export {
  type CollectFleetVersionsOptions,
  collectFleetVersions,
  defaultFleetHomes,
  FLEET_VERSION_STATES,
  type FleetVersionRow,
  type FleetVersionState,
  fleetNeedsAttention,
  formatFleetVersionRow,
} from './fleet-versions.js';
export {
  type GatewayCommandLinePredicate,
  gatewaySubcommandOf,
  isGatewayCommandLine,
} from './gateway-command-line.js';
export {
  type GatewayLivenessOptions,
  isLiveGatewayProcess,
  pidRecordNamesLiveGateway,
} from './gateway-liveness.js';
export { canonicalHomePath, homeHash } from './home-hash.js';
export { type ControlSocketLogger, silentLogger } from './logger.js';
export {
  alreadyRunningMessage,
  type ClaimPidFileOptions,
  claimPidFile,
  type GetRunningPidOptions,
  getRunningPid,
  PID_FILE_RACE_LOST_MESSAGE,
  type PidFileClaim,
  type PidFileRefusal,
  pidFilePath,
  RUNTIME_LOCK_HELD_MESSAGE,
  removePidFile,
} from './pid-file.js';
export {
  buildPidRecord,
  type PidRecord,
  type PidRecordInput,
  PidRecordSchema,
  parsePidRecord,
  readPidRecord,
} from './pid-record.js';
export {
  isProcessAlive,
  isRecordedProcessLive,
  readProcessCommandLine,
  readProcessStartTime,
  startTimesConflict,
} from './process-identity.js';
export { profileLabelForHome } from './profile-label.js';
export { pythonRepr } from './python-repr.js';
export { type DispatchOptions, dispatchRequestLine, encodeReply } from './request-dispatch.js';
export {
  GATEWAY_STARTS_LOG_FILE_NAME,
  RESPAWN_STORM_DEFAULTS,
  type RespawnStormCheck,
  type RespawnStormOptions,
  recordStartAndCheckStorm,
} from './respawn-storm.js';
export {
  type CollectRuntimeInventoryOptions,
  classifySupervisorForPid,
  collectRuntimeInventory,
  type RuntimeRecord,
} from './runtime-inventory.js';
export {
  acquireRuntimeLock,
  type RuntimeLockResult,
  releaseRuntimeLock,
  runtimeLockPath,
} from './runtime-lock.js';
export {
  type CodeIdentity,
  GATEWAY_STATES,
  type GatewayState,
  INACTIVE_GATEWAY_STATES,
  isRuntimeStatusStale,
  mergeRuntimeStatus,
  normalizeUpdatedAt,
  PLATFORM_STATES,
  type PlatformState,
  type PlatformStatusUpdate,
  type RuntimeStatusRecord,
  RuntimeStatusSchema,
  type RuntimeStatusUpdate,
  type RuntimeStatusWriter,
  readRuntimeStatus,
  runtimeStatusPath,
  runtimeStatusPid,
  runtimeStatusPidIsLive,
  SESSION_STORE_STATUSES,
  type SessionStoreStatus,
  writeRuntimeStatus,
} from './runtime-status.js';
export {
  type ClientSocketPathOptions,
  fitsSocketPathLimit,
  type RejectedSocket,
  resolveClientSocketPath,
  resolveServerSocketPath,
  type ServerSocketLocation,
  type SocketPathOptions,
  windowsPipeName,
} from './socket-path.js';
export * from './supervisor.js';
export { type VerbHandler, type VerbHandlerContext, VerbRegistry } from './verb-registry.js';
export * from './wire-schema.js';
