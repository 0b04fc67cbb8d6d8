export {
  type AsyncDiagnostic,
  type AsyncDiagnosticOptions,
  spawnAsyncDiagnostic,
} from './async-diagnostic.js';
export {
  type LaunchdStopBudget,
  resolveCronDrainBudget,
  resolveLaunchdStopBudget,
  resolveRestartExitWaitBudget,
  resolveShutdownWatchdogDelay,
  resolveSystemdTimeoutStopSec,
} from './budgets.js';
export { type SupervisorClock, type SupervisorLogger, stderrLogger, systemClock } from './clock.js';
export * from './constants.js';
export { SupervisorError, type SupervisorErrorCode } from './errors.js';
export {
  type EnqueueOptions,
  type FailedPlatformEntry,
  FailedPlatformQueue,
  type FailedPlatformQueueOptions,
  reconnectBackoffS,
} from './failed-platform-queue.js';
export {
  type HeartbeatRecord,
  heartbeatFilePath,
  type LoopHeartbeat,
  type LoopHeartbeatOptions,
  loopTickSocketPath,
  startLoopHeartbeat,
} from './heartbeat.js';
export {
  type LivenessVerdict,
  type ProbeLivenessOptions,
  probeLiveness,
} from './liveness-probe.js';
export {
  type EventLoopDelaySummary,
  type LoopWatchdog,
  type LoopWatchdogMode,
  type LoopWatchdogOptions,
  type LoopWatchdogPhase,
  type LoopWatchdogPhaseInfo,
  type LoopWatchdogReport,
  startLoopWatchdog,
} from './loop-watchdog.js';
export {
  type AdapterFatalError,
  type ConnectOptions,
  ConnectTimeoutError,
  connectWithTimeout,
  type PlatformAdapter,
  type SendOptions,
  type SendResult,
} from './platform-adapter.js';
export {
  type AdapterHooks,
  createPlatformFleet,
  DEFAULT_ADAPTER_DISCONNECT_TIMEOUT_S,
  DEFAULT_PLATFORM_CONNECT_TIMEOUT_S,
  type NoAdaptersLeftEvent,
  PLATFORM_FLEET_STATES,
  type PlatformFleet,
  type PlatformFleetOptions,
  type PlatformState,
  type PlatformStatus,
  STARTUP_RETRY_DELAY_S,
  type StartupSummary,
} from './platform-fleet.js';
export {
  createPlatformRecovery,
  type FatalPlatform,
  type OnAllAdaptersDown,
  type PlatformLostEvent,
  type PlatformRecovery,
  type PlatformRecoveryOptions,
  type StrandedCheck,
} from './platform-recovery.js';
export {
  createReconnectWatcher,
  type ReconnectAttempt,
  type ReconnectPlatform,
  type ReconnectResult,
  type ReconnectWatcherOptions,
} from './reconnect-watcher.js';
export {
  createReconnectWatcherKeeper,
  type ReconnectWatcherKeeper,
  type ReconnectWatcherKeeperOptions,
} from './reconnect-watcher-keeper.js';
export { redactSecrets } from './redact-secrets.js';
export { type MarkExitedOptions, markRuntimeStatusExitedSync } from './runtime-status.js';
export { scaledClock } from './scaled-clock.js';
export {
  findEmbeddedSecrets,
  type GatewayServiceOptions,
  launchdLabel,
  renderLaunchdPlist,
  renderSystemdUnit,
  systemdUnitName,
} from './service-unit.js';
export {
  formatShutdownContext,
  type ProcessSummary,
  type ShutdownContext,
  snapshotShutdownContext,
} from './shutdown-context.js';
export {
  armShutdownWatchdog,
  SHUTDOWN_DUMP_END,
  SHUTDOWN_DUMP_START,
  type ShutdownWatchdog,
  type ShutdownWatchdogOptions,
} from './shutdown-watchdog.js';
export {
  type SpawnSupervisedOptions,
  type SupervisedFactory,
  type SupervisedTask,
  type SupervisedTaskState,
  spawnSupervised,
  supervisedBackoffS,
} from './supervised-task.js';
export {
  checkSystemdTimingAlignment,
  detectSystemdTimingAlignment,
  parseSystemctlShow,
  parseSystemdDurationToMicroseconds,
  parseSystemdTimespan,
  type QuerySystemdUnitTimingOptions,
  querySystemdUnitTiming,
  readSystemdUnitTiming,
  resolveSystemdRestartWaitS,
  SYSTEMD_TIMING_PROPERTIES,
  type SystemdTimingAlignment,
  type SystemdUnitRef,
  type SystemdUnitTiming,
  systemdUnitFromCgroup,
} from './systemd-timing.js';
export { loopWatchdogOptionsFromConfig } from './watchdog-options.js';
