import net from 'node:net';
import * as v from 'valibot';
import {
  CONTROL_PROTOCOL_VERSION,
  DEFAULT_CONTROL_TIMEOUT_MS,
  IDENTIFY_VERB,
  MAX_RESPONSE_LINE_BYTES,
  STATUS_VERB,
} from './constants.js';
import {
  type ClientSocketPathOptions,
  directSocketPath,
  isTrustedSocket,
  resolvePointerTarget,
  windowsPipeName,
} from './socket-path.js';
import {
  ControlReplySchema,
  type IdentifyResult,
  IdentifyResultSchema,
  type StatusResult,
  StatusResultSchema,
} from './wire-schema.js';

/** How often a busy Windows pipe is retried. */
const PIPE_BUSY_RETRY_MS = 50;

export interface QueryOptions extends ClientSocketPathOptions {
  /** One deadline covering resolve, connect, send and read (default 2 s). */
  readonly timeoutMs?: number;
  /** Arguments for verbs that take them. */
  readonly payload?: Readonly<Record<string, unknown>>;
}

type Exchange = { kind: 'reply'; line: string } | { kind: 'failed' } | { kind: 'pipe_busy' };

/**
 * One connection: connect, send, read one line. When `sendGate` is given, the request is sent
 * only once it resolves true, so a request carrying a payload never reaches an untrusted peer.
 */
function exchangeOnce(
  target: string,
  request: string,
  deadline: number,
  sendGate: Promise<boolean> | null = null,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = net.connect(target);
    const finish = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ kind: 'failed' }),
      Math.max(0, deadline - performance.now()),
    );
    timer.unref();
    socket.once('connect', () => {
      if (sendGate === null) {
        socket.write(request);
        return;
      }
      void sendGate.then((ok) => {
        if (!ok) finish({ kind: 'failed' });
        else if (!settled) socket.write(request);
      });
    });
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.indexOf(10);
      const part = newline === -1 ? chunk : chunk.subarray(0, newline);
      size += part.byteLength;
      if (size > MAX_RESPONSE_LINE_BYTES) return finish({ kind: 'failed' });
      chunks.push(part);
      if (newline !== -1) finish({ kind: 'reply', line: Buffer.concat(chunks).toString('utf8') });
    });
    socket.once('end', () => {
      finish(
        size > 0
          ? { kind: 'reply', line: Buffer.concat(chunks).toString('utf8') }
          : { kind: 'failed' },
      );
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const windowsPipe = process.platform === 'win32' && target.startsWith('\\\\.\\pipe\\');
      finish(windowsPipe && error.code !== 'ENOENT' ? { kind: 'pipe_busy' } : { kind: 'failed' });
    });
  });
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}

/**
 * Asks the gateway of `home` one verb and returns its `result` object, or `null` on any failure:
 * no socket, an untrusted socket, refused, timeout, garbage, oversize, `ok: false`, or a result
 * that is not a JSON object. Never throws, and never takes longer than its timeout.
 */
export async function queryControlSocket(
  home: string,
  verb: string,
  options: QueryOptions = {},
): Promise<Record<string, unknown> | null> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  // The overall deadline also covers resolving the path (a stalled filesystem must not hang us).
  const expired = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([query(home, verb, options, timeoutMs), expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function query(
  home: string,
  verb: string,
  options: QueryOptions,
  timeoutMs: number,
): Promise<Record<string, unknown> | null> {
  const deadline = performance.now() + timeoutMs;
  try {
    const body: Record<string, unknown> = { verb, id: 1, protocol: CONTROL_PROTOCOL_VERSION };
    if (options.payload !== undefined) body.payload = options.payload;
    const request = `${JSON.stringify(body)}\n`;
    let exchange: Exchange;
    if ((options.platform ?? process.platform) === 'win32') {
      const pipe = await windowsPipeName(home);
      exchange = await exchangeOnce(pipe, request, deadline);
      while (exchange.kind === 'pipe_busy' && performance.now() + PIPE_BUSY_RETRY_MS < deadline) {
        await sleep(PIPE_BUSY_RETRY_MS);
        exchange = await exchangeOnce(pipe, request, deadline);
      }
    } else {
      // The direct socket is queried while its node is checked: the stat costs a thread-pool
      // round trip, as much as the whole exchange. Its answer is used only if the node proves
      // trustworthy; a bare verb reveals nothing, but a payload waits for the check before it
      // is sent. The pointer file is read only when the direct socket fails the check.
      const direct = directSocketPath(home);
      const directTrusted = isTrustedSocket(direct, options.onRejected);
      const sendGate = options.payload === undefined ? null : directTrusted;
      const directExchange = exchangeOnce(direct, request, deadline, sendGate);
      if (await directTrusted) {
        exchange = await directExchange;
      } else {
        const target = await resolvePointerTarget(home, options);
        if (target === null) return null;
        exchange = await exchangeOnce(target, request, deadline);
      }
    }
    if (exchange.kind !== 'reply') return null;
    const reply = v.safeParse(ControlReplySchema, JSON.parse(exchange.line));
    if (!reply.success || !reply.output.ok) return null;
    const result = reply.output.result;
    return typeof result === 'object' && result !== null && !Array.isArray(result)
      ? (result as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `identify`, validated; `null` when nothing trustworthy answers. */
export async function identifyGateway(
  home: string,
  options: QueryOptions = {},
): Promise<IdentifyResult | null> {
  const result = await queryControlSocket(home, IDENTIFY_VERB, options);
  const parsed = v.safeParse(IdentifyResultSchema, result);
  return parsed.success ? parsed.output : null;
}

/** `status`, validated; `null` when nothing trustworthy answers. */
export async function queryGatewayStatus(
  home: string,
  options: QueryOptions = {},
): Promise<StatusResult | null> {
  const result = await queryControlSocket(home, STATUS_VERB, options);
  const parsed = v.safeParse(StatusResultSchema, result);
  return parsed.success ? parsed.output : null;
}
