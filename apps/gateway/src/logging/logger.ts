import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { REDACTED, SecretScrubber } from './secret-scrubber.js';

export const LOG_FILE_NAME = 'gateway.log';
/** Rotate at this size; keep this many rotated files (`gateway.log.1` is the newest). */
export const LOG_ROTATE_SIZE = '10M';
export const LOG_ROTATE_KEEP = 5;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Field paths pino censors wherever they appear (headers, config blocks, error details). */
const REDACT_PATHS = [
  'authorization',
  'apiKey',
  'api_key',
  'key',
  'token',
  'secret',
  'password',
  '*.authorization',
  '*.Authorization',
  '*.apiKey',
  '*.api_key',
  '*.key',
  '*.token',
  '*.secret',
  '*.password',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
];

export interface GatewayLogger {
  readonly logger: Logger;
  readonly scrubber: SecretScrubber;
  readonly file: string;
  /** Flushes and closes the log file. */
  close(): Promise<void>;
}

interface LineSink {
  write(line: string): void;
}

function scrubbing(scrubber: SecretScrubber, target: LineSink): LineSink {
  return { write: (line) => target.write(scrubber.scrub(line)) };
}

/**
 * Lines written during one turn of the event loop go to `target` as one write, after the turn
 * (`setImmediate`): a request's log line never delays its answer, and under load one write
 * carries many lines. `flush()` writes what is pending at once (on close and at exit).
 */
function batching(target: LineSink): LineSink & { flush(): void } {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    target.write(text);
  };
  return {
    write(line) {
      pending += line;
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
    flush,
  };
}

/**
 * The console copy of the log, given up for good at its first write error: once the reader of
 * stderr has gone (`hermes-gateway | head`, a dead collector) every write fails with EPIPE, and an
 * error left to `uncaughtException` would be logged — to stderr again — forever, spinning the
 * event loop so that not even SIGTERM gets through. The log file keeps every line.
 */
function consoleSink(target: LineSink & NodeJS.EventEmitter): LineSink {
  let broken = false;
  target.on('error', () => {
    broken = true;
  });
  return {
    write: (line) => {
      if (broken) return;
      try {
        target.write(line);
      } catch {
        broken = true;
      }
    },
  };
}

/**
 * JSON lines to `<home>/logs/gateway.log` (0600, rotated at 10 MiB, five kept), and the same
 * records on stderr — human-readable on a terminal, JSON lines otherwise (journald, a pipe).
 * Secrets are censored twice: by field name (pino `redact`) and by value (`SecretScrubber`).
 */
export function createGatewayLogger(options: {
  readonly home: string;
  readonly level: LogLevel;
  readonly console?: 'pretty' | 'json' | 'off';
}): GatewayLogger {
  const directory = path.join(options.home, 'logs');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const fileStream: RotatingFileStream = createStream(LOG_FILE_NAME, {
    path: directory,
    size: LOG_ROTATE_SIZE,
    rotate: LOG_ROTATE_KEEP,
    mode: 0o600,
  });
  // A log file that cannot be written must not take the gateway down.
  fileStream.on('error', (error) => {
    process.stderr.write(`hermes-gateway: log file error: ${error.message}\n`);
  });
  const scrubber = new SecretScrubber();
  const fileSink = batching(fileStream);
  const sinks = [fileSink];
  const streams: pino.StreamEntry[] = [
    { level: options.level, stream: scrubbing(scrubber, fileSink) },
  ];
  const consoleMode = options.console ?? (process.stderr.isTTY ? 'pretty' : 'json');
  if (consoleMode === 'pretty') {
    const prettyStream = pretty({
      colorize: true,
      destination: 2,
      sync: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
    });
    streams.push({ level: options.level, stream: scrubbing(scrubber, consoleSink(prettyStream)) });
  } else if (consoleMode === 'json') {
    const stderrSink = batching(consoleSink(process.stderr));
    sinks.push(stderrSink);
    streams.push({ level: options.level, stream: scrubbing(scrubber, stderrSink) });
  }
  // stderr is written synchronously (a pipe, a file): what is pending still reaches it when the
  // process exits without closing the log (`process.exit` after a fatal error).
  const flushAll = () => {
    for (const sink of sinks) sink.flush();
  };
  process.on('exit', flushAll);
  const logger = pino(
    {
      level: options.level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.multistream(streams),
  );
  let closing: Promise<void> | undefined;
  return {
    logger,
    scrubber,
    file: path.join(directory, LOG_FILE_NAME),
    close() {
      closing ??= (async () => {
        flushAll();
        process.off('exit', flushAll);
        fileStream.end();
        await once(fileStream, 'finish').catch(() => {});
      })();
      return closing;
    },
  };
}
