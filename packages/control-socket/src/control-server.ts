import { chmod, lstat, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { getProcessHermesHome } from '@hermes/config';
import {
  CONNECTION_HANDLER_ERROR_LOG,
  DEFAULT_CONTROL_TIMEOUT_MS,
  DEFAULT_HANDLER_TIMEOUT_MS,
  MAX_REQUEST_LINE_BYTES,
  PIPE_LISTENING_LOG,
  SERVER_LISTENING_LOG,
  SERVER_START_FAILED_LOG,
} from './constants.js';
import { createDefaultVerbHandlers, type DefaultVerbOptions } from './default-verbs.js';
import { ControlSocketError } from './errors.js';
import { prepareTakeoverTokens } from './exclusive-file.js';
import { type ControlSocketLogger, silentLogger } from './logger.js';
import { type AbandonSlot, dispatchWithSlot } from './request-dispatch.js';
import {
  exists,
  privateBindPath,
  publishSocket,
  refuseLiveListener,
  removeSocketFiles,
  removeSocketFilesSync,
  type SocketNodeIdentity,
  socketTokenTarget,
  sweepStalePrivateNames,
} from './socket-node.js';
import {
  fitsSocketPathLimit,
  resolveServerSocketPath,
  type SocketPathOptions,
} from './socket-path.js';
import { type VerbHandler, VerbRegistry } from './verb-registry.js';

export interface ControlServerOptions extends SocketPathOptions, DefaultVerbOptions {
  /** Extra or replacement verbs, merged over the built-in `identify` and `status`. */
  readonly handlers?: Readonly<Record<string, VerbHandler>>;
  /**
   * Per-connection read deadline (default 2 s), counted from accepting the connection — not an
   * idle timeout, so a client trickling bytes is cut at it too. The same span bounds writing the
   * reply to a client that does not read.
   */
  readonly readTimeoutMs?: number;
  /**
   * How long a verb handler may run (default 10 s). Past it the client gets
   * `TimeoutError: verb '<verb>' did not answer within <n> ms`, the handler's `signal` is aborted
   * and the connection closes, so a handler that never settles cannot hold a descriptor.
   */
  readonly handlerTimeoutMs?: number;
  readonly logger?: ControlSocketLogger;
  /**
   * Called synchronously the moment the socket is reachable at its path, before anything else
   * runs. The gateway uses it for wiring; tests use it to check the socket was never open to others.
   */
  readonly onListening?: (bindPath: string) => void;
  /** Remove the socket and pointer file on process exit (default true). */
  readonly cleanupOnExit?: boolean;
}

export interface ControlServer {
  readonly home: string;
  /** The socket path (or pipe name) the server listens on. */
  readonly bindPath: string;
  /** `<home>/gateway.sock.path` when the socket lives outside the home. */
  readonly pointerFile: string | null;
  /** Add verbs here at any time; they are answered from the next connection on. */
  readonly registry: VerbRegistry;
  /** Connections open right now. */
  readonly openConnections: number;
  /** Stops accepting, drops open connections, removes the socket and pointer file. */
  close(): Promise<void>;
  /** Best-effort synchronous removal of the socket and pointer file, for exit hooks only. */
  cleanupFilesSync(): void;
}

export type ControlServerStartResult =
  | { readonly started: true; readonly server: ControlServer }
  | { readonly started: false; readonly error: Error; readonly bindPath: string | null };

/**
 * Starts the control server for `home` (default: the process home). Never throws: a failure to
 * bind is logged and returned as `{ started: false, error }`, and the gateway runs on without a
 * socket while consumers fall back to runtime files.
 */
export async function startControlServer(
  options: ControlServerOptions = {},
): Promise<ControlServerStartResult> {
  const logger = options.logger ?? silentLogger;
  const home = options.home ?? getProcessHermesHome();
  let bindPath: string | null = null;
  try {
    const platform = options.platform ?? process.platform;
    const location = await resolveServerSocketPath(home, options);
    bindPath = location.bindPath;
    const registry = new VerbRegistry({
      ...createDefaultVerbHandlers({ ...options, home }),
      ...options.handlers,
    });
    const server = await listen({
      bindPath: location.bindPath,
      pointerFile: location.pointerFile,
      tokenTarget: socketTokenTarget(home),
      windows: platform === 'win32',
      registry,
      options,
      logger,
    });
    logger.info(`${platform === 'win32' ? PIPE_LISTENING_LOG : SERVER_LISTENING_LOG}${bindPath}`);
    return { started: true, server: server.toControlServer(home) };
  } catch (error) {
    const normalized = error instanceof Error ? error : new Error(String(error));
    logger.warn(`${SERVER_START_FAILED_LOG}${normalized.message}`);
    return { started: false, error: normalized, bindPath };
  }
}

interface ListenInput {
  readonly bindPath: string;
  readonly pointerFile: string | null;
  /** The takeover token every change to the socket path and pointer is made under. */
  readonly tokenTarget: string;
  readonly windows: boolean;
  readonly registry: VerbRegistry;
  readonly options: ControlServerOptions;
  readonly logger: ControlSocketLogger;
}

async function listen(input: ListenInput) {
  const { bindPath, pointerFile, tokenTarget, windows, registry, options, logger } = input;
  const readTimeoutMs = options.readTimeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  if (!windows) {
    // process.umask cannot be changed off the main thread, and without it the socket would be
    // connectable by others between bind and chmod.
    if (!isMainThread) {
      throw new ControlSocketError({
        code: 'not_main_thread',
        message: 'the control socket must be started on the main thread (umask is process-wide)',
      });
    }
    // The socket is bound at a private name and linked onto its path, so the path can be longer
    // than a bind would take: refuse here what a client could never connect to.
    if (!fitsSocketPathLimit(bindPath)) {
      throw new ControlSocketError({
        code: 'bind_failed',
        message: `cannot listen on ${bindPath}: the path is longer than a socket path may be`,
      });
    }
    // Refused early (before binding anything) when a live listener is already there; the decision
    // that counts is taken again under the token when publishing.
    if (await exists(bindPath)) await refuseLiveListener(bindPath, readTimeoutMs);
    await sweepStalePrivateNames(path.dirname(bindPath));
    // The exit hook takes the token synchronously: its owner record needs this start time now.
    await prepareTakeoverTokens();
  }
  // libuv unlinks a Unix socket's bind path when its server closes — by name, whoever's node is
  // there by then. Binding at a private name nobody else uses and publishing the node under the
  // public path with link(2) leaves that unlink harmless: a successor that has since bound the
  // public path keeps its socket when this server closes.
  const listenPath = windows ? bindPath : privateBindPath(bindPath);

  const connections = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    serveConnection({ socket, registry, readTimeoutMs, handlerTimeoutMs, logger });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      reject(
        new ControlSocketError({
          code: 'bind_failed',
          message: `cannot listen on ${bindPath}: ${error.message}`,
          cause: error,
        }),
      );
    };
    server.once('error', onError);
    server.once('listening', () => {
      server.removeListener('error', onError);
      resolve();
    });
    if (windows) {
      server.listen(bindPath);
      return;
    }
    // The bind itself happens synchronously inside listen(), so the restrictive umask covers it
    // and is restored before any other JavaScript runs; the window is a few microseconds.
    const previousUmask = process.umask(0o177);
    try {
      server.listen(listenPath);
    } finally {
      process.umask(previousUmask);
    }
  });
  // Swallow late server errors (a listener must exist, or Node would crash the gateway).
  server.on('error', (error) => logger.debug(CONNECTION_HANDLER_ERROR_LOG, error));

  let identity: SocketNodeIdentity | null = null;
  if (!windows) {
    try {
      await chmod(listenPath, 0o600).catch(() => {});
      const stats = await lstat(listenPath);
      identity = { dev: stats.dev, ino: stats.ino };
      await publishSocket({
        privatePath: listenPath,
        bindPath,
        pointerFile,
        tokenTarget,
        timeoutMs: readTimeoutMs,
      });
    } catch (error) {
      await closeServer(server, connections);
      await rm(listenPath, { force: true }).catch(() => {});
      throw error;
    }
  }
  try {
    options.onListening?.(bindPath);
  } catch (error) {
    // The hook is advisory: a throw from it must not fail the start.
    logger.debug(CONNECTION_HANDLER_ERROR_LOG, error);
  }

  const files = { bindPath, pointerFile, identity, tokenTarget };
  return {
    toControlServer(home: string): ControlServer {
      // The pointer names the socket path, which a successor for the same home binds too: both are
      // ours to remove only while that path is not somebody else's socket (see socket-node.ts).
      const cleanupFilesSync = () => {
        if (!windows) removeSocketFilesSync(files);
      };
      const cleanupOnExit = options.cleanupOnExit ?? true;
      if (cleanupOnExit) process.once('exit', cleanupFilesSync);
      let closing: Promise<void> | undefined;
      return {
        home,
        bindPath,
        pointerFile,
        registry,
        get openConnections() {
          return connections.size;
        },
        cleanupFilesSync,
        close() {
          closing ??= (async () => {
            if (cleanupOnExit) process.removeListener('exit', cleanupFilesSync);
            await closeServer(server, connections);
            if (!windows) await removeSocketFiles(files);
          })();
          return closing;
        },
      };
    },
  };
}

function closeServer(server: net.Server, connections: Set<net.Socket>): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    for (const socket of connections) socket.destroy();
  });
}

interface ServeConnectionInput {
  readonly socket: net.Socket;
  readonly registry: VerbRegistry;
  readonly readTimeoutMs: number;
  readonly handlerTimeoutMs: number;
  readonly logger: ControlSocketLogger;
}

/**
 * One request line in, one reply line out, then close. Empty and oversize lines are dropped
 * without a reply; a client that half-closes after an unterminated line is answered for that
 * line. Each phase has an absolute deadline — reading the line (from accept), the handler, and
 * writing the reply — so no client, however slow, and no handler, however stuck, holds the
 * connection past their sum. Every path ends with the socket destroyed, so no descriptor
 * outlives the exchange.
 */
function serveConnection(input: ServeConnectionInput): void {
  const { socket, registry, readTimeoutMs, handlerTimeoutMs, logger } = input;
  const chunks: Buffer[] = [];
  let size = 0;
  let lineReceived = false;
  // Absolute, not idle: socket.setTimeout would restart on every byte, and a client sending one
  // byte just inside it would hold the connection for as long as it likes.
  let deadline: NodeJS.Timeout | undefined = setTimeout(() => socket.destroy(), readTimeoutMs);
  deadline.unref();
  const clearDeadline = () => {
    clearTimeout(deadline);
    deadline = undefined;
  };
  const handlerSlot: AbandonSlot = {};
  socket.once('close', () => {
    clearDeadline();
    handlerSlot.abandon?.();
  });
  socket.on('error', () => {
    // Resets and timeouts are the client's business; the socket is destroyed either way.
  });

  const answer = async () => {
    lineReceived = true;
    clearDeadline();
    socket.pause();
    const line = Buffer.concat(chunks, size);
    chunks.length = 0;
    if (line.byteLength === 0 || line.byteLength > MAX_REQUEST_LINE_BYTES) {
      socket.destroy();
      return;
    }
    let reply: string;
    try {
      reply = await dispatchWithSlot(line, registry, handlerTimeoutMs, handlerSlot);
    } catch (error) {
      logger.debug(CONNECTION_HANDLER_ERROR_LOG, error);
      socket.destroy();
      return;
    }
    if (socket.destroyed) return;
    // A client that never reads cannot pin the socket: the write has its own absolute deadline.
    deadline = setTimeout(() => socket.destroy(), readTimeoutMs);
    deadline.unref();
    socket.end(reply, () => socket.destroy());
  };

  socket.on('data', (chunk: Buffer) => {
    if (lineReceived) return;
    const newline = chunk.indexOf(10);
    const part = newline === -1 ? chunk : chunk.subarray(0, newline);
    size += part.byteLength;
    if (size > MAX_REQUEST_LINE_BYTES) {
      lineReceived = true;
      socket.destroy();
      return;
    }
    chunks.push(part);
    if (newline !== -1) void answer();
  });
  socket.on('end', () => {
    if (!lineReceived) void answer();
  });
}
