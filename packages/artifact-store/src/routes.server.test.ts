import { randomBytes } from 'node:crypto';
import { open, readdir, readlink } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { type HttpBindings, serve } from '@hono/node-server';
import type { Context } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ARTIFACT_FILENAME_HEADER,
  ARTIFACT_SHA256_HEADER,
  ARTIFACT_UPLOAD_PATH,
} from './constants.js';
import type { ArtifactWireReceipt } from './receipt.js';
import { createArtifactRoutes } from './routes.js';
import { ArtifactStoreCache } from './store-cache.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/** The gateway's rule, reading the real TCP peer of the request. */
function transportFamilyOfPeer(context: Context): string {
  const { incoming } = context.env as HttpBindings;
  const address = (incoming.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  return LOOPBACK_HOSTS.has(address) ? 'local-api' : 'remote-api';
}

/**
 * This process's open descriptors that point into `folder` (an unlinked file still shows its old
 * path, with " (deleted)"). Linux-only, like the CI machine.
 */
async function descriptorsInto(folder: string): Promise<number> {
  let count = 0;
  for (const name of await readdir('/proc/self/fd')) {
    try {
      if ((await readlink(`/proc/self/fd/${name}`)).startsWith(`${folder}/`)) count += 1;
    } catch {
      // The descriptor closed between the listing and the readlink.
    }
  }
  return count;
}

/**
 * An uploader that writes its whole request before it reads anything (as many HTTP clients do),
 * pacing the body like a slow link. Resolves with the status line it then reads, or with what
 * went wrong instead.
 */
function uploadThenRead(options: {
  readonly port: number;
  readonly headers: Record<string, string>;
  readonly bodyBytes: number;
}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: options.port });
    socket.pause();
    let failure = '';
    let closed = false;
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failure ||= error.code ?? error.message;
    });
    socket.on('close', () => {
      closed = true;
    });
    const head = Object.entries({ ...options.headers, 'content-length': String(options.bodyBytes) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${ARTIFACT_UPLOAD_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const read = () => {
      let received = '';
      const finish = () =>
        resolve(
          received.split('\r\n')[0] || `no status: ${failure || 'closed'} after ${sent} bytes`,
        );
      socket.on('data', (data: Buffer) => {
        received += data.toString('latin1');
        if (received.includes('\r\n')) {
          socket.destroy();
          finish();
        }
      });
      if (closed) finish();
      else socket.once('close', finish);
      socket.resume();
    };
    const next = () => {
      if (socket.destroyed || sent >= options.bodyBytes) {
        read();
        return;
      }
      sent += chunk.byteLength;
      // About 3 MB/s: the body takes over a second, far longer than the answer.
      socket.write(chunk, () => setTimeout(next, 20));
    };
    next();
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function startServer(maxBytes?: number) {
  const home = await tempHome('hermes-routes-http-');
  const stores = new ArtifactStoreCache({
    resolveProfileHome: (profile) => path.join(home.path, profile),
    ...(maxBytes === undefined ? {} : { storeOptions: { maxBytes } }),
  });
  const app = createArtifactRoutes({
    authenticate: (context) =>
      context.req.header('authorization') === 'Bearer test-key'
        ? { ok: true, principalId: 'principal:default:test', profile: 'default' }
        : { ok: false, status: 401, code: 'invalid_api_key', message: 'bad bearer' },
    resolveTransportFamily: transportFamilyOfPeer,
    stores,
  });
  const port = await new Promise<number>((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      resolve(info.port),
    );
    cleanups.push(
      () =>
        new Promise<void>((done) => {
          server.close(() => done());
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        }),
    );
  });
  return { baseUrl: `http://127.0.0.1:${port}`, port, stores };
}

describe('artifact routes over a real listening server', () => {
  it('round-trips an upload and a one-shot download over loopback as local-api', async () => {
    const { baseUrl, stores } = await startServer();
    // Several megabytes, so the body reaches the server in many chunks and is streamed to disk.
    const payload = randomBytes(3 * 1024 * 1024 + 17);
    const uploaded = await fetch(`${baseUrl}${ARTIFACT_UPLOAD_PATH}`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer test-key',
        'content-type': 'application/pdf',
        [ARTIFACT_FILENAME_HEADER]: 'report.pdf',
      },
      body: payload,
    });
    expect(uploaded.status).toBe(201);
    const receipt = (await uploaded.json()) as ArtifactWireReceipt;

    const store = await stores.get('default');
    const loopbackScope = { principalId: 'principal:default:test', transportFamily: 'local-api' };
    expect(store.validate(receipt.artifact_id, loopbackScope).sizeBytes).toBe(payload.byteLength);

    const downloaded = await fetch(`${baseUrl}${receipt.download_path}`, {
      headers: { authorization: 'Bearer test-key' },
    });
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get(ARTIFACT_SHA256_HEADER)).toBe(receipt.sha256);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(payload)).toBe(true);

    const replay = await fetch(`${baseUrl}${receipt.download_path}`, {
      headers: { authorization: 'Bearer test-key' },
    });
    expect(replay.status).toBe(404);
  });

  it('answers 413 to a declared oversize upload without waiting for its body', async () => {
    const { baseUrl, stores } = await startServer(256 * 1024);
    const response = await fetch(`${baseUrl}${ARTIFACT_UPLOAD_PATH}`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer test-key',
        'content-type': 'image/png',
        [ARTIFACT_FILENAME_HEADER]: 'big.png',
      },
      body: Buffer.alloc(4 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'artifact_too_large' } });
    expect((await stores.get('default')).count()).toBe(0);
  });

  it('answers 413 to an endless upload after a bounded read past the cap', async () => {
    const maxBytes = 256 * 1024;
    const { port, stores } = await startServer(maxBytes);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sentBytes = 0;

    const outcome = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered = false;
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: ARTIFACT_UPLOAD_PATH,
          headers: {
            authorization: 'Bearer test-key',
            'content-type': 'image/png',
            [ARTIFACT_FILENAME_HEADER]: 'endless.png',
            'transfer-encoding': 'chunked',
          },
        },
        (response) => {
          answered = true;
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (text: string) => {
            body += text;
          });
          response.on('end', () => {
            request.destroy();
            resolve({ status: response.statusCode ?? 0, body });
          });
        },
      );
      request.on('error', (error) => {
        if (!answered) reject(error);
      });
      // The client never ends the body: only a server that stops reading can answer at all.
      const pump = () => {
        while (!answered && !request.destroyed) {
          sentBytes += chunk.byteLength;
          if (!request.write(chunk)) {
            request.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });

    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toMatchObject({ error: { code: 'artifact_too_large' } });
    expect(sentBytes).toBeLessThan(256 * 1024 * 1024);
    expect((await stores.get('default')).count()).toBe(0);
  });

  it('lets a client that writes its whole body before reading see an early refusal', async () => {
    // Default settings: the default store limit and @hono/node-server's own handling of a body
    // the handler did not read. The refusals come before the body is read; a 4 MiB body follows.
    const { port, stores } = await startServer();
    const bodyBytes = 4 * 1024 * 1024;
    const badKey = uploadThenRead({
      port,
      headers: {
        authorization: 'Bearer wrong-key',
        'content-type': 'image/png',
        [ARTIFACT_FILENAME_HEADER]: 'shot.png',
      },
      bodyBytes,
    });
    const noFilename = uploadThenRead({
      port,
      headers: { authorization: 'Bearer test-key', 'content-type': 'image/png' },
      bodyBytes,
    });
    expect(await badKey).toBe('HTTP/1.1 401 Unauthorized');
    expect(await noFilename).toBe('HTTP/1.1 400 Bad Request');
    expect((await stores.get('default')).count()).toBe(0);
  });

  it('leaves no temp file and no receipt when the client aborts mid-upload', async () => {
    const { port, stores } = await startServer();
    const store = await stores.get('default');
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: ARTIFACT_UPLOAD_PATH,
      headers: {
        authorization: 'Bearer test-key',
        'content-type': 'image/png',
        'content-length': 4 * 1024 * 1024,
        [ARTIFACT_FILENAME_HEADER]: 'partial.png',
      },
    });
    request.on('error', () => {});
    request.write(Buffer.alloc(256 * 1024, 3));
    // The server is streaming into its temp file once that file exists; then the client leaves.
    await vi.waitFor(
      async () =>
        expect((await readdir(store.root)).some((name) => name.endsWith('.tmp'))).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    request.destroy();
    await vi.waitFor(async () => expect(await readdir(store.root)).toEqual([]), {
      timeout: 10_000,
      interval: 20,
    });
    expect(store.count()).toBe(0);
  });

  describe.runIf(process.platform === 'linux')('streamed downloads', () => {
    async function uploadOver(port: number, payload: Buffer): Promise<ArtifactWireReceipt> {
      const response = await fetch(`http://127.0.0.1:${port}${ARTIFACT_UPLOAD_PATH}`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer test-key',
          'content-type': 'application/pdf',
          [ARTIFACT_FILENAME_HEADER]: 'large.pdf',
        },
        body: payload,
      });
      expect(response.status).toBe(201);
      return (await response.json()) as ArtifactWireReceipt;
    }

    /** Starts a download and hands back the response paused, before any body byte is taken. */
    function startDownload(port: number, downloadPath: string): Promise<IncomingMessage> {
      return new Promise((resolve, reject) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: downloadPath,
            headers: { authorization: 'Bearer test-key' },
          },
          (response) => {
            response.pause();
            resolve(response);
          },
        );
        request.on('error', reject);
        request.end();
      });
    }

    /** Reads the rest of a response; `complete` is false when the server tore it down early. */
    function finish(response: IncomingMessage): Promise<{ data: Buffer; complete: boolean }> {
      return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let settled = false;
        const settle = (complete: boolean) => {
          if (settled) return;
          settled = true;
          resolve({ data: Buffer.concat(chunks), complete });
        };
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => settle(response.complete));
        response.on('error', () => settle(false));
        response.on('close', () => settle(response.complete && response.readableEnded));
        response.resume();
      });
    }

    it('streams the verified bytes and releases the file once the body is sent', async () => {
      const { port, stores } = await startServer();
      const store = await stores.get('default');
      const payload = randomBytes(6 * 1024 * 1024 + 3);
      const receipt = await uploadOver(port, payload);
      const before = await descriptorsInto(store.root);

      const response = await startDownload(port, receipt.download_path!);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-length']).toBe(String(payload.byteLength));
      expect(response.headers[ARTIFACT_SHA256_HEADER.toLowerCase()]).toBe(receipt.sha256);
      // Consumed before the first byte: the file is gone by name and a replay finds nothing.
      expect(await readdir(store.root)).toEqual([]);
      expect(store.count()).toBe(0);

      const { data, complete } = await finish(response);
      expect(complete).toBe(true);
      expect(data.equals(payload)).toBe(true);
      await vi.waitFor(async () => expect(await descriptorsInto(store.root)).toBe(before), {
        timeout: 10_000,
        interval: 20,
      });
    });

    it('closes the file when the client aborts a download midway', async () => {
      const { port, stores } = await startServer();
      const store = await stores.get('default');
      // Far more than loopback socket buffers hold, so the server is still sending at the abort.
      const payload = randomBytes(10 * 1024 * 1024);
      const receipt = await uploadOver(port, payload);
      const before = await descriptorsInto(store.root);

      const response = await startDownload(port, receipt.download_path!);
      expect(response.statusCode).toBe(200);
      await vi.waitFor(async () => expect(await descriptorsInto(store.root)).toBe(before + 1), {
        timeout: 10_000,
        interval: 20,
      });
      response.destroy();

      await vi.waitFor(async () => expect(await descriptorsInto(store.root)).toBe(before), {
        timeout: 10_000,
        interval: 20,
      });
      // One-shot: the aborted download consumed the artifact.
      const replay = await fetch(`http://127.0.0.1:${port}${receipt.download_path}`, {
        headers: { authorization: 'Bearer test-key' },
      });
      expect(replay.status).toBe(404);
    });

    it('tears the response down short of its length when the bytes change mid-stream', async () => {
      const { port, stores } = await startServer();
      const store = await stores.get('default');
      const payload = randomBytes(10 * 1024 * 1024);
      const receipt = await uploadOver(port, payload);
      const before = await descriptorsInto(store.root);
      // Opened before the download, so it still reaches the bytes after the store unlinks them.
      const writer = await open(path.join(store.root, receipt.artifact_id), 'r+');
      // @hono/node-server reports a body stream that fails with console.error; keep it quiet.
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      try {
        const response = await startDownload(port, receipt.download_path!);
        expect(response.statusCode).toBe(200);
        await writer.write(Buffer.alloc(64, 0x41), 0, 64, payload.byteLength - 64);

        const { data, complete } = await finish(response);
        expect(complete).toBe(false);
        expect(data.byteLength).toBeLessThan(payload.byteLength);
      } finally {
        errors.mockRestore();
        await writer.close();
      }
      // Only the test's own descriptor stays, and it is closed now.
      await vi.waitFor(async () => expect(await descriptorsInto(store.root)).toBe(before), {
        timeout: 10_000,
        interval: 20,
      });
    });

    it('lets exactly one of several concurrent downloads of one id get the bytes', async () => {
      const { baseUrl, port, stores } = await startServer();
      const store = await stores.get('default');
      const payload = randomBytes(2 * 1024 * 1024);
      const receipt = await uploadOver(port, payload);
      const before = await descriptorsInto(store.root);

      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          fetch(`${baseUrl}${receipt.download_path}`, {
            headers: { authorization: 'Bearer test-key' },
          }),
        ),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([200, 404, 404, 404, 404]);
      const winner = responses.find((response) => response.status === 200);
      expect(Buffer.from(await winner!.arrayBuffer()).equals(payload)).toBe(true);
      for (const response of responses) if (response !== winner) await response.arrayBuffer();
      await vi.waitFor(async () => expect(await descriptorsInto(store.root)).toBe(before), {
        timeout: 10_000,
        interval: 20,
      });
    });
  });
});
