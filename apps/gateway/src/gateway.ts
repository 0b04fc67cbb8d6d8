import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  createDelegationRail,
  createProfileRuntimeSet,
  type ProfileRuntime,
  profileServingOf,
} from '@hermes/agent';
import { ArtifactStoreCache } from '@hermes/artifact-store';
import {
  createBrowserControlUpgradeHandler,
  flagsFromConfigReader,
  getBrowserControlBroker,
} from '@hermes/browser-broker';
import {
  applyEnvFile,
  ConfigParseError,
  createConfigReader,
  getActiveProfileName,
  getProcessHermesHome,
  HermesConfigError,
  type LoadedConfig,
  loadConfig,
  resolveRestartDrainTimeout,
} from '@hermes/config';
import {
  type CodeIdentity,
  type ControlServer,
  claimPidFile,
  createDefaultVerbHandlers,
  GATEWAY_EXIT_CODES,
  pidFilePath,
  type RuntimeStatusUpdate,
  readCodeIdentity,
  readProcessStartTime,
  recordStartAndCheckStorm,
  startControlServer,
  writeRuntimeStatus,
} from '@hermes/control-socket';
import {
  armShutdownWatchdog,
  GATEWAY_SERVICE_RESTART_EXIT_CODE,
  type LoopHeartbeat,
  type LoopWatchdog,
  loopWatchdogOptionsFromConfig,
  resolveShutdownWatchdogDelay,
  scaledClock,
  startLoopHeartbeat,
  startLoopWatchdog,
  systemClock,
} from '@hermes/supervisor';
import { getRequestListener } from '@hono/node-server';
import type { Logger } from 'pino';
import { startHousekeeping } from './housekeeping/housekeeping.js';
import { housekeepingJobs } from './housekeeping/jobs.js';
import { createGatewayApp } from './http/app.js';
import {
  adapterErrorResponse,
  HttpError,
  httpErrors,
  refuseUnparsableRequest,
  refuseUpgrade,
} from './http/errors.js';
import type { GatewayDeps } from './http/gateway-env.js';
import { startLoopDelayMonitor } from './lifecycle/loop-delay.js';
import { GatewayMetrics } from './lifecycle/metrics.js';
import { createGatewayLogger, type GatewayLogger, type LogLevel } from './logging/logger.js';
import { PlatformService } from './platforms/platform-service.js';
import { readGatewayPlatformKnobs } from './platforms/platform-settings.js';
import { touchCleanShutdown, writeRestartPending } from './restart/markers.js';
import { waitBounded } from './restart/restore-gate.js';
import { ActiveTurns } from './runtime/active-turns.js';
import {
  API_SERVER_PLATFORM,
  type DelegationWiring,
  gatewayDelivery,
  servedProfile,
} from './runtime/profiles.js';
import { RunRegistry } from './runtime/run-registry.js';
import { SlashCommands } from './runtime/slash-commands.js';
import { runTurn, type TurnOutcome, type TurnRequest } from './runtime/turn-runner.js';
import { GATEWAY_VERSION } from './version.js';

/** After the interrupt, how long turns get to store what they have. */
export const POST_INTERRUPT_GRACE_S = 5;
/** Keep-alive comment period of `/api/sessions/:id/chat/stream` (the reference's 10 s). */
export const CHAT_STREAM_KEEPALIVE_MS = 10_000;
/** Keep-alive comment period of the OpenAI-compatible streams and run events (30 s). */
export const API_STREAM_KEEPALIVE_MS = 30_000;
/** After the drain, how long open responses get to be written before connections are cut. */
export const RESPONSE_FLUSH_GRACE_MS = 5000;
/** How long the stop waits for the housekeeping loop to return (the reference's 35 s). */
export const HOUSEKEEPING_SHUTDOWN_DRAIN_TIMEOUT_S = 35;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopbackHost(host: string): boolean {
  const normalized = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return LOOPBACK_HOSTS.has(normalized) || /^127\.\d+\.\d+\.\d+$/.test(normalized);
}

export interface GatewayOptions {
  /** Overrides `api_server.port` / `API_SERVER_PORT` (0 = any free port). */
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly logLevel?: LogLevel | undefined;
  readonly drainTimeoutS?: number | undefined;
  readonly keepaliveMs?: { readonly chatStreamMs?: number; readonly apiStreamMs?: number };
  readonly env?: NodeJS.ProcessEnv;
  /** Where the startup banner goes (default stdout). */
  readonly print?: (line: string) => void;
  /**
   * Runs supervision time (reconnect backoff, watcher delays, retry waits, housekeeping) this many
   * times faster: 0.01 turns a 30 s backoff into 0.3 s. For tests and demos; default 1.
   */
  readonly timeScale?: number | undefined;
  /**
   * The gateway decided it must end (a platform lost for good, every adapter down): the caller
   * stops it and exits with `code` so the service manager knows whether to restart it.
   */
  readonly onExitRequested?: (code: number, reason: string) => void;
}

export interface StopOptions {
  /** A restart was asked for (SIGUSR1): exit 75 and leave `.restart_pending.json` for the next start. */
  readonly restart?: boolean;
  /** Overrides the exit code (a failure verdict). */
  readonly exitCode?: number;
}

/** A startup refusal with the exit code the bin should use. */
export class GatewayStartError extends Error {
  override readonly name = 'GatewayStartError';
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly home: string;
  readonly socketPath: string | null;
  readonly logger: Logger;
  /** Drains and stops in the documented order; resolves with the exit code. Memoised. */
  stop(reason: string, options?: StopOptions): Promise<number>;
  /** The webhook listener's URL, when the webhook platform is enabled and listening. */
  readonly webhookUrl: string | undefined;
}

function portFrom(value: string | undefined, source: string): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  // Decimal digits (surrounding blanks forgiven): `Number()` would also take `0x10` or `1e3`.
  const port = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || port > 65_535)
    throw new GatewayStartError(
      `${source} must be a port number 0-65535, got ${JSON.stringify(value)}`,
      GATEWAY_EXIT_CODES.fatalConfig,
    );
  return port;
}

/** The commit this gateway runs (`HERMES_CODE_SHA`, else its source checkout's HEAD), read at start. */
function codeIdentity(env: NodeJS.ProcessEnv): () => CodeIdentity {
  const identity = readCodeIdentity({ from: import.meta.url, version: GATEWAY_VERSION, env });
  return () => identity;
}

/**
 * Starts the gateway in the order `docs/architecture.md` gives: home and config → PID claim →
 * state → liveness → control socket → HTTP → announce. Throws `GatewayStartError` (with the exit
 * code: 78 for configuration, 1 otherwise) when it cannot run; anything already started is
 * stopped again.
 */
export async function startGateway(options: GatewayOptions = {}): Promise<RunningGateway> {
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const startedAtWall = Date.now();
  const startedAt = performance.now();

  // 1. Home and config.
  const home = getProcessHermesHome(env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const level = options.logLevel ?? 'info';
  const logs: GatewayLogger = createGatewayLogger({ home, level });
  const { logger } = logs;
  const cleanups: (() => Promise<void> | void)[] = [() => logs.close()];
  const unwind = async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
  };

  let loaded: LoadedConfig;
  try {
    applyEnvFile(home, env);
    loaded = loadConfig({ home });
  } catch (error) {
    await unwind();
    if (error instanceof ConfigParseError || HermesConfigError.isInstance(error)) {
      throw new GatewayStartError((error as Error).message, GATEWAY_EXIT_CODES.fatalConfig);
    }
    throw error;
  }
  for (const warning of loaded.warnings) logger.warn(warning);
  const { config } = loaded;
  logs.scrubber.addFromEnvironment(env);
  logs.scrubber.add(config.apiServer.key, config.model.apiKey);
  for (const provider of [...Object.values(config.providers), ...config.customProviders]) {
    logs.scrubber.add(provider.apiKey, provider.keyEnv ? env[provider.keyEnv] : undefined);
  }
  for (const fallback of config.fallbackProviders) logs.scrubber.add(fallback.apiKey);

  let port: number;
  let host: string;
  try {
    port =
      options.port ?? portFrom(env.API_SERVER_PORT, 'API_SERVER_PORT') ?? config.apiServer.port;
    host = options.host ?? (env.API_SERVER_HOST?.trim() || config.apiServer.host);
  } catch (error) {
    await unwind();
    throw error;
  }
  const loopbackOnly = isLoopbackHost(host);
  if (!loopbackOnly && !config.apiServer.key) {
    await unwind();
    throw new GatewayStartError(
      `Refusing to listen on ${host}: the API server is reachable beyond loopback and no API key is configured. Set API_SERVER_KEY in ${path.join(home, '.env')} (or api_server.key in config.yaml), or listen on 127.0.0.1.`,
      GATEWAY_EXIT_CODES.fatalConfig,
    );
  }
  const drainTimeoutS =
    options.drainTimeoutS ??
    resolveRestartDrainTimeout(loaded.raw, (message) => logger.warn(message));

  // 2. Claim the home.
  const claim = await claimPidFile({ home });
  if (!claim.claimed) {
    await unwind();
    throw new GatewayStartError(claim.message, GATEWAY_EXIT_CODES.failure);
  }
  cleanups.push(() => claim.release());
  const storm = await recordStartAndCheckStorm(home);
  if (storm.storm) {
    logger.warn(
      { startsInWindow: storm.startsInWindow, backoffSeconds: storm.backoffSeconds },
      `Respawn storm: ${storm.startsInWindow} starts in the last 120 s; waiting ${storm.backoffSeconds} s before serving`,
    );
    await new Promise((resolve) =>
      setTimeout(resolve, storm.backoffSeconds * 1000 * (options.timeScale ?? 1)),
    );
  }
  const identity = codeIdentity(env);
  const writer = {
    pid: process.pid,
    argv: process.argv,
    startTime: await readProcessStartTime(process.pid),
    home,
    codeIdentity: identity(),
  };
  const writeStatus = (update: RuntimeStatusUpdate) =>
    writeRuntimeStatus(home, update, writer).catch((error: unknown) =>
      logger.warn({ err: error }, 'gateway_state.json could not be written'),
    );
  await writeStatus({ gatewayState: 'starting', exitReason: null, clearProfilePlatforms: true });

  // Turn bookkeeping is needed from the state step on: recovered delegations are delivered as
  // turns as soon as the store is open.
  const turns = new ActiveTurns();
  const runs = new RunRegistry();
  // Read at scrape time: the pieces they name exist by the time HTTP serves.
  const metrics = new GatewayMetrics({
    platforms: () => platformsRef?.status() ?? [],
    obligationBacklog: () => platformsRef?.owedSize ?? 0,
    inboundJournal: () => platformsRef?.journalSize ?? 0,
    delegationBacklog: () => ({
      pending: registry.runtimes().reduce((sum, runtime) => sum + runtime.pendingCompletions, 0),
      running: registry
        .runtimes()
        .reduce((sum, runtime) => sum + (runtime.registryIfOpen?.running ?? 0), 0),
    }),
    activeTurns: () => turns.size,
    loopDelay: () => loopDelay.read(),
    watchdogStrikes: () => (watchdog ? watchdog.strikes : null),
  });
  /** Every model turn goes through here: the turn runner plus the metrics of its events. */
  const observedTurn = async (request: TurnRequest): Promise<TurnOutcome> => {
    const observe = metrics.turnObserver();
    try {
      const outcome = await runTurn(turns, {
        ...request,
        logger,
        onEvent: (event) => {
          observe(event);
          request.onEvent?.(event);
        },
      });
      metrics.turnFinished(request.kind, outcome.result.status);
      return outcome;
    } catch (error) {
      metrics.turnFinished(request.kind, 'refused');
      throw error;
    }
  };
  const delegation: DelegationWiring = {
    runTurn: async (runtime, options) =>
      (
        await observedTurn({
          runtime,
          sessionId: options.sessionId,
          // None after a crash: the completion is stored already and only needs its answer.
          message: options.message,
          kind: 'delegation',
          displayKind: options.displayKind,
          ephemeralSystemNote: options.ephemeralSystemNote,
          onMessageStored: options.onMessageStored,
          origin: options.origin,
        })
      ).result,
    isIdle: (runtime, sessionId) => {
      if (turns.draining) return false;
      const session = runtime.storeIfOpen?.getSession(sessionId);
      return !turns.isRunning(runtime.name, session?.lineageRootId ?? sessionId);
    },
  };

  // 3. State: the profiles served, each with its store, delegation registry and agents.
  const profileName = getActiveProfileName(home);
  const serving = profileServingOf(config.gateway);
  const multiplex = serving.serve === 'multiplex';
  const registry = createProfileRuntimeSet({
    ...serving,
    launch: {
      home,
      name: profileName,
      // Under multiplex every profile runs in a scope with its own secrets; the launch profile's
      // are the process environment (its .env already applied).
      secrets: multiplex ? secretsOf(env) : undefined,
    },
    runtime: {
      platform: API_SERVER_PLATFORM,
      logger,
      // Completions re-enter their sessions through the gateway's own turn runner.
      onRegistry: (_registry, runtime) => gatewayDelivery(runtime, delegation),
    },
    // The profile's secrets go to the log scrubber before anything can log them.
    onCreate: (runtime) => scrubProfileSecrets(logs, runtime),
  });
  const primary = registry.launch;
  try {
    await primary.store();
  } catch (error) {
    await writeStatus({ gatewayState: 'startup_failed', exitReason: 'session_store_unavailable' });
    await registry.close().catch(() => {});
    await unwind();
    throw new GatewayStartError(
      `state.db cannot be opened: ${error instanceof Error ? error.message : String(error)}`,
      GATEWAY_EXIT_CODES.failure,
    );
  }
  cleanups.push(() => registry.close());
  // The delegation ledger: completions a previous run owed are restored before anything is
  // sent, then delivered as new turns of their sessions (in the background, when idle).
  await primary.deliveryReady();

  // 4. Liveness.
  let watchdog: LoopWatchdog | undefined;
  let heartbeat: LoopHeartbeat | undefined;
  const watchdogOptions = loopWatchdogOptionsFromConfig(config.gateway, { home });
  if (watchdogOptions) watchdog = startLoopWatchdog(watchdogOptions);
  cleanups.push(() => watchdog?.stop());
  heartbeat = await startLoopHeartbeat({
    home,
    warn: (message: string) => logger.warn(message),
  });
  cleanups.push(() => heartbeat?.stop());
  const loopDelay = startLoopDelayMonitor();
  cleanups.push(() => loopDelay.stop());

  // Runtime pieces the control socket and the HTTP server share.
  let platformsRef: PlatformService | undefined;
  const liveStatus = () => {
    const delay = loopDelay.read();
    return {
      pid: process.pid,
      uptime_s: Math.round((performance.now() - startedAt) / 100) / 10,
      draining: turns.draining,
      active_turns: turns.size,
      active_turns_by_kind: turns.byKind(),
      queue_depths: {
        runs_running: runs.running,
        delegation_completions: registry
          .runtimes()
          .reduce((sum, runtime) => sum + runtime.pendingCompletions, 0),
        delegations_running: registry
          .runtimes()
          .reduce((sum, runtime) => sum + (runtime.registryIfOpen?.running ?? 0), 0),
      },
      event_loop_delay_p99_ms: delay.p99Ms,
      event_loop_delay_max_ms: delay.maxMs,
      watchdog_strikes: watchdog ? watchdog.strikes : null,
      served_profiles: registry.servedProfiles(),
      platforms: platformsRef?.status() ?? [],
      obligation_backlog: platformsRef?.owedSize ?? 0,
      inbound_journal: platformsRef?.journalSize ?? 0,
      restore_gate: platformsRef ? (platformsRef.gate.isOpen ? 'open' : 'closed') : 'open',
      webhook_url: platformsRef?.webhookUrl ?? null,
    };
  };

  // 5. Control socket (never fatal).
  const defaultVerbs = createDefaultVerbHandlers({ home, codeIdentity: identity });
  const baseStatus = defaultVerbs.status;
  const control = await startControlServer({
    home,
    codeIdentity: identity,
    logger: {
      info: (message) => logger.info(message),
      warn: (message) => logger.warn(message),
      debug: (message, error) => logger.debug({ err: error }, message),
    },
    handlers: {
      ...defaultVerbs,
      status: async (request, context) => ({
        ...((await baseStatus?.(request, context)) as Record<string, unknown>),
        ...liveStatus(),
        active_agents: turns.size,
      }),
    },
  });
  let controlServer: ControlServer | undefined;
  if (control.started) {
    controlServer = control.server;
    cleanups.push(() => controlServer?.close());
  } else {
    logger.warn({ err: control.error }, 'Gateway control socket failed to start (non-fatal)');
  }

  // 6. HTTP.
  const broker = getBrowserControlBroker();
  const flags = flagsFromConfigReader(createConfigReader({ home }));
  const artifactStores = new ArtifactStoreCache({
    resolveProfileHome: (profile) => {
      const runtime = servedProfile(registry, profile);
      if (!runtime) throw new Error(`profile ${profile} is not served`);
      return runtime.home;
    },
    onStoreCreated: (profile, artifactStore) => broker.attachArtifactStore(artifactStore, profile),
  });
  const slash = new SlashCommands({
    turns,
    version: GATEWAY_VERSION,
    // /review dispatches on the profile's async delegation rail, bound to the session.
    railFactory: async ({ runtime, sessionId }) => {
      const agent = await runtime.agent();
      const session = (await runtime.store()).getSession(sessionId);
      return createDelegationRail({
        agent,
        sessionId,
        sessionKey: session?.sessionKey ?? session?.lineageRootId ?? sessionId,
        ...(session?.cwd ? { cwd: session.cwd } : {}),
      });
    },
  });
  const deps: GatewayDeps = {
    registry,
    turns,
    logger,
    maxRequestBytes: config.apiServer.maxRequestBytes,
    loopbackOnly,
    version: GATEWAY_VERSION,
    startedAt: startedAtWall,
    broker,
    flags,
    artifactStores,
    runs,
    slash,
    runTurn: observedTurn,
    keepalive: {
      chatStreamMs: options.keepaliveMs?.chatStreamMs ?? CHAT_STREAM_KEEPALIVE_MS,
      apiStreamMs: options.keepaliveMs?.apiStreamMs ?? API_STREAM_KEEPALIVE_MS,
    },
    liveStatus,
    metrics: () => metrics.render(),
  };
  const app = createGatewayApp(deps);
  const upgrade = createBrowserControlUpgradeHandler({ broker, flags });
  const server: Server = createServer(
    getRequestListener(app.fetch, {
      errorHandler: (error) => adapterErrorResponse(error, logger),
    }),
  );
  server.on('clientError', refuseUnparsableRequest);
  server.on('upgrade', (request, socket, head) => {
    // A draining gateway takes no new controller (its ticket stays unused).
    if (turns.draining) {
      refuseUpgrade(socket, httpErrors.draining());
      return;
    }
    // Under /p/<profile> the controller socket is the same endpoint.
    const match = /^\/p\/[^/]+(\/v1\/browser-control\/ws(?:\?.*)?)$/.exec(request.url ?? '');
    if (match?.[1]) request.url = match[1];
    if (!upgrade.handleUpgrade(request, socket, head)) {
      // Like any unknown route: a 404 the client can read, not a dropped connection.
      const pathname = (request.url ?? '/').split('?')[0];
      refuseUpgrade(
        socket,
        new HttpError({
          status: 404,
          code: 'not_found',
          message: `No route for ${request.method ?? 'GET'} ${pathname} (WebSocket upgrade)`,
        }),
      );
    }
  });
  try {
    // Rejects with the listen error (EADDRINUSE, EACCES, …) instead of resolving.
    await once(server.listen(port, host), 'listening');
  } catch (error) {
    await writeStatus({ gatewayState: 'startup_failed', exitReason: 'listen_failed' });
    await unwind();
    throw new GatewayStartError(
      `cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`,
      GATEWAY_EXIT_CODES.failure,
    );
  }
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;

  // 7. Platforms: every adapter connects concurrently, under supervision; inbound messages wait
  // behind the restore gate until the boot work of the previous run is done.
  const timeScale = options.timeScale ?? 1;
  let stopGateway: ((reason: string, options?: StopOptions) => Promise<number>) | undefined;
  let pendingExit: { code: number; reason: string } | undefined;
  const knobs = readGatewayPlatformKnobs(loaded, env, (message) => logger.warn(message));
  const platforms = new PlatformService({
    home,
    registry,
    loaded,
    knobs,
    turns,
    slash,
    logger,
    clock: timeScale === 1 ? systemClock : scaledClock(timeScale),
    timeScale,
    runTurn: observedTurn,
    requestExit: (code, reason) => {
      logger.error({ code, reason }, 'gateway exiting for the service manager');
      if (options.onExitRequested) options.onExitRequested(code, reason);
      else if (stopGateway) void stopGateway(reason, { exitCode: code });
      else pendingExit ??= { code, reason };
    },
  });
  cleanups.push(() => platforms.stop());
  platformsRef = platforms;
  platforms.warnUnservedProfilePlatforms();
  if (platforms.enabled > 0) {
    const summary = await platforms.start();
    logger.info(
      {
        connected: summary.connected,
        queued: summary.queued,
        disabled: summary.disabled,
        fatal: summary.fatal.map((item) => `${item.platform}: ${item.error.message}`),
      },
      'platforms started',
    );
    if (summary.onlyFatal) {
      const reasons = summary.fatal.map((item) => `${item.platform}: ${item.error.message}`);
      await writeStatus({ gatewayState: 'startup_failed', exitReason: reasons.join('; ') });
      server.close();
      server.closeAllConnections();
      await unwind();
      throw new GatewayStartError(
        `no messaging platform could start: ${reasons.join('; ')}`,
        GATEWAY_EXIT_CODES.fatalConfig,
      );
    }
  }

  // 8. Announce.
  await writeStatus({
    gatewayState: 'running',
    exitReason: null,
    activeAgents: 0,
    servedProfiles: multiplex ? registry.servedProfiles() : [],
    sessionStore: 'ok',
  });
  let lastActive = 0;
  const statusTimer = setInterval(() => {
    if (turns.size === lastActive) return;
    lastActive = turns.size;
    void writeStatus({ activeAgents: lastActive });
  }, 2000);
  statusTimer.unref();

  // One write, so a reader waiting for the first line sees the whole banner.
  const banner = [
    `Hermes gateway listening on ${url}`,
    `  home:           ${home}`,
    `  control socket: ${controlServer?.bindPath ?? '(unavailable)'}`,
    `  log file:       ${logs.file}`,
  ];
  if (!config.model.baseUrl && !config.model.provider) {
    banner.push(
      `  model:          not configured — set model.base_url and model.default in ${path.join(home, 'config.yaml')}`,
    );
  }
  print(banner.join('\n'));
  logger.info(
    { url, home, profile: profileName, multiplex, socket: controlServer?.bindPath ?? null },
    'gateway running',
  );

  // Boot work of the previous run (claims, notices, redelivery, resumed turns) runs in the
  // background behind the restore gate; the HTTP API is already serving.
  // Without a messaging platform there is nothing to restore: the gate opens at once.
  if (platforms.enabled === 0) platforms.gate.open();
  const booting =
    platforms.enabled > 0
      ? platforms.boot().catch((error: unknown) => {
          logger.error({ err: error }, 'startup restore failed; opening the inbound gate');
          platforms.gate.open();
        })
      : Promise.resolve();

  let stopping: Promise<number> | undefined;
  let stopHousekeeping: (() => Promise<void>) | undefined;
  stopGateway = (reason: string, stopOptions: StopOptions = {}): Promise<number> => {
    stopping ??= (async () => {
      // Phase 1 — begin teardown: refuse new turns at once, before anything awaits; a platform
      // failing from now on is part of the stop, not a reason to exit.
      turns.startDraining();
      platforms.beginShutdown();
      logger.info({ reason, restart: stopOptions.restart === true }, 'gateway stopping');
      const shutdownWatchdog = armShutdownWatchdog({
        delayS: resolveShutdownWatchdogDelay(drainTimeoutS),
        home,
        removeFiles: [pidFilePath(home), path.join(home, 'gateway.lock')],
        snapshot: () => ({ ...liveStatus(), reason }),
      });
      clearInterval(statusTimer);
      await writeStatus({ gatewayState: 'draining', activeAgents: turns.size });
      // The listener stays open while the turns drain, so the running turns can deliver and a
      // client can see the drain: /health answers `draining`, a new turn 503 gateway_draining,
      // a run's status and events still answer. Browser controllers go now (a recoverable
      // disconnect) and new ones are refused at the upgrade.
      await upgrade.close().catch(() => {});
      logger.debug('shutdown: turn admission and WebSocket controllers closed');
      // Phase 2 — drain with the budget. Platform turns were pre-marked resume_pending when they
      // began, so a SIGKILL from here on still resumes them next time.
      let drained = await turns.waitForIdle(drainTimeoutS * 1000);
      const drainTimedOut = !drained;
      if (!drained) {
        // Phase 3 — interrupt: what the model said is stored; the turn resumes at the next start.
        const interrupted = turns.interruptAll('gateway shutting down');
        logger.warn({ interrupted, drainTimeoutS }, 'drain timed out; interrupting running turns');
        drained = await turns.waitForIdle(POST_INTERRUPT_GRACE_S * 1000);
      }
      // Stop accepting connections; the answers of the turns that just ended keep theirs.
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      logger.debug({ drained }, 'shutdown: turns drained, HTTP admission closed');
      // Replies of the turns that finished go out while the adapters are still up.
      await waitBounded([platforms.idle()], RESPONSE_FLUSH_GRACE_MS / 1000);
      // Phase 4 — bounded adapter teardown.
      await platforms
        .stop()
        .catch((error: unknown) => logger.warn({ err: error }, 'platform teardown failed'));
      logger.debug('shutdown: platforms stopped');
      // Let the answers of the turns that just ended reach their clients, then cut what is left.
      // Connections go as soon as they are idle (a keep-alive client would hold one forever).
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const flushTimer = setTimeout(() => server.closeAllConnections(), RESPONSE_FLUSH_GRACE_MS);
      await serverClosed;
      clearInterval(idleSweep);
      clearTimeout(flushTimer);
      logger.debug('shutdown: HTTP closed');
      // Phase 5 — release runtime state (housekeeping first: it may be using the stores).
      await waitBounded(
        [stopHousekeeping?.() ?? Promise.resolve()],
        HOUSEKEEPING_SHUTDOWN_DRAIN_TIMEOUT_S,
      );
      await controlServer?.close().catch(() => {});
      controlServer = undefined;
      await watchdog?.stop();
      watchdog = undefined;
      await heartbeat?.stop();
      heartbeat = undefined;
      loopDelay.stop();
      await registry
        .close()
        .catch((error: unknown) => logger.warn({ err: error }, 'closing stores failed'));
      // Phase 7 — persist the exit state.
      let exitCode: number = GATEWAY_EXIT_CODES.clean;
      if (stopOptions.restart) {
        await writeRestartPending(home, { viaService: true, detached: false }).catch(() => {});
        exitCode = GATEWAY_SERVICE_RESTART_EXIT_CODE;
        logger.info('Gateway restart requested');
      }
      if (stopOptions.exitCode !== undefined) exitCode = stopOptions.exitCode;
      if (!drainTimedOut) await touchCleanShutdown(home).catch(() => {});
      await writeStatus({
        gatewayState: 'stopped',
        exitReason: reason,
        activeAgents: 0,
      });
      await claim.release();
      logger.info({ drained, exitCode }, 'gateway stopped');
      await shutdownWatchdog.done();
      await logs.close();
      return exitCode;
    })();
    return stopping;
  };
  const stop = stopGateway;
  if (pendingExit) void stop(pendingExit.reason, { exitCode: pendingExit.code });
  void booting;

  // 9. Housekeeping: cache sweeps, deferred FTS rebuilds, archive and ledger retention.
  const housekeeping = startHousekeeping({
    intervalMs: knobs.housekeepingIntervalS * 1000 * timeScale,
    logger,
    jobs: housekeepingJobs({ home, raw: loaded.raw, registry, logger }),
  });
  stopHousekeeping = () => housekeeping.stop();

  return {
    url,
    port: address.port,
    home,
    socketPath: controlServer?.bindPath ?? null,
    logger,
    stop,
    get webhookUrl() {
      return platforms.webhookUrl;
    },
  };
}

/** Adds a profile's keys (its `.env`, the keys its config names) to the log scrubber. */
function scrubProfileSecrets(logs: GatewayLogger, runtime: ProfileRuntime): void {
  const secrets = runtime.secrets ?? {};
  logs.scrubber.addFromEnvironment(secrets);
  try {
    const profileConfig = runtime.config().config;
    logs.scrubber.add(profileConfig.apiServer.key, profileConfig.model.apiKey);
    for (const provider of [
      ...Object.values(profileConfig.providers),
      ...profileConfig.customProviders,
    ])
      logs.scrubber.add(provider.apiKey, provider.keyEnv ? secrets[provider.keyEnv] : undefined);
  } catch {
    // A profile whose config does not parse has no keys in use yet.
  }
}

function secretsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) secrets[key] = value;
  return secrets;
}
