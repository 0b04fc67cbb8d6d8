import { Readable } from 'node:stream';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import * as v from 'valibot';
import type { ArtifactStore } from './artifact-store.js';
import { exceedsCap, nonEmptyBodyChunks } from './body-chunks.js';
import {
  ARTIFACT_DOWNLOAD_PATH_PREFIX,
  ARTIFACT_FILENAME_HEADER,
  ARTIFACT_ID_HEADER,
  ARTIFACT_ID_PATTERN,
  ARTIFACT_REFUSED_BODY_DRAIN_BYTES,
  ARTIFACT_RETRY_AFTER_SECONDS,
  ARTIFACT_SHA256_HEADER,
  ARTIFACT_UPLOAD_PATH,
} from './constants.js';
import { ArtifactError, ArtifactTraversal } from './errors.js';
import { ArtifactRateLimiter } from './rate-limiter.js';
import { type ArtifactReceipt, toWireReceipt } from './receipt.js';

/** The `error.code` values the artifact routes answer with (besides the authenticator's own). */
export type ArtifactRouteErrorCode =
  | 'browser_control_disabled'
  | 'browser_control_auth_required'
  | 'rate_limit_exceeded'
  | 'artifact_rejected'
  | 'artifact_too_large'
  | 'artifact_mime_rejected'
  | 'artifact_not_found'
  | 'artifact_expired';

/**
 * The caller's verdict on a request. The gateway checks the API-server bearer key and derives the
 * server-side principal; nothing here trusts a principal named by the client.
 */
export type ArtifactAuthentication =
  | { readonly ok: true; readonly principalId: string; readonly profile: string }
  | {
      readonly ok: false;
      readonly status: 401 | 403;
      readonly code: string;
      readonly message: string;
    };

/** Where the routes find a profile's store; `ArtifactStoreCache` fits. */
export interface ArtifactStoreLookup {
  get(profile: string): Promise<ArtifactStore>;
}

export interface ArtifactRoutesOptions {
  /** Authenticates the request and names its principal and profile. */
  readonly authenticate: (
    context: Context,
  ) => ArtifactAuthentication | Promise<ArtifactAuthentication>;
  /** `local-api` for a loopback peer, `remote-api` otherwise (the gateway's rule). */
  readonly resolveTransportFamily: (context: Context) => string;
  readonly stores: ArtifactStoreLookup;
  /** The feature flag, read on every request so a config change applies live. Default: on. */
  readonly isEnabled?: () => boolean;
  /** Shared by upload and download (keys `upload:<principal>`, `download:<principal>`). */
  readonly rateLimiter?: ArtifactRateLimiter;
}

/** Required and not blank; any length (the store sanitises the name and cuts it to 160). */
const FilenameHeaderSchema = v.pipe(
  v.string('X-Artifact-Filename is required'),
  v.trim(),
  v.nonEmpty('X-Artifact-Filename is required'),
);

const ContentLengthSchema = v.pipe(
  v.string(),
  v.regex(/^\d{1,16}$/),
  v.transform((value) => Number(value)),
);

const ArtifactIdParamSchema = v.pipe(v.string(), v.regex(ARTIFACT_ID_PATTERN));

function errorType(status: number, code: string): string {
  // The browser-control register route's type for the same refusal (the reference's).
  if (status === 403 && code === 'browser_control_auth_required') return 'gateway_auth_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404 || status === 410) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function errorResponse(
  context: Context,
  options: {
    status: ContentfulStatusCode;
    code: string;
    message: string;
    headers?: Record<string, string>;
  },
): Response {
  // The OpenAI shape of the gateway's other routes; no artifact refusal names a body field.
  return context.json(
    {
      error: {
        message: options.message,
        type: errorType(options.status, options.code),
        param: null,
        code: options.code,
      },
    },
    options.status,
    options.headers,
  );
}

/** The string with every lone UTF-16 surrogate replaced by U+FFFD (`toWellFormed`, pre-ES2024). */
function wellFormed(text: string): string {
  return text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    '\uFFFD',
  );
}

/**
 * `attachment` with an ASCII fallback name and the exact UTF-8 name (RFC 6266 / 5987). Never
 * throws: a name that is not well-formed UTF-16 (which `encodeURIComponent` refuses) is repaired.
 */
function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'artifact';
  const encoded = encodeURIComponent(wellFormed(filename)).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * The prefix the gateway mounted the routes under (`/p/work` on a multiplexed listener, `` at the
 * root), so the advertised download path reaches the same profile's store.
 */
function mountPrefix(requestPath: string): string {
  return requestPath.endsWith(ARTIFACT_UPLOAD_PATH)
    ? requestPath.slice(0, -ARTIFACT_UPLOAD_PATH.length)
    : '';
}

/**
 * The request body straight from Node, when @hono/node-server serves the request (its
 * `HttpBindings` put the Node request at `context.env.incoming`) and nobody has started reading
 * it: reading it directly skips the web-stream adapter, which copies every chunk on the way.
 * Anything else (another runtime, `app.request` in tests, a body already being read or decoded
 * as text) gets `null` and the caller uses the web body.
 *
 * Leaving it early does not destroy it: the server drains or closes an unread rest after the
 * answer is sent, as it does for any body a handler did not read.
 */
function unreadNodeRequestBody(context: Context): AsyncIterable<Uint8Array> | null {
  const environment: unknown = context.env;
  if (typeof environment !== 'object' || environment === null) return null;
  const incoming = (environment as { incoming?: unknown }).incoming;
  if (!(incoming instanceof Readable)) return null;
  if (
    incoming.readableDidRead ||
    incoming.readableObjectMode ||
    incoming.readableEncoding !== null ||
    incoming.listenerCount('data') > 0 ||
    incoming.listenerCount('readable') > 0
  ) {
    return null;
  }
  return { [Symbol.asyncIterator]: () => incoming.iterator({ destroyOnReturn: false }) };
}

/** The success headers of a download, from its receipt; throws if the receipt cannot make them. */
function downloadHeaders(receipt: ArtifactReceipt): Headers {
  return new Headers({
    'Content-Type': receipt.contentType,
    'Content-Length': String(receipt.sizeBytes),
    'Content-Disposition': contentDisposition(receipt.filename),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    [ARTIFACT_SHA256_HEADER]: receipt.sha256,
    [ARTIFACT_ID_HEADER]: receipt.artifactId,
  });
}

/** The Node request behind a request served by @hono/node-server (its `incoming` binding). */
function nodeIncoming(context: Context): Readable | null {
  const environment: unknown = context.env;
  if (typeof environment !== 'object' || environment === null) return null;
  const incoming = (environment as { incoming?: unknown }).incoming;
  return incoming instanceof Readable ? incoming : null;
}

/** Reads and discards what is left of the request body, at most about `limit` more bytes. */
async function discardRest(incoming: Readable, limit: number): Promise<void> {
  let discarded = 0;
  try {
    for await (const chunk of incoming.iterator({ destroyOnReturn: false })) {
      discarded += (chunk as Uint8Array).byteLength;
      if (discarded > limit) return;
    }
  } catch {
    // The client went away: there is nobody left to answer.
  }
}

/**
 * Sends `response` only once the request body is read, when it was refused before its body was
 * (or before all of it was). Many clients write the whole body before they read anything; a
 * server that answers early and closes the connection while the body still arrives makes them
 * fail with EPIPE or a reset, and the status is lost. So the rest of the body is read and
 * discarded first, up to `ARTIFACT_REFUSED_BODY_DRAIN_BYTES` more (the connection then stays
 * usable). A body announced or found to be larger is answered right away: a client that reads
 * while it writes sees the status in the short window in which the server still reads before it
 * closes (@hono/node-server's own cleanup).
 */
async function answerAfterUnreadBody(context: Context, response: Response): Promise<Response> {
  const incoming = nodeIncoming(context);
  if (incoming === null || incoming.readableEnded || incoming.destroyed) return response;
  const declared = v.safeParse(ContentLengthSchema, context.req.header('content-length'));
  if (!declared.success || declared.output <= ARTIFACT_REFUSED_BODY_DRAIN_BYTES) {
    await discardRest(incoming, ARTIFACT_REFUSED_BODY_DRAIN_BYTES);
  }
  return response;
}

type Admission =
  | { readonly ok: true; readonly principalId: string; readonly profile: string }
  | { readonly ok: false; readonly response: Response };

/**
 * The hono sub-app serving `POST /v1/artifacts/upload` and `GET /v1/artifacts/download/:id`.
 * The gateway mounts it (also under `/p/<profile>` when multiplexing) and supplies
 * authentication, the transport family and the per-profile stores.
 */
export function createArtifactRoutes(options: ArtifactRoutesOptions): Hono {
  const app = new Hono();
  const rateLimiter = options.rateLimiter ?? new ArtifactRateLimiter();
  const isEnabled = options.isEnabled ?? (() => true);

  async function admit(context: Context, direction: 'upload' | 'download'): Promise<Admission> {
    const authentication = await options.authenticate(context);
    if (!authentication.ok) {
      return {
        ok: false,
        response: errorResponse(context, {
          status: authentication.status,
          code: authentication.code,
          message: authentication.message,
        }),
      };
    }
    // Fail closed on identity: an authenticator that names no principal has not authenticated.
    if (typeof authentication.principalId !== 'string' || authentication.principalId === '') {
      return {
        ok: false,
        response: errorResponse(context, {
          status: 401,
          code: 'browser_control_auth_required',
          message: 'the request did not resolve to an authenticated principal',
        }),
      };
    }
    if (!rateLimiter.allow(`${direction}:${authentication.principalId}`)) {
      return {
        ok: false,
        response: errorResponse(context, {
          status: 429,
          code: 'rate_limit_exceeded',
          message: `too many artifact ${direction}s; retry shortly`,
          headers: { 'Retry-After': String(ARTIFACT_RETRY_AFTER_SECONDS) },
        }),
      };
    }
    return { ok: true, principalId: authentication.principalId, profile: authentication.profile };
  }

  async function resolveStore(
    context: Context,
    profile: string,
  ): Promise<{ readonly store: ArtifactStore } | { readonly response: Response }> {
    try {
      return { store: await options.stores.get(profile) };
    } catch {
      return {
        response: errorResponse(context, {
          status: 500,
          code: 'artifact_rejected',
          message: 'the artifact store for this profile is unavailable',
        }),
      };
    }
  }

  // An injected dependency that throws (authenticator, family resolver) fails closed with the
  // same envelope as every other error, and its message (which may name internals) stays here.
  app.onError((_error, context) =>
    errorResponse(context, {
      status: 500,
      code: 'artifact_rejected',
      message: 'the artifact request could not be processed',
    }),
  );

  app.post(ARTIFACT_UPLOAD_PATH, async (context) =>
    answerAfterUnreadBody(context, await upload(context)),
  );

  async function upload(context: Context): Promise<Response> {
    if (!isEnabled()) {
      return errorResponse(context, {
        status: 404,
        code: 'browser_control_disabled',
        message: 'browser extension control is disabled',
      });
    }
    const admission = await admit(context, 'upload');
    if (!admission.ok) return admission.response;

    const filename = v.safeParse(
      FilenameHeaderSchema,
      context.req.header(ARTIFACT_FILENAME_HEADER),
    );
    if (!filename.success) {
      return errorResponse(context, {
        status: 400,
        code: 'artifact_rejected',
        message: filename.issues[0].message,
      });
    }

    const resolved = await resolveStore(context, admission.profile);
    if ('response' in resolved) return resolved.response;
    const { store } = resolved;

    const tooLarge = () =>
      errorResponse(context, {
        status: 413,
        code: 'artifact_too_large',
        message: `artifact exceeds the limit of ${store.maxBytes} bytes`,
      });
    const declaredLength = v.safeParse(ContentLengthSchema, context.req.header('content-length'));
    if (declaredLength.success && declaredLength.output > store.maxBytes) return tooLarge();

    // The first chunk decides emptiness before anything touches the disk.
    const body = await nonEmptyBodyChunks(unreadNodeRequestBody(context) ?? context.req.raw.body);
    if (body === null) {
      return errorResponse(context, {
        status: 400,
        code: 'artifact_rejected',
        message: 'the artifact body is empty',
      });
    }

    try {
      // Awaited, never fire-and-forget: 201 means the bytes are fsynced and renamed into place.
      // The body streams through the hash into the temp file; reading stops at the chunk that
      // passes maxBytes.
      const receipt = await store.storeStream({
        body,
        ...(declaredLength.success ? { declaredBytes: declaredLength.output } : {}),
        filename: filename.output,
        contentType: context.req.header('content-type') ?? '',
        scope: {
          principalId: admission.principalId,
          transportFamily: options.resolveTransportFamily(context),
        },
      });
      return context.json(
        toWireReceipt(receipt, {
          downloadPath: `${mountPrefix(context.req.path)}${ARTIFACT_DOWNLOAD_PATH_PREFIX}${receipt.artifactId}`,
        }),
        201,
      );
    } catch (error) {
      if (ArtifactError.isInstance(error) && error.code === 'artifact_too_large') {
        return tooLarge();
      }
      if (ArtifactError.isInstance(error) && error.code === 'artifact_mime_rejected') {
        // The type is refused before the body is read. The size verdict still comes first (as
        // when the body was read before the type check), so count the rest, capped, then decide.
        if (await exceedsCap(body, store.maxBytes)) return tooLarge();
        return errorResponse(context, {
          status: 415,
          code: 'artifact_mime_rejected',
          message: error.message,
        });
      }
      if (ArtifactError.isInstance(error)) {
        return errorResponse(context, {
          status: 400,
          code: 'artifact_rejected',
          message: error.message,
        });
      }
      return errorResponse(context, {
        status: 500,
        code: 'artifact_rejected',
        message: 'the artifact could not be stored',
      });
    }
  }

  app.get(`${ARTIFACT_DOWNLOAD_PATH_PREFIX}:artifactId`, async (context) => {
    // Disabled downloads answer a bare 404 so a probe learns nothing about the feature.
    if (!isEnabled()) return context.body(null, 404);
    // hono answers HEAD with the GET handler; running it would consume a one-shot artifact.
    if (context.req.method === 'HEAD') return context.body(null, 405, { Allow: 'GET' });
    const admission = await admit(context, 'download');
    if (!admission.ok) return admission.response;

    const rawId = context.req.param('artifactId');
    const artifactId = v.safeParse(ArtifactIdParamSchema, rawId);
    if (!artifactId.success) {
      return errorResponse(context, {
        status: 400,
        code: 'artifact_not_found',
        message: new ArtifactTraversal({ artifactId: String(rawId) }).message,
      });
    }
    const resolved = await resolveStore(context, admission.profile);
    if ('response' in resolved) return resolved.response;
    const { store } = resolved;

    const scope = {
      principalId: admission.principalId,
      transportFamily: options.resolveTransportFamily(context),
    };
    try {
      // The headers are built (and so checked) from the receipt before anything is consumed: a
      // response that cannot be built fails while the artifact is still there.
      const headers = downloadHeaders(store.validate(artifactId.output, scope));
      // Verified and consumed before it returns, so the status is settled before any header is
      // sent. The body is hashed again as it streams and fails rather than ends if the bytes
      // changed; with Content-Length set, the client sees that as a truncated response.
      const { body } = await store.loadStream(artifactId.output, scope);
      return context.body(body, { status: 200, headers });
    } catch (error) {
      if (!ArtifactError.isInstance(error)) {
        return errorResponse(context, {
          status: 500,
          code: 'artifact_rejected',
          message: 'the artifact could not be read',
        });
      }
      if (error.code === 'artifact_expired') {
        return errorResponse(context, {
          status: 410,
          code: 'artifact_expired',
          message: error.message,
        });
      }
      // The reference answers a foreign scope and a malformed id with 400 and everything else
      // (unknown, consumed, gone, checksum) with 404, all under one code.
      const status =
        error.code === 'artifact_scope_mismatch' || error.code === 'artifact_traversal' ? 400 : 404;
      return errorResponse(context, { status, code: 'artifact_not_found', message: error.message });
    }
  });

  return app;
}
