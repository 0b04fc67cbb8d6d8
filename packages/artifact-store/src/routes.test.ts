import { createHash, randomBytes } from 'node:crypto';
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { ArtifactStore, ArtifactStoreOptions } from './artifact-store.js';
import {
  ARTIFACT_DOWNLOAD_PATH_PREFIX,
  ARTIFACT_FILENAME_HEADER,
  ARTIFACT_ID_HEADER,
  ARTIFACT_SHA256_HEADER,
  ARTIFACT_UPLOAD_PATH,
} from './constants.js';
import { ArtifactScopeMismatch } from './errors.js';
import { ArtifactRateLimiter } from './rate-limiter.js';
import type { ArtifactReceipt, ArtifactWireReceipt } from './receipt.js';
import { type ArtifactAuthentication, createArtifactRoutes } from './routes.js';
import type { ArtifactScope } from './scope-key.js';
import { ArtifactStoreCache } from './store-cache.js';

const KEYS: Record<string, string> = {
  'key-alice': 'principal:default:alice',
  'key-bob': 'principal:default:bob',
};
const png = Buffer.from('\x89PNG fake image bytes');

interface HarnessOptions {
  readonly storeOptions?: Omit<ArtifactStoreOptions, 'root'>;
  readonly rateLimiter?: ArtifactRateLimiter;
  readonly stores?: { get(profile: string): Promise<never> };
}

async function harness(options: HarnessOptions = {}) {
  const home = await tempHome('hermes-routes-');
  const state = { enabled: true, keyConfigured: true };
  const cache = new ArtifactStoreCache({
    resolveProfileHome: (profile) => path.join(home.path, profile),
    ...(options.storeOptions === undefined ? {} : { storeOptions: options.storeOptions }),
  });
  const app = createArtifactRoutes({
    authenticate: (context): ArtifactAuthentication => {
      if (!state.keyConfigured) {
        return {
          ok: false,
          status: 403,
          code: 'browser_control_auth_required',
          message: 'set API_SERVER_KEY',
        };
      }
      const header = context.req.header('authorization') ?? '';
      const principalId = KEYS[header.replace(/^Bearer /, '')];
      if (principalId === undefined) {
        return { ok: false, status: 401, code: 'invalid_api_key', message: 'bad bearer' };
      }
      return { ok: true, principalId, profile: 'default' };
    },
    resolveTransportFamily: (context) =>
      context.req.header('x-test-peer') === 'remote' ? 'remote-api' : 'local-api',
    stores: options.stores ?? cache,
    isEnabled: () => state.enabled,
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
  });

  const upload = (
    init: {
      body?: Uint8Array | ReadableStream<Uint8Array> | null;
      key?: string;
      contentType?: string | null;
      filename?: string | null;
      headers?: Record<string, string>;
    } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key !== '') headers.authorization = `Bearer ${init.key ?? 'key-alice'}`;
    if (init.contentType !== null) headers['content-type'] = init.contentType ?? 'image/png';
    if (init.filename !== null) headers[ARTIFACT_FILENAME_HEADER] = init.filename ?? 'shot.png';
    const body = init.body === undefined ? png : init.body;
    // A streamed request body must be sent half-duplex (fetch rule); lib.dom lacks the field.
    const streaming = body instanceof ReadableStream ? ({ duplex: 'half' } as RequestInit) : {};
    return app.request(ARTIFACT_UPLOAD_PATH, { method: 'POST', headers, body, ...streaming });
  };

  const download = (artifactId: string, init: { key?: string; peer?: string } = {}) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${init.key ?? 'key-alice'}`,
    };
    if (init.peer !== undefined) headers['x-test-peer'] = init.peer;
    return app.request(`${ARTIFACT_DOWNLOAD_PATH_PREFIX}${artifactId}`, { headers });
  };

  return { app, cache, state, upload, download, home: home.path };
}

/** The error of a refusal, checked to be the OpenAI shape: message, type, param (null), code. */
async function errorOf(response: Response) {
  const { error } = (await response.json()) as {
    error: { code: string; type: string; message: string; param: string | null };
  };
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(error.param).toBeNull();
  return error;
}

describe('artifact routes: upload', () => {
  it('answers 201 with the wire receipt and a download path, never a path or scope key', async () => {
    const { upload } = await harness();
    const response = await upload({ contentType: 'image/png; charset=binary' });
    expect(response.status).toBe(201);
    const receipt = (await response.json()) as ArtifactWireReceipt & Record<string, unknown>;
    expect(receipt).toMatchObject({
      one_shot: true,
      content_type: 'image/png',
      filename: 'shot.png',
      size_bytes: png.byteLength,
      sha256: createHash('sha256').update(png).digest('hex'),
      ttl_seconds: 300,
      download_path: `${ARTIFACT_DOWNLOAD_PATH_PREFIX}${receipt.artifact_id}`,
    });
    expect(receipt.artifact_id).toMatch(/^[0-9a-f]{32}$/);
    expect(receipt.expires_at - receipt.created_at).toBe(300);
    expect(receipt).not.toHaveProperty('scope_key');
    expect(receipt).not.toHaveProperty('scopeKey');
    expect(JSON.stringify(receipt)).not.toContain('browser-control');
  });

  it('answers 404 browser_control_disabled while the feature is off', async () => {
    const { upload, state } = await harness();
    state.enabled = false;
    const response = await upload();
    expect(response.status).toBe(404);
    expect((await errorOf(response)).code).toBe('browser_control_disabled');
  });

  it('answers 403 when no API key is configured and 401 for a bad bearer', async () => {
    const { upload, state } = await harness();
    expect((await upload({ key: 'wrong' })).status).toBe(401);
    expect((await upload({ key: '' })).status).toBe(401);
    state.keyConfigured = false;
    const response = await upload();
    expect(response.status).toBe(403);
    // The browser-control register route's type for the same refusal (the reference's).
    expect(await errorOf(response)).toMatchObject({
      code: 'browser_control_auth_required',
      type: 'gateway_auth_error',
    });
  });

  it('answers 415 artifact_mime_rejected for a type outside the allowlist', async () => {
    const { upload } = await harness();
    for (const contentType of ['text/html', null]) {
      const response = await upload({ contentType });
      expect(response.status).toBe(415);
      expect(await errorOf(response)).toMatchObject({
        code: 'artifact_mime_rejected',
        type: 'invalid_request_error',
      });
    }
  });

  it('keeps the size verdict ahead of the type verdict for a streamed body', async () => {
    const { upload, home } = await harness({ storeOptions: { maxBytes: 1024 } });
    const streamOf = (chunkCount: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let index = 0; index < chunkCount; index += 1) {
            controller.enqueue(new Uint8Array(512));
          }
          controller.close();
        },
      });
    const oversize = await upload({ body: streamOf(3), contentType: 'text/html' });
    expect(oversize.status).toBe(413);
    const small = await upload({ body: streamOf(2), contentType: 'text/html' });
    expect(small.status).toBe(415);
    expect((await errorOf(small)).code).toBe('artifact_mime_rejected');
    expect(await readdir(path.join(home, 'default', 'artifacts', 'browser-control'))).toEqual([]);
  });

  it('stores a body streamed in many chunks and serves back the same bytes', async () => {
    const { upload, download } = await harness();
    const chunks = Array.from({ length: 50 }, (_, index) => randomBytes(4096 + index));
    const whole = Buffer.concat(chunks);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await upload({ body });
    expect(response.status).toBe(201);
    const receipt = (await response.json()) as ArtifactWireReceipt;
    expect(receipt).toMatchObject({
      size_bytes: whole.byteLength,
      sha256: createHash('sha256').update(whole).digest('hex'),
    });
    const downloaded = await download(receipt.artifact_id);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(whole)).toBe(true);
  });

  it('answers 400 without an X-Artifact-Filename header or with a blank one', async () => {
    const { upload } = await harness();
    for (const filename of [null, '   ']) {
      const response = await upload({ filename });
      expect(response.status).toBe(400);
      expect(await errorOf(response)).toMatchObject({
        type: 'invalid_request_error',
        message: 'X-Artifact-Filename is required',
      });
    }
  });

  it('accepts a filename of any length and keeps its first 160 characters, as the reference does', async () => {
    const { upload } = await harness();
    const long = `${'n'.repeat(2_000)}.png`;
    const response = await upload({ filename: long });
    expect(response.status).toBe(201);
    const receipt = (await response.json()) as ArtifactWireReceipt;
    expect(receipt.filename).toBe('n'.repeat(160));
  });

  it('answers 400 for an empty body', async () => {
    const { upload } = await harness();
    const response = await upload({ body: new Uint8Array(0) });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('artifact_rejected');
  });

  it('answers 413 artifact_too_large for a body over the limit, declared or streamed', async () => {
    const { upload, home } = await harness({ storeOptions: { maxBytes: 1024 } });
    const declared = await upload({ body: Buffer.alloc(1025) });
    expect(declared.status).toBe(413);
    expect(await errorOf(declared)).toMatchObject({
      code: 'artifact_too_large',
      type: 'invalid_request_error',
    });

    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 8; index += 1) controller.enqueue(new Uint8Array(512));
        controller.close();
      },
    });
    const undeclared = await upload({ body: streamed });
    expect(undeclared.status).toBe(413);
    expect(await readdir(path.join(home, 'default', 'artifacts', 'browser-control'))).toEqual([]);
  });

  it('accepts a body of exactly the limit', async () => {
    const { upload } = await harness({ storeOptions: { maxBytes: 1024 } });
    expect((await upload({ body: Buffer.alloc(1024, 1), contentType: 'text/plain' })).status).toBe(
      201,
    );
  });

  it('answers 429 rate_limit_exceeded with Retry-After: 1 past the limit', async () => {
    const { upload } = await harness({ rateLimiter: new ArtifactRateLimiter({ maxRequests: 2 }) });
    const responses = [await upload(), await upload(), await upload()];
    expect(responses.map((response) => response.status)).toEqual([201, 201, 429]);
    const limited = responses[2]!;
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await errorOf(limited)).toMatchObject({
      code: 'rate_limit_exceeded',
      type: 'rate_limit_error',
    });
    expect((await upload({ key: 'key-bob' })).status).toBe(201);
  });

  it('counts uploads and downloads of one principal separately', async () => {
    const { upload, download } = await harness({
      rateLimiter: new ArtifactRateLimiter({ maxRequests: 1 }),
    });
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    expect((await upload()).status).toBe(429);
    expect((await download(receipt.artifact_id)).status).toBe(200);
  });

  it('answers 500 artifact_rejected when the profile store cannot be resolved', async () => {
    const { upload } = await harness({
      stores: { get: () => Promise.reject(new Error('disk on fire')) },
    });
    const response = await upload();
    expect(response.status).toBe(500);
    const error = await errorOf(response);
    expect(error.code).toBe('artifact_rejected');
    expect(error.message).not.toContain('disk on fire');
  });

  it('fails closed with a 500 envelope when the authenticator throws', async () => {
    const home = await tempHome('hermes-routes-throw-');
    const app = createArtifactRoutes({
      authenticate: () => {
        throw new Error('key store at /secret/path unreachable');
      },
      resolveTransportFamily: () => 'local-api',
      stores: new ArtifactStoreCache({ resolveProfileHome: () => home.path }),
    });
    const response = await app.request(ARTIFACT_UPLOAD_PATH, {
      method: 'POST',
      headers: { 'content-type': 'image/png', [ARTIFACT_FILENAME_HEADER]: 'a.png' },
      body: png,
    });
    expect(response.status).toBe(500);
    const error = await errorOf(response);
    expect(error).toMatchObject({ code: 'artifact_rejected', type: 'server_error' });
    expect(error.message).not.toContain('/secret/path');
  });

  it('fails closed with 401 when the authenticator accepts without naming a principal', async () => {
    const home = await tempHome('hermes-routes-no-principal-');
    const stores = new ArtifactStoreCache({ resolveProfileHome: () => home.path });
    const app = createArtifactRoutes({
      authenticate: () => ({ ok: true, principalId: '', profile: 'default' }),
      resolveTransportFamily: () => 'local-api',
      stores,
    });
    const uploaded = await app.request(ARTIFACT_UPLOAD_PATH, {
      method: 'POST',
      headers: { 'content-type': 'image/png', [ARTIFACT_FILENAME_HEADER]: 'a.png' },
      body: png,
    });
    expect(uploaded.status).toBe(401);
    expect(await errorOf(uploaded)).toMatchObject({
      code: 'browser_control_auth_required',
      type: 'authentication_error',
    });
    const downloaded = await app.request(`${ARTIFACT_DOWNLOAD_PATH_PREFIX}${'a'.repeat(32)}`);
    expect(downloaded.status).toBe(401);
    expect(stores.peek('default')).toBeUndefined();
  });

  it('never answers 201 when the write fails', async () => {
    const { upload, cache } = await harness();
    const store = await cache.get('default');
    await rm(store.root, { recursive: true });
    const response = await upload();
    expect(response.status).toBe(500);
    expect((await errorOf(response)).code).toBe('artifact_rejected');
    expect(store.count()).toBe(0);
  });

  it('keeps every one of 12 concurrent uploads downloadable', async () => {
    const { upload, download } = await harness();
    const bodies = Array.from({ length: 12 }, (_, index) => Buffer.from(`upload number ${index}`));
    const responses = await Promise.all(
      bodies.map((body) => upload({ body, contentType: 'text/plain' })),
    );
    expect(responses.map((response) => response.status)).toEqual(bodies.map(() => 201));
    const receipts = (await Promise.all(
      responses.map((response) => response.json()),
    )) as ArtifactWireReceipt[];
    const texts = await Promise.all(
      receipts.map(async (receipt) => (await download(receipt.artifact_id)).text()),
    );
    expect(texts).toEqual(bodies.map((body) => body.toString()));
  });
});

describe('artifact routes: download', () => {
  it('returns the bytes once with checksum, id and disposition headers, then 404', async () => {
    const { upload, download } = await harness();
    const receipt = (await (
      await upload({ filename: 'café "1".png' })
    ).json()) as ArtifactWireReceipt;

    const response = await download(receipt.artifact_id);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(png)).toBe(true);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get(ARTIFACT_SHA256_HEADER)).toBe(receipt.sha256);
    expect(response.headers.get(ARTIFACT_ID_HEADER)).toBe(receipt.artifact_id);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="caf_ _1_.png"; filename*=UTF-8''caf%C3%A9%20%221%22.png`,
    );
    // One-shot bytes must not be cached by an intermediary or sniffed into active content.
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-length')).toBe(String(png.byteLength));

    const replay = await download(receipt.artifact_id);
    expect(replay.status).toBe(404);
    expect((await errorOf(replay)).code).toBe('artifact_not_found');
  });

  it('answers 404 for a file that no longer matches its checksum, without consuming it', async () => {
    const { upload, download, home } = await harness();
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    const filePath = path.join(
      home,
      'default',
      'artifacts',
      'browser-control',
      receipt.artifact_id,
    );
    await writeFile(filePath, Buffer.alloc(png.byteLength, 0x58));

    const refused = await download(receipt.artifact_id);
    expect(refused.status).toBe(404);
    expect((await errorOf(refused)).code).toBe('artifact_not_found');

    await writeFile(filePath, png);
    const served = await download(receipt.artifact_id);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
  });

  it('answers 404 artifact_not_found for an unknown id', async () => {
    const { download } = await harness();
    const response = await download('a'.repeat(32));
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toMatchObject({
      code: 'artifact_not_found',
      type: 'not_found_error',
    });
  });

  it('answers 400 artifact_not_found to another principal or family, without consuming', async () => {
    const { upload, download } = await harness();
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;

    const foreignPrincipal = await download(receipt.artifact_id, { key: 'key-bob' });
    expect(foreignPrincipal.status).toBe(400);
    expect((await errorOf(foreignPrincipal)).code).toBe('artifact_not_found');
    const foreignFamily = await download(receipt.artifact_id, { peer: 'remote' });
    expect(foreignFamily.status).toBe(400);

    expect((await download(receipt.artifact_id)).status).toBe(200);
  });

  it.each([
    ['..%2Fescape'],
    ['not-hex!'],
    ['ABCDEF0123456789ABCDEF0123456789'],
    ['%2E%2E%2F%2E%2E%2Fetc%2Fpasswd'],
  ])('answers 400 artifact_not_found to the traversal id %s', async (artifactId) => {
    const { download } = await harness();
    const response = await download(artifactId);
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('artifact_not_found');
  });

  it('never routes an empty id or a dot-segment path to the download handler', async () => {
    const { download, app } = await harness();
    expect((await download('')).status).toBe(404);
    const dotted = await app.request('/v1/artifacts/download/../upload', {
      headers: { authorization: 'Bearer key-alice' },
    });
    expect(dotted.status).toBe(404);
  });

  it('answers 410 artifact_expired after the TTL on the store clock', async () => {
    let now = 0;
    const { upload, download } = await harness({ storeOptions: { ttlSeconds: 5, now: () => now } });
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    now += 5_000;
    const response = await download(receipt.artifact_id);
    expect(response.status).toBe(410);
    expect(await errorOf(response)).toMatchObject({
      code: 'artifact_expired',
      type: 'not_found_error',
    });
    expect((await download(receipt.artifact_id)).status).toBe(404);
  });

  it('never lets a HEAD request consume the artifact', async () => {
    const { upload, download, app } = await harness();
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    const head = await app.request(`${ARTIFACT_DOWNLOAD_PATH_PREFIX}${receipt.artifact_id}`, {
      method: 'HEAD',
      headers: { authorization: 'Bearer key-alice' },
    });
    expect(head.status).toBe(405);
    expect((await download(receipt.artifact_id)).status).toBe(200);
  });

  it('answers a bare 404 while the feature is off', async () => {
    const { upload, download, state } = await harness();
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    state.enabled = false;
    const response = await download(receipt.artifact_id);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('');
    state.enabled = true;
    expect((await download(receipt.artifact_id)).status).toBe(200);
  });

  it('answers 401 for a bad bearer and 429 past the download limit', async () => {
    const { download } = await harness({
      rateLimiter: new ArtifactRateLimiter({ maxRequests: 1 }),
    });
    expect((await download('a'.repeat(32), { key: 'nope' })).status).toBe(401);
    expect((await download('a'.repeat(32))).status).toBe(404);
    const limited = await download('a'.repeat(32));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
  });
});

describe('artifact routes: download of a name that is not well-formed', () => {
  it('serves a stored name with a lone surrogate (repaired to U+FFFD) exactly once', async () => {
    const { cache, download } = await harness();
    const store = await cache.get('default');
    const receipt = await store.store({
      data: png,
      filename: 'shot\uD800.png',
      contentType: 'image/png',
      scope: { principalId: 'principal:default:alice', transportFamily: 'local-api' },
    });
    expect(receipt.filename).toBe('shot\uFFFD.png');
    const response = await download(receipt.artifactId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="shot_.png"; filename*=UTF-8''shot%EF%BF%BD.png`,
    );
    expect(Buffer.from(await response.arrayBuffer()).equals(png)).toBe(true);
    expect((await download(receipt.artifactId)).status).toBe(404);
  });

  it('builds the response headers before it consumes: a receipt that cannot make them leaves the artifact in place', async () => {
    const home = await tempHome('hermes-routes-');
    const cache = new ArtifactStoreCache({ resolveProfileHome: () => home.path });
    const store = await cache.get('default');
    const scope = { principalId: 'principal:default:alice', transportFamily: 'local-api' };
    const receipt = await store.store({
      data: png,
      filename: 'shot.png',
      contentType: 'image/png',
      scope,
    });
    // The store as the routes see it, except that its receipts carry a type no header can hold
    // (a stand-in for any receipt field a response cannot be built from).
    const broken = (stored: ArtifactReceipt) => ({
      ...stored,
      contentType: 'image/png\r\nX-Injected: 1',
    });
    const view = Object.create(store, {
      validate: { value: (id: string, owner: ArtifactScope) => broken(store.validate(id, owner)) },
      loadStream: {
        value: async (id: string, owner: ArtifactScope) => {
          const loaded = await store.loadStream(id, owner);
          return { ...loaded, receipt: broken(loaded.receipt) };
        },
      },
    }) as ArtifactStore;
    const app = createArtifactRoutes({
      authenticate: () => ({ ok: true, principalId: scope.principalId, profile: 'default' }),
      resolveTransportFamily: () => scope.transportFamily,
      stores: { get: async () => view },
    });
    const response = await app.request(`${ARTIFACT_DOWNLOAD_PATH_PREFIX}${receipt.artifactId}`);
    expect(response.status).toBe(500);
    expect((await errorOf(response)).code).toBe('artifact_rejected');
    // Not consumed: the artifact is still there, whole.
    expect(store.count()).toBe(1);
    expect((await store.load(receipt.artifactId, scope)).data.equals(png)).toBe(true);
  });
});

describe('artifact routes mounted under a profile prefix', () => {
  it('advertise a download path under the same prefix, which reaches the same store', async () => {
    const home = await tempHome('hermes-routes-mounted-');
    const stores = new ArtifactStoreCache({
      resolveProfileHome: (profile) => path.join(home.path, profile),
    });
    const routesFor = (profile: string) =>
      createArtifactRoutes({
        authenticate: () => ({ ok: true, principalId: `principal:${profile}:x`, profile }),
        resolveTransportFamily: () => 'local-api',
        stores,
      });
    const gateway = new Hono();
    gateway.route('/', routesFor('default'));
    gateway.route('/p/work', routesFor('work'));

    const uploaded = await gateway.request(`/p/work${ARTIFACT_UPLOAD_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'image/png', [ARTIFACT_FILENAME_HEADER]: 'a.png' },
      body: png,
    });
    expect(uploaded.status).toBe(201);
    const receipt = (await uploaded.json()) as ArtifactWireReceipt;
    expect(receipt.download_path).toBe(
      `/p/work${ARTIFACT_DOWNLOAD_PATH_PREFIX}${receipt.artifact_id}`,
    );
    expect((await stores.get('work')).count()).toBe(1);
    expect((await stores.get('default')).count()).toBe(0);

    const downloaded = await gateway.request(receipt.download_path!);
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(png)).toBe(true);
  });
});

describe('artifact routes composed with broker-style validation', () => {
  it('lets a session-bearing scope of the uploading principal and family validate an HTTP upload', async () => {
    const { upload, cache } = await harness();
    const receipt = (await (await upload()).json()) as ArtifactWireReceipt;
    const store = await cache.get('default');
    const controllerScope = {
      principalId: KEYS['key-alice'],
      transportFamily: 'local-api',
      sessionId: 'session-42',
      profileId: 'default',
      controllerId: 'controller-1',
    };
    expect(store.validate(receipt.artifact_id, controllerScope).artifactId).toBe(
      receipt.artifact_id,
    );
    expect(() =>
      store.validate(receipt.artifact_id, {
        ...controllerScope,
        transportFamily: 'cloud-ticket-ws',
      }),
    ).toThrow(ArtifactScopeMismatch);
  });
});
