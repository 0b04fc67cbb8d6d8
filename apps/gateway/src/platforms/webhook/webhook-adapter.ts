import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  AdapterFatalError,
  ConnectOptions,
  PlatformAdapter,
  SendOptions,
  SendResult,
} from '@hermes/supervisor';
import type { Logger } from 'pino';
import { clipQuoted } from '../../http/body.js';
import { refuseUnparsableRequest } from '../../http/errors.js';
import { PROFILE_REJECTED_BODY, splitProfilePrefix } from '../../http/profile-prefix.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../json-depth.js';
import type { InboundMessage } from '../inbound.js';
import { IdempotencyCache } from './idempotency-cache.js';
import { FixedRateWindow } from './rate-window.js';
import { renderPrompt, type WebhookRoute } from './routes.js';
import {
  INSECURE_NO_AUTH,
  SIGNATURE_V1_HEADER,
  SIGNATURE_V2_HEADER,
  verifySignature,
} from './signature.js';
import type { WebhookLane } from './webhook-lanes.js';

export const DEFAULT_WEBHOOK_PORT = 8644;
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1_048_576;

export interface WebhookSettings {
  readonly host: string;
  readonly port: number;
  readonly maxBodyBytes: number;
}

export interface WebhookAdapterOptions {
  readonly settings: WebhookSettings;
  /**
   * The profile a request addresses (`undefined`: the bare route) with its routes and where its
   * deliveries go; null = refused (404).
   */
  readonly lane: (prefix: string | undefined) => WebhookLane | null;
  /** Sends to another platform (a route's `deliver: telegram`). */
  readonly deliverTo: (
    platform: string,
    chatId: string,
    content: string,
    options: SendOptions,
  ) => Promise<SendResult>;
  readonly logger: Logger;
  /** Called with the bound port once listening. */
  readonly onListening?: (url: string) => void;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function answer(response: ServerResponse, status: number, body: Record<string, unknown>) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

class BodyTooLarge extends Error {}

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

class Unparseable extends Error {}

/** JSON nested past `MAX_JSON_DEPTH` is no payload: it is rendered into a prompt. */
function shallow(value: unknown): unknown {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw new Unparseable();
  return value;
}

function jsonOf(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

const FORM_ENCODED = /^[^=&\s]+=[^&]*(&[^=&\s]+=[^&]*)*$/;

/** JSON whatever the Content-Type says, else form encoding (GitHub's form deliveries). */
function parsePayload(body: Buffer): unknown {
  const text = body.toString('utf8');
  const json = jsonOf(text);
  if (json) return shallow(json.value);
  if (!FORM_ENCODED.test(text)) throw new Unparseable();
  const form = Object.fromEntries(new URLSearchParams(text));
  // GitHub's form deliveries carry the JSON in `payload`.
  const embedded = typeof form.payload === 'string' ? jsonOf(form.payload) : undefined;
  return embedded ? shallow(embedded.value) : form;
}

/** A percent-decoded path segment; `undefined` when it does not decode. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The first delivery id header that is not blank (a blank one names no delivery). */
function deliveryIdOf(request: IncomingMessage): string | undefined {
  for (const name of ['x-github-delivery', 'svix-id', 'x-request-id']) {
    const value = header(request, name)?.trim();
    if (value) return value;
  }
  return undefined;
}

function eventOf(request: IncomingMessage, payload: unknown): string | undefined {
  // A blank header names no event: the next source is asked.
  const fromHeader = header(request, 'x-github-event') || header(request, 'x-event-type');
  if (fromHeader) return fromHeader;
  if (payload && typeof payload === 'object') {
    const record = payload as Record<string, unknown>;
    for (const key of ['event', 'type']) if (typeof record[key] === 'string') return record[key];
  }
  return undefined;
}

/**
 * The webhook platform: its own HTTP listener (`GET /health`, `POST /webhooks/<route>`, `POST
 * /p/<profile>/webhooks/<route>`) checking each request in the reference's order — profile, route,
 * binding, enabled, size, body, secret, signature, rate limit, parse, event filter, prompt,
 * idempotency — then either delivering directly (`deliver_only`) or running the rendered prompt as
 * a turn of the route's conversation, whose reply goes to the route's `deliver` target. Everything
 * after the profile is the addressed profile's (its lane): routes, rate windows and delivery ids
 * are counted per profile, and the request runs in its scope.
 */
export class WebhookAdapter implements PlatformAdapter {
  readonly platform = 'webhook';
  fatalError: AdapterFatalError | undefined;
  readonly #options: WebhookAdapterOptions;
  readonly #rate = new FixedRateWindow();
  readonly #seen = new IdempotencyCache();
  #server: Server | undefined;
  url: string | undefined;

  constructor(options: WebhookAdapterOptions) {
    this.#options = options;
  }

  async connect(_options: ConnectOptions): Promise<boolean> {
    const server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        this.#options.logger.error({ err: error }, 'webhook request failed');
        if (!response.headersSent) answer(response, 500, { error: 'Internal error' });
        else response.destroy();
      });
    });
    // What Node cannot parse is refused in the listener's own shape, not Node's bare status line.
    server.on('clientError', (error: Error & { code?: string }, socket) =>
      refuseUnparsableRequest(error, socket, (refusal) => ({
        error: refusal.status === 400 ? 'Bad request' : refusal.message,
      })),
    );
    const { host, port } = this.#options.settings;
    try {
      // Rejects with the listen error (EADDRINUSE, EACCES, …) instead of resolving.
      await once(server.listen(port, host), 'listening');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      this.fatalError = {
        code: code === 'EADDRINUSE' ? 'webhook_port_in_use' : 'webhook_listen_failed',
        message: `webhook cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`,
        // Another process owns the port or we may not bind it: waiting does not fix the config.
        retryable: !(code === 'EADDRINUSE' || code === 'EACCES'),
      };
      return false;
    }
    this.#server = server;
    const address = server.address() as AddressInfo;
    this.url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    this.#options.onListening?.(this.url);
    this.#options.logger.info({ platform: 'webhook', url: this.url }, 'webhook listening');
    return true;
  }

  async disconnect(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2000).unref();
    });
  }

  /** A reply to a route of the launch profile (another profile's lane sends with `sendRoute`). */
  async send(chatId: string, content: string, options: SendOptions = {}): Promise<SendResult> {
    const route = this.#options.lane(undefined)?.route(chatId);
    if (!route)
      return { success: false, error: `unknown webhook route ${chatId}`, retryable: false };
    return this.sendRoute(route, content, options);
  }

  /** Delivers `content` to the route's `deliver` target. */
  async sendRoute(
    route: WebhookRoute,
    content: string,
    options: SendOptions = {},
  ): Promise<SendResult> {
    if (route.deliver === 'telegram') {
      if (!route.deliverChatId)
        return {
          success: false,
          error: `route ${route.name} has no deliver_extra.chat_id`,
          retryable: false,
        };
      return this.#options.deliverTo('telegram', route.deliverChatId, content, options);
    }
    this.#options.logger.info(
      { platform: 'webhook', profile: route.profile, route: route.name, content },
      'webhook reply',
    );
    return { success: true, messageId: options.idempotencyKey };
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let pathname: string;
    try {
      pathname = new URL(request.url ?? '/', 'http://webhook.local').pathname;
    } catch {
      // A target no URL can be made of (`//[::1/…`, `http://[bad/…`).
      answer(response, 400, { error: 'Bad request' });
      return;
    }
    if (pathname === '/health' && request.method === 'GET') {
      answer(response, 200, { status: 'ok', platform: 'webhook' });
      return;
    }
    const match = /^(?:\/p\/([^/]+))?\/webhooks\/([^/]+)\/?$/.exec(pathname);
    if (!match) {
      answer(response, 404, { error: 'Not found' });
      return;
    }
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      answer(response, 405, { error: 'Method not allowed' });
      return;
    }
    const segment = match[2] ?? '';
    // An undecodable name names no route; it is quoted as it came.
    const name = decodeSegment(segment) ?? segment;
    // 2. profile: a prefix that is blank or does not decode names none (refused, as by the API)
    const split = splitProfilePrefix(pathname);
    const lane = split ? this.#options.lane(split.profile ?? undefined) : null;
    if (lane === null) {
      answer(response, 404, PROFILE_REJECTED_BODY);
      return;
    }
    await lane.ready;
    // 1. dynamic routes (the profile's own and the listener's)
    await lane.reload();
    await lane.run(() => this.#handleRoute(lane, name, request, response));
  }

  /** Steps 3–15 for the addressed profile, inside its scope. */
  async #handleRoute(
    lane: WebhookLane,
    name: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const { logger } = this.#options;
    const profile = lane.profile;
    // 3–4. route exists and is bound to this profile (a mismatch looks like an unknown route)
    const route = lane.route(name);
    if (!route) {
      answer(response, 404, { error: `Unknown route: ${clipQuoted(name)}` });
      return;
    }
    // 5. enabled
    if (!route.enabled) {
      answer(response, 403, { error: `Route disabled: ${name}` });
      return;
    }
    // 6–7. size and body
    const { maxBodyBytes } = this.#options.settings;
    const declared = Number(header(request, 'content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      request.resume();
      response.setHeader('connection', 'close');
      answer(response, 413, { error: 'Payload too large' });
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(request, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        response.setHeader('connection', 'close');
        answer(response, 413, { error: 'Payload too large' });
      } else answer(response, 400, { error: 'Bad request' });
      return;
    }
    // 8–9. secret and signature
    if (!route.secret) {
      answer(response, 403, { error: 'Webhook route is missing an HMAC secret' });
      return;
    }
    const loopback = LOOPBACK.has(request.socket.remoteAddress ?? '');
    const insecure = route.secret === INSECURE_NO_AUTH && (!route.dynamic || loopback);
    let signed: string | undefined;
    if (!insecure) {
      const verdict =
        route.secret === INSECURE_NO_AUTH
          ? { ok: false as const, reason: 'INSECURE_NO_AUTH accepted from loopback only' }
          : verifySignature({
              secret: route.secret,
              body,
              v1: header(request, SIGNATURE_V1_HEADER),
              v2: header(request, SIGNATURE_V2_HEADER),
              nowS: Date.now() / 1000,
            });
      if (!verdict.ok) {
        logger.warn(
          { platform: 'webhook', profile, route: name, reason: verdict.reason },
          'webhook signature refused',
        );
        answer(response, 401, { error: 'Invalid signature' });
        return;
      }
      if (verdict.version === 'v2') signed = verdict.signed;
      else
        logger.warn(
          { platform: 'webhook', profile, route: name },
          `webhook route ${name} was signed with the deprecated ${SIGNATURE_V1_HEADER} header; move the sender to ${SIGNATURE_V2_HEADER}`,
        );
    }
    // 10. rate limit
    if (!this.#rate.hit(`${profile}/${name}`, route.rateLimit)) {
      answer(response, 429, { error: 'Rate limit exceeded' });
      return;
    }
    // 11. parse
    let payload: unknown;
    try {
      payload = parsePayload(body);
    } catch {
      answer(response, 400, { error: 'Cannot parse body' });
      return;
    }
    // 12. event filter
    const event = eventOf(request, payload);
    if (route.events && route.events.length > 0 && !(event && route.events.includes(event))) {
      answer(response, 200, {
        status: 'ignored',
        reason: `event ${event ?? '(none)'} not subscribed`,
      });
      return;
    }
    // 13. prompt
    const prompt = renderPrompt(route.prompt, { route: name, event, payload });
    // 14. idempotency: by the delivery id, and for V2 by what was signed — the same signed
    // delivery again, under another id or none, is a replay
    const deliveryId = deliveryIdOf(request) ?? randomUUID();
    const seenKeys = [`${profile}/${name}/id:${deliveryId}`];
    if (signed !== undefined) seenKeys.push(`${profile}/${name}/v2:${signed}`);
    if (seenKeys.some((key) => this.#seen.has(key))) {
      answer(response, 200, { status: 'duplicate', delivery_id: deliveryId });
      return;
    }
    for (const key of seenKeys) this.#seen.add(key);
    // A delivery that was not taken must not make the sender's retry a duplicate.
    const forget = () => {
      for (const key of seenKeys) this.#seen.delete(key);
    };
    // 15. deliver directly, or run a turn
    if (route.deliverOnly) {
      const result = await this.sendRoute(route, prompt, { idempotencyKey: deliveryId });
      if (!result.success) {
        forget();
        logger.warn(
          { platform: 'webhook', profile, route: name, error: result.error },
          'webhook delivery failed',
        );
        answer(response, 502, { error: 'Delivery failed' });
        return;
      }
      answer(response, 200, { status: 'delivered', delivery_id: deliveryId });
      return;
    }
    const message: InboundMessage = {
      platform: 'webhook',
      chatId: name,
      threadId: null,
      messageId: deliveryId,
      userId: null,
      userName: event ?? null,
      text: prompt,
      receivedAt: Date.now(),
    };
    try {
      await lane.sink.accept([message]);
    } catch (error) {
      forget();
      throw error;
    }
    lane.sink.dispatch([message]);
    answer(response, 202, { status: 'accepted', route: name, delivery_id: deliveryId });
  }
}
