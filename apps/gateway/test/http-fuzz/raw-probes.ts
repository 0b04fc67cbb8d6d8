/**
 * Requests no HTTP client sends — broken request lines, framing and header bytes — written on a
 * socket as they are. Node refuses most before the app sees them; the gateway answers those in
 * the OpenAI shape too, and keeps serving.
 */
export interface RawProbe {
  readonly name: string;
  readonly bytes: string | Buffer;
  /** `error`: a 4xx in the OpenAI shape; `any`: an answer, or none for a request never finished. */
  readonly expect: 'error' | 'any';
}

export function rawProbes(apiKey: string): RawProbe[] {
  const auth = `Authorization: Bearer ${apiKey}\r\n`;
  const head = (line: string, headers = '') =>
    `${line}\r\nHost: localhost\r\n${auth}${headers}\r\n`;
  return [
    { name: 'backslash for a path', bytes: head('GET \\health HTTP/1.1'), expect: 'error' },
    { name: 'unknown method', bytes: head('FUZZ /health HTTP/1.1'), expect: 'error' },
    { name: 'no version', bytes: 'GET /health\r\n\r\n', expect: 'error' },
    { name: 'HTTP/9.9', bytes: head('GET /health HTTP/9.9'), expect: 'error' },
    { name: 'space in the path', bytes: head('GET /v1/ models HTTP/1.1'), expect: 'error' },
    {
      name: 'Content-Length not a number',
      bytes: head('POST /api/sessions HTTP/1.1', 'Content-Length: abc\r\n'),
      expect: 'error',
    },
    {
      name: 'two Content-Lengths',
      bytes: `${head('POST /api/sessions HTTP/1.1', 'Content-Length: 2\r\nContent-Length: 3\r\n')}{}`,
      expect: 'error',
    },
    {
      name: 'Content-Length and chunked',
      bytes: `${head('POST /api/sessions HTTP/1.1', 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n')}2\r\n{}\r\n0\r\n\r\n`,
      expect: 'error',
    },
    {
      name: 'chunk size not hex',
      bytes: `${head('POST /api/sessions HTTP/1.1', 'Transfer-Encoding: chunked\r\n')}zz\r\n{}\r\n0\r\n\r\n`,
      expect: 'error',
    },
    {
      name: 'NUL in a header',
      bytes: head('GET /v1/models HTTP/1.1', 'X-Hermes-Session-Id: a\0b\r\n'),
      expect: 'error',
    },
    {
      name: 'space in a header name',
      bytes: head('GET /v1/models HTTP/1.1', 'Bad Header: x\r\n'),
      expect: 'error',
    },
    {
      name: 'bare CR in a header',
      bytes: head('GET /v1/models HTTP/1.1', 'X-A: a\rb\r\n'),
      expect: 'error',
    },
    {
      name: 'headers over 16 KiB',
      bytes: head('GET /v1/models HTTP/1.1', `X-Big: ${'a'.repeat(20_000)}\r\n`),
      expect: 'error',
    },
    {
      name: 'UTF-8 in a header value',
      bytes: Buffer.from(
        head('GET /v1/models HTTP/1.1', 'X-Hermes-Session-Id: caf\u00e9\r\n'),
        'utf8',
      ),
      expect: 'any',
    },
    {
      name: 'absolute-form target',
      bytes: head('GET http://elsewhere/v1/models HTTP/1.1'),
      expect: 'any',
    },
    { name: 'asterisk target', bytes: head('OPTIONS * HTTP/1.1'), expect: 'error' },
    {
      name: 'HTTP/1.0 without Host',
      bytes: `GET /v1/models HTTP/1.0\r\n${auth}\r\n`,
      expect: 'any',
    },
    {
      name: 'WebSocket upgrade of an API route',
      bytes: head(
        'GET /v1/models HTTP/1.1',
        'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
      ),
      expect: 'error',
    },
    {
      name: 'WebSocket upgrade of browser control without a ticket',
      bytes: head(
        'GET /v1/browser-control/ws HTTP/1.1',
        'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: hermes-browser-control-v1\r\n',
      ),
      expect: 'error',
    },
    {
      name: 'body shorter than its Content-Length, then closed',
      bytes: `${head('POST /api/sessions HTTP/1.1', 'Content-Length: 100\r\n')}{"title":`,
      expect: 'any',
    },
    {
      name: 'body longer than its Content-Length',
      bytes: `${head('POST /api/sessions/nope/chat HTTP/1.1', 'Content-Length: 2\r\n')}{}garbage that is no request`,
      expect: 'error',
    },
  ];
}
