import { type Context, Hono } from 'hono';
import * as v from 'valibot';
import type { BrowserControlBroker } from '../broker.js';
import {
  browserControlProtocolSupported,
  filterBrowserControlCapabilities,
  isDeveloperCapability,
} from '../capabilities.js';
import {
  BROWSER_CONTROL_PROTOCOL_VERSION,
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_WS_PATH,
  CAPABILITIES_PATH,
} from '../constants.js';
import { type ExtensionControlFlagSource, readFlags } from '../flags.js';
import { RegisterRequestSchema } from '../protocol.js';
import { createScope, scopeToWire } from '../scope.js';
import {
  type ArtifactTransportInfo,
  browserExtensionControlFeature,
  DEFAULT_ARTIFACT_TRANSPORT,
} from './capabilities-document.js';
import {
  bearerMatches,
  deriveApiPrincipal,
  nodePeerAddress,
  transportFamilyForPeer,
} from './principal.js';

/** Error codes of the register route (the HTTP status and `error.code` are the contract). */
export const REGISTER_ERROR_CODES = {
  disabled: 'browser_control_disabled',
  authRequired: 'browser_control_auth_required',
  unauthorized: 'invalid_api_key',
  invalidJson: 'invalid_json',
  invalidBody: 'invalid_request_body',
  bodyTooLarge: 'request_too_large',
  protocolUnsupported: 'browser_control_protocol_unsupported',
  invalidRegistration: 'browser_control_invalid_registration',
  sessionStoreUnavailable: 'session_db_unavailable',
  sessionForbidden: 'browser_control_session_forbidden',
  noCapabilities: 'browser_control_no_capabilities',
  developerModeRequired: 'browser_control_developer_mode_required',
} as const;

export interface BrowserControlRoutesOptions {
  readonly broker: BrowserControlBroker;
  /** `browser.extension_control.*`, read live on every request. */
  readonly flags: ExtensionControlFlagSource;
  /** The API key expected for the routed profile (`undefined` = none configured → 403). */
  readonly apiKey: (profile: string) => string | undefined;
  /** Whether `sessionId` is an existing session of `profile`; absent = the store is unavailable (503). */
  readonly sessionExists?:
    | ((query: { profile: string; sessionId: string }) => boolean | Promise<boolean>)
    | undefined;
  /** The routed profile of a request (default `"default"`; a gateway with `/p/<profile>` overrides it). */
  readonly profile?: (context: Context) => string;
  /** The TCP peer (default: `@hono/node-server`'s incoming socket). */
  readonly peerAddress?: (context: Context) => string | undefined;
  /** Advertised artifact transport (default: `@hermes/artifact-store`'s paths and limits). */
  readonly artifactTransport?: ArtifactTransportInfo;
  /** Wall-clock milliseconds, only to project `ticket_expires_at` for display (default `Date.now`). */
  readonly wallClock?: () => number;
}

/** A registration body is a few hundred bytes; anything past this is refused unread. */
export const MAX_REGISTER_BODY_BYTES = 64 * 1024;

type ErrorStatus = 400 | 401 | 403 | 404 | 413 | 503;

const ERROR_TYPES: Record<ErrorStatus, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  503: 'server_error',
};

/** Reads at most `maxBytes` of the body as UTF-8; `null` when it is larger. */
async function readCappedText(request: Request, maxBytes: number): Promise<string | null> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A refusal in the OpenAI error shape the gateway's other routes use:
 * `{ error: { message, type, param, code } }`, `param` naming the body field at fault (or null).
 */
function failure(
  context: Context,
  status: ErrorStatus,
  code: string,
  message: string,
  options: { type?: string; param?: string } = {},
) {
  return context.json(
    {
      error: {
        message,
        type: options.type ?? ERROR_TYPES[status],
        param: options.param ?? null,
        code,
      },
    },
    status,
  );
}

function trimmedString(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * The HTTP side of the local/remote API transport, as a hono app for the gateway to mount:
 * `POST /v1/browser-control/register` (the reference's ladder of checks, then a single-use ticket)
 * and `GET /v1/capabilities` (the feature document). The principal comes from the profile and the
 * expected API key, never from the body; the family from the TCP peer.
 */
export function createBrowserControlRoutes(options: BrowserControlRoutesOptions): Hono {
  const app = new Hono();
  const profileOf = options.profile ?? (() => 'default');
  const peerOf = options.peerAddress ?? nodePeerAddress;
  const wallClock = options.wallClock ?? Date.now;
  const artifactTransport = options.artifactTransport ?? DEFAULT_ARTIFACT_TRANSPORT;

  /** Shared auth prelude; returns the principal, or a response to send. */
  const authenticate = (context: Context, profile: string) => {
    const expected = options.apiKey(profile);
    if (expected === undefined || expected === '') {
      return failure(
        context,
        403,
        REGISTER_ERROR_CODES.authRequired,
        'browser extension control requires an API server key (API_SERVER_KEY)',
        // The reference's type for this refusal.
        { type: 'gateway_auth_error' },
      );
    }
    if (!bearerMatches(context.req.header('authorization'), expected)) {
      return failure(
        context,
        401,
        REGISTER_ERROR_CODES.unauthorized,
        'invalid or missing bearer token',
      );
    }
    return deriveApiPrincipal({ profile, apiKey: expected });
  };

  app.post(BROWSER_CONTROL_REGISTER_PATH, async (context) => {
    const flags = readFlags(options.flags);
    if (!flags.enabled) {
      return failure(
        context,
        404,
        REGISTER_ERROR_CODES.disabled,
        'browser extension control is disabled (browser.extension_control.enabled)',
      );
    }
    const profile = profileOf(context);
    const principal = authenticate(context, profile);
    if (typeof principal !== 'string') return principal;

    const text = await readCappedText(context.req.raw, MAX_REGISTER_BODY_BYTES);
    if (text === null) {
      return failure(
        context,
        413,
        REGISTER_ERROR_CODES.bodyTooLarge,
        `request body exceeds ${MAX_REGISTER_BODY_BYTES} bytes`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return failure(context, 400, REGISTER_ERROR_CODES.invalidJson, 'request body must be JSON');
    }
    const parsed = v.safeParse(RegisterRequestSchema, body);
    if (!parsed.success) {
      return failure(
        context,
        400,
        REGISTER_ERROR_CODES.invalidBody,
        'request body must be a JSON object',
      );
    }
    const request = parsed.output;
    if (!browserControlProtocolSupported(request.protocol_version)) {
      return failure(
        context,
        400,
        REGISTER_ERROR_CODES.protocolUnsupported,
        `unsupported browser-control protocol version; expected ${BROWSER_CONTROL_PROTOCOL_VERSION}`,
        { param: 'protocol_version' },
      );
    }
    const controllerId = trimmedString(request.controller_id);
    const browserProfileId = trimmedString(request.browser_profile_id);
    const sessionId = trimmedString(request.session_id);
    const missing = (
      [
        ['controller_id', controllerId],
        ['browser_profile_id', browserProfileId],
        ['session_id', sessionId],
      ] as const
    ).find(([, value]) => value === '');
    if (missing) {
      return failure(
        context,
        400,
        REGISTER_ERROR_CODES.invalidRegistration,
        'controller_id, browser_profile_id and session_id are required',
        { param: missing[0] },
      );
    }
    if (!options.sessionExists) {
      return failure(
        context,
        503,
        REGISTER_ERROR_CODES.sessionStoreUnavailable,
        'session store unavailable',
      );
    }
    let exists: boolean;
    try {
      exists = (await options.sessionExists({ profile, sessionId })) === true;
    } catch {
      return failure(
        context,
        503,
        REGISTER_ERROR_CODES.sessionStoreUnavailable,
        'session store unavailable',
      );
    }
    if (!exists) {
      return failure(
        context,
        403,
        REGISTER_ERROR_CODES.sessionForbidden,
        'session_id is not an existing session of this server',
        { param: 'session_id' },
      );
    }
    const developerMode = options.broker.developerModeEnabled();
    const capabilities = filterBrowserControlCapabilities(request.capabilities, developerMode);
    if (capabilities.size === 0) {
      return failure(
        context,
        400,
        REGISTER_ERROR_CODES.noCapabilities,
        'no permitted controller capabilities requested',
        { param: 'capabilities' },
      );
    }
    if (!developerMode && [...capabilities].some(isDeveloperCapability)) {
      return failure(
        context,
        403,
        REGISTER_ERROR_CODES.developerModeRequired,
        'browser_cdp and browser_evaluate require browser.extension_control.developer_mode',
        { param: 'capabilities' },
      );
    }
    const scope = createScope({
      principalId: principal,
      profileId: profile,
      sessionId,
      controllerId,
      browserProfileId,
      transportFamily: transportFamilyForPeer(peerOf(context)),
      capabilities,
    });
    const ticket = options.broker.mintTicket(scope);
    const ttl = options.broker.ticketTtlSeconds;
    return context.json(
      {
        protocol_version: BROWSER_CONTROL_PROTOCOL_VERSION,
        ticket: ticket.value,
        // Best-effort projection for display; the broker enforces expiry on its monotonic clock.
        ticket_expires_at: wallClock() / 1000 + ttl,
        ticket_expires_in_seconds: ttl,
        ws_path: BROWSER_CONTROL_WS_PATH,
        scope: scopeToWire(scope),
      },
      201,
    );
  });

  app.get(CAPABILITIES_PATH, (context) => {
    // Feature discovery: bearer-checked whenever a key is configured for the profile.
    const expected = options.apiKey(profileOf(context));
    if (expected && !bearerMatches(context.req.header('authorization'), expected)) {
      return failure(
        context,
        401,
        REGISTER_ERROR_CODES.unauthorized,
        'invalid or missing bearer token',
      );
    }
    // Developer mode as registration applies it: the broker's (a host may pin it), not the file's.
    const feature = browserExtensionControlFeature({
      flags: { ...readFlags(options.flags), developerMode: options.broker.developerModeEnabled() },
      artifactTransport,
    });
    return context.json({
      features: { browser_extension_control: feature },
      endpoints: {
        browser_control_register: { method: 'POST', path: BROWSER_CONTROL_REGISTER_PATH },
        browser_control_ws: { method: 'GET', path: BROWSER_CONTROL_WS_PATH },
        artifact_upload: { method: 'POST', path: artifactTransport.uploadPath },
        artifact_download: { method: 'GET', path: artifactTransport.downloadPath },
      },
    });
  });

  return app;
}
