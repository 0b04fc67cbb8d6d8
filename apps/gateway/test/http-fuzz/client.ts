import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/** One request exactly as it goes on the wire: the path unencoded further, raw body bytes. */
export interface WireRequest {
  readonly method: string;
  /** Path and query, sent as they are (percent escapes included). */
  readonly path: string;
  /** A header given as a list is sent once per value. */
  readonly headers: Record<string, string | string[]>;
  /** `undefined`: no body; `chunked` sends it without a Content-Length. */
  readonly body?: Buffer;
  readonly chunked?: boolean;
}

export interface WireResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

export class RequestTimeout extends Error {
  override readonly name = 'RequestTimeout';
}

/**
 * A keep-alive HTTP client that sends what it is told: duplicate headers, bytes that are not
 * UTF-8, a body larger than the server takes. One socket, so requests run one after another.
 */
export class WireClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #host: string;
  readonly #port: number;

  constructor(url: string) {
    const parsed = new URL(url);
    this.#host = parsed.hostname;
    this.#port = Number(parsed.port);
  }

  send(request: WireRequest, timeoutMs: number): Promise<WireResponse> {
    return new Promise((resolve, reject) => {
      const headers: OutgoingHttpHeaders = { ...request.headers };
      // Said outright: Node would otherwise add a Content-Length, or (for a DELETE) send the
      // bytes unframed.
      if (request.body !== undefined)
        if (request.chunked) headers['transfer-encoding'] = 'chunked';
        else headers['content-length'] = String(request.body.byteLength);
      const outgoing = httpRequest({
        host: this.#host,
        port: this.#port,
        method: request.method,
        path: request.path,
        headers,
        agent: this.#agent,
      });
      const timer = setTimeout(() => {
        outgoing.destroy(new RequestTimeout(`no complete answer within ${timeoutMs} ms`));
      }, timeoutMs);
      outgoing.on('response', (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
          });
        });
        incoming.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
      outgoing.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      if (request.body !== undefined) outgoing.end(request.body);
      else outgoing.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/**
 * Writes `bytes` on a fresh TCP connection and returns what comes back until the server closes
 * it (or `timeoutMs` passes): for requests no HTTP client would send.
 */
export function sendRawBytes(
  url: string,
  bytes: Buffer,
  timeoutMs: number,
): Promise<{ text: string; closed: boolean }> {
  const parsed = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: parsed.hostname, port: Number(parsed.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
    socket.on('error', () => {});
    // Half-closed at once: a server waiting for more of a request sees that none will come.
    socket.end(bytes);
  });
}

/** The responses in what a server wrote on a connection (status and body of each). */
export function splitResponses(text: string): { status: number; body: string }[] {
  const responses: { status: number; body: string }[] = [];
  let rest = text;
  for (;;) {
    const status = /^HTTP\/1\.[01] (\d{3})[^\r]*\r\n/.exec(rest);
    const end = rest.indexOf('\r\n\r\n');
    if (!status || end === -1) break;
    const head = rest.slice(0, end).toLowerCase();
    rest = rest.slice(end + 4);
    const length = /\r\ncontent-length: *(\d+)/.exec(head);
    let body = '';
    if (length) {
      body = rest.slice(0, Number(length[1]));
      rest = rest.slice(Number(length[1]));
    } else if (/\r\ntransfer-encoding: *chunked/.test(head)) {
      for (;;) {
        const line = rest.indexOf('\r\n');
        const size = Number.parseInt(rest.slice(0, line), 16);
        if (line === -1 || Number.isNaN(size)) break;
        body += rest.slice(line + 2, line + 2 + size);
        rest = rest.slice(line + 2 + size + 2);
        if (size === 0) break;
      }
    } else if (!/^http\/1\.[01] (1\d\d|204|304)/.test(head)) {
      body = rest;
      rest = '';
    }
    responses.push({ status: Number(status[1]), body });
  }
  return responses;
}
