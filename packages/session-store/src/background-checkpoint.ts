import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SessionStoreLogger } from './store-settings.js';

/*
 * The periodic PASSIVE checkpoint, run on a worker thread with its own connection. A checkpoint
 * copies WAL pages into the database file and, with `synchronous=NORMAL`, fsyncs the WAL and then
 * the database: about 6 ms every 50 writes on the writer's thread (measured under load), more on a
 * busy disk — the largest fixed cost of a transcript append, paid on the event loop. Any
 * connection may checkpoint a WAL database, and PASSIVE never waits for or blocks the writer, so
 * the same checkpoint on another thread changes nothing but where the time is spent. Durability is
 * unchanged: the checkpointing connection uses the writer's `synchronous` settings.
 *
 * The worker body is plain JavaScript evaluated from a string (as the FTS rebuild's is), started
 * on the first checkpoint that is due, and unref'd: a process that never closes its store still
 * exits. If it cannot start or fails, checkpoints run on the writer's thread as before.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlitePath);
let db;
try {
  db = new Database(workerData.databasePath, { timeout: 0, fileMustExist: true });
  for (const pragma of workerData.pragmas) db.pragma(pragma);
  parentPort.postMessage({ kind: 'ready' });
} catch (error) {
  parentPort.postMessage({ kind: 'unavailable', message: String((error && error.message) || error) });
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    try { if (db) db.close(); } finally { parentPort.close(); }
    return;
  }
  if (!db) return; // 'unavailable' was sent; the store checkpoints on its own thread now
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ kind: 'checkpointed', result });
  } catch (error) {
    parentPort.postMessage({ kind: 'failed', message: String((error && error.message) || error) });
  }
});
`;

interface WorkerMessage {
  /** `unavailable`: the connection could not be opened; `failed`: one checkpoint failed. */
  kind: 'ready' | 'checkpointed' | 'failed' | 'unavailable';
  message?: string;
}

export interface BackgroundCheckpointOptions {
  readonly databasePath: string;
  /** The writer's pragmas that govern a checkpoint's syncing (`synchronous`, fullfsync). */
  readonly pragmas: readonly string[];
  /** Runs the checkpoint on the calling thread (when the worker is unavailable). */
  readonly checkpointHere: () => void;
  readonly logger: SessionStoreLogger;
}

/** Closing waits this long for the worker's connection to close before terminating it. */
const CLOSE_TIMEOUT_MS = 2_000;

export class BackgroundCheckpoint {
  readonly #options: BackgroundCheckpointOptions;
  #worker: Worker | undefined;
  #unavailable = false;
  #running = false;
  #again = false;
  #closed = false;
  /** Settles when the worker finished the checkpoint it was given (for `close` and tests). */
  #idle: Promise<void> = Promise.resolve();
  #markIdle: () => void = () => undefined;

  constructor(options: BackgroundCheckpointOptions) {
    this.#options = options;
  }

  /** Asks for a PASSIVE checkpoint; a request while one runs is folded into one more run. */
  request(): void {
    if (this.#closed) return;
    if (this.#unavailable) {
      this.#options.checkpointHere();
      return;
    }
    if (this.#running) {
      this.#again = true;
      return;
    }
    const worker = this.#worker ?? this.#start();
    if (!worker) {
      this.#options.checkpointHere();
      return;
    }
    this.#running = true;
    this.#idle = new Promise((resolve) => {
      this.#markIdle = resolve;
    });
    worker.postMessage('checkpoint');
  }

  /** Resolves once no checkpoint is running on the worker. */
  whenIdle(): Promise<void> {
    return this.#idle;
  }

  #start(): Worker | undefined {
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          databasePath: this.#options.databasePath,
          pragmas: [...this.#options.pragmas],
          betterSqlitePath: createRequire(import.meta.url).resolve('better-sqlite3'),
        },
      });
    } catch (error) {
      this.#fail(`cannot start (${(error as Error).message})`);
      return undefined;
    }
    worker.on('message', (message: WorkerMessage) => this.#onMessage(message));
    worker.once('error', (error) => this.#fail((error as Error).message));
    worker.once('exit', () => {
      if (!this.#closed) this.#fail('its thread exited');
    });
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #onMessage(message: WorkerMessage): void {
    // A worker given up on may still have answers in flight; the checkpoint they concern was
    // already run here by #fail, so running it again would only double the work.
    if (message.kind === 'ready' || this.#unavailable) return;
    if (message.kind === 'unavailable') {
      this.#fail(message.message ?? 'unknown error');
      return;
    }
    if (message.kind === 'failed') {
      // One checkpoint failed (an I/O error, say): run this one here; the next tries the thread.
      this.#options.logger.warn(`background WAL checkpoint failed: ${message.message}`);
      this.#options.checkpointHere();
    }
    this.#settle();
  }

  #settle(): void {
    this.#running = false;
    this.#markIdle();
    if (this.#again && !this.#closed) {
      this.#again = false;
      this.request();
    }
  }

  #fail(reason: string): void {
    if (this.#unavailable) return;
    this.#unavailable = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (!this.#closed) {
      this.#options.logger.warn(
        `background WAL checkpoint unavailable (${reason}); checkpointing on the writer's thread`,
      );
      void worker?.terminate();
    }
    const owed = this.#running || this.#again;
    this.#running = false;
    this.#again = false;
    this.#markIdle();
    if (owed && !this.#closed) this.#options.checkpointHere();
  }

  /** Lets a running checkpoint finish, then closes the worker's connection and thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const worker = this.#worker;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#idle, timedOut]);
      this.#closed = true;
      this.#worker = undefined;
      if (!worker) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('close');
      if ((await Promise.race([exited, timedOut])) === 'timeout') await worker.terminate();
    } finally {
      this.#closed = true;
      clearTimeout(timer);
    }
  }
}
