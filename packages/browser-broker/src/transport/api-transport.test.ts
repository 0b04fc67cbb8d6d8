import type { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BrowserControlBroker } from '../broker.js';
import { BrowserControllerClient, ControllerConnectFailed } from '../client/index.js';
import {
  BROWSER_CONTROL_CAPABILITIES,
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  FRAME_COMMAND,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_CONTROLLER_FRAMES_PER_TURN,
} from '../constants.js';
import { ControllerCancelled, ControllerRejected } from '../errors.js';
import type { ExtensionControlFlags } from '../flags.js';
import { withBrowserControlIdentity } from '../identity-context.js';
import { routeBrowserTool, routedBrowserHandler } from '../router.js';
import { createScope } from '../scope.js';
import { type LoopbackGateway, startLoopbackGateway } from '../testing/loopback-gateway.js';
import { browserControlIdentityMiddleware } from './identity-middleware.js';
import { MAX_REGISTER_BODY_BYTES, REGISTER_ERROR_CODES } from './routes.js';

const API_KEY = 'test-api-key-0123456789';
const SESSION = 'session-abc';

let gateway: LoopbackGateway | undefined;
const openSockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of openSockets.splice(0)) socket.terminate();
  await gateway?.close();
  gateway = undefined;
});

class CountingBroker extends BrowserControlBroker {
  disconnectCalls = 0;
  override async disconnect(...args: Parameters<BrowserControlBroker['disconnect']>) {
    this.disconnectCalls += 1;
    return super.disconnect(...args);
  }
}

async function start(
  options: {
    flags?: ExtensionControlFlags;
    /** Pins the broker's developer mode regardless of the flags (a multi-tenant host's choice). */
    developerModePin?: boolean;
    apiKey?: string | undefined;
    peerAddress?: string;
    keepaliveMilliseconds?: number;
    pingMilliseconds?: number;
    sendWaitMilliseconds?: number;
    sessionsAvailable?: boolean;
    clock?: () => number;
    extend?: (app: Hono, broker: BrowserControlBroker) => void;
  } = {},
) {
  const flags = { current: options.flags ?? { enabled: true, developerMode: false } };
  const broker = new CountingBroker({
    commandTimeoutSeconds: 5,
    flags: () => flags.current,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.developerModePin !== undefined ? { developerMode: options.developerModePin } : {}),
  });
  const peerAddress = options.peerAddress;
  gateway = await startLoopbackGateway({
    broker,
    flags: () => flags.current,
    apiKey: 'apiKey' in options ? options.apiKey : API_KEY,
    sessions: options.sessionsAvailable === false ? undefined : new Set([SESSION]),
    routes: peerAddress ? { peerAddress: () => peerAddress } : {},
    ...(options.extend ? { extend: (app: Hono) => options.extend?.(app, broker) } : {}),
    connection: {
      keepaliveMilliseconds: options.keepaliveMilliseconds ?? 60_000,
      ...(options.pingMilliseconds ? { pingMilliseconds: options.pingMilliseconds } : {}),
      ...(options.sendWaitMilliseconds
        ? { sendWaitMilliseconds: options.sendWaitMilliseconds }
        : {}),
    },
  });
  return { broker, flags, gateway };
}

function register(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway?.baseUrl}${BROWSER_CONTROL_REGISTER_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const validBody = {
  protocol_version: 1,
  session_id: SESSION,
  controller_id: 'ext-1',
  browser_profile_id: 'chrome-default',
  capabilities: ['controller.noop', 'browser_snapshot'],
};

async function registerTicket(capabilities = validBody.capabilities) {
  const response = await register({ ...validBody, capabilities });
  expect(response.status).toBe(201);
  return (await response.json()) as {
    ticket: string;
    scope: { principal_id: string; transport_family: string; capabilities: string[] };
  };
}

/** Opens a raw controller socket; resolves with it on 101 or rejects with the HTTP status. */
function openSocket(protocols: string[], query = ''): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${gateway?.wsUrl}${BROWSER_CONTROL_WS_PATH}${query}`, protocols);
    openSockets.push(socket);
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`status ${response.statusCode}`));
      response.resume();
    });
    socket.once('error', reject);
  });
}

const ticketProtocols = (ticket: string) => [
  BROWSER_CONTROL_SUBPROTOCOL,
  `${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${ticket}`,
];

/** Collects parsed frames a raw socket receives. */
function collect(socket: WebSocket) {
  const frames: Array<{ method: string; params: Record<string, unknown> }> = [];
  socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
  return frames;
}

async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} not reached in time`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function brokerScope(wire: {
  scope: { principal_id: string; transport_family: string; capabilities: string[] };
}) {
  return createScope({
    principalId: wire.scope.principal_id,
    profileId: 'default',
    sessionId: SESSION,
    controllerId: 'ext-1',
    browserProfileId: 'chrome-default',
    transportFamily: wire.scope.transport_family,
    capabilities: wire.scope.capabilities,
  });
}

describe('POST /v1/browser-control/register', () => {
  it('walks the ladder of refusals with the reference statuses and codes', async () => {
    const expectError = async (response: Response, status: number, code?: string) => {
      expect(response.status).toBe(status);
      const body = (await response.json()) as { error: { code: string } };
      if (code) expect(body.error.code).toBe(code);
    };
    const { flags } = await start({ flags: { enabled: false, developerMode: false } });
    await expectError(await register(validBody), 404, REGISTER_ERROR_CODES.disabled);
    flags.current = { enabled: true, developerMode: false };
    await expectError(await register(validBody, { authorization: 'Bearer wrong' }), 401);
    await expectError(await register(validBody, { authorization: '' }), 401);
    await expectError(await register('{not json'), 400);
    await expectError(
      await register({ ...validBody, padding: 'x'.repeat(MAX_REGISTER_BODY_BYTES) }),
      413,
      REGISTER_ERROR_CODES.bodyTooLarge,
    );
    await expectError(await register('[1, 2]'), 400);
    await expectError(
      await register({ ...validBody, protocol_version: 2 }),
      400,
      REGISTER_ERROR_CODES.protocolUnsupported,
    );
    await expectError(
      await register({ ...validBody, protocol_version: true }),
      400,
      REGISTER_ERROR_CODES.protocolUnsupported,
    );
    await expectError(
      await register({ ...validBody, protocol_version: '1' }),
      400,
      REGISTER_ERROR_CODES.protocolUnsupported,
    );
    await expectError(
      await register({ ...validBody, session_id: '  ' }),
      400,
      REGISTER_ERROR_CODES.invalidRegistration,
    );
    await expectError(
      await register({ ...validBody, controller_id: 7 }),
      400,
      REGISTER_ERROR_CODES.invalidRegistration,
    );
    await expectError(
      await register({ ...validBody, session_id: 'nope' }),
      403,
      REGISTER_ERROR_CODES.sessionForbidden,
    );
    await expectError(
      await register({ ...validBody, capabilities: [] }),
      400,
      REGISTER_ERROR_CODES.noCapabilities,
    );
    await expectError(
      await register({ ...validBody, capabilities: ['browser_cdp', 'made_up'] }),
      400,
      REGISTER_ERROR_CODES.noCapabilities,
    );
  });

  it('answers every refusal as { error: { message, type, param, code } }, param naming the field at fault', async () => {
    const { flags } = await start();
    const refusals: [string, Response, number, string, string | null][] = [
      [
        'bad bearer',
        await register(validBody, { authorization: 'Bearer wrong' }),
        401,
        REGISTER_ERROR_CODES.unauthorized,
        null,
      ],
      ['not JSON', await register('{'), 400, REGISTER_ERROR_CODES.invalidJson, null],
      ['not an object', await register('[]'), 400, REGISTER_ERROR_CODES.invalidBody, null],
      [
        'too large',
        await register('x'.repeat(MAX_REGISTER_BODY_BYTES + 1)),
        413,
        REGISTER_ERROR_CODES.bodyTooLarge,
        null,
      ],
      [
        'protocol 2',
        await register({ ...validBody, protocol_version: 2 }),
        400,
        REGISTER_ERROR_CODES.protocolUnsupported,
        'protocol_version',
      ],
      [
        'blank controller',
        await register({ ...validBody, controller_id: ' ' }),
        400,
        REGISTER_ERROR_CODES.invalidRegistration,
        'controller_id',
      ],
      [
        'blank browser profile',
        await register({ ...validBody, browser_profile_id: '' }),
        400,
        REGISTER_ERROR_CODES.invalidRegistration,
        'browser_profile_id',
      ],
      [
        'no session',
        await register({ ...validBody, session_id: undefined }),
        400,
        REGISTER_ERROR_CODES.invalidRegistration,
        'session_id',
      ],
      [
        'unknown session',
        await register({ ...validBody, session_id: 'nope' }),
        403,
        REGISTER_ERROR_CODES.sessionForbidden,
        'session_id',
      ],
      [
        'no capability',
        await register({ ...validBody, capabilities: [] }),
        400,
        REGISTER_ERROR_CODES.noCapabilities,
        'capabilities',
      ],
    ];
    flags.current = { enabled: false, developerMode: false };
    refusals.push([
      'disabled',
      await register(validBody),
      404,
      REGISTER_ERROR_CODES.disabled,
      null,
    ]);
    const typeOf: Record<number, string> = {
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'invalid_request_error',
    };
    for (const [label, response, status, code, param] of refusals) {
      expect(response.status, label).toBe(status);
      const { error } = (await response.json()) as { error: Record<string, unknown> };
      expect(Object.keys(error).sort(), label).toEqual(['code', 'message', 'param', 'type']);
      expect(error, label).toMatchObject({ type: typeOf[status], param, code });
    }
  });

  it('refuses without a configured API key and answers 503 without a session store', async () => {
    await start({ apiKey: undefined });
    const noKey = await register(validBody);
    expect(noKey.status).toBe(403);
    expect(((await noKey.json()) as { error: { code: string; type: string } }).error).toEqual({
      message: 'browser extension control requires an API server key (API_SERVER_KEY)',
      type: 'gateway_auth_error',
      param: null,
      code: REGISTER_ERROR_CODES.authRequired,
    });
    await gateway?.close();
    await start({ sessionsAvailable: false });
    const noStore = await register(validBody);
    expect(noStore.status).toBe(503);
    expect(((await noStore.json()) as { error: { code: string } }).error.code).toBe(
      REGISTER_ERROR_CODES.sessionStoreUnavailable,
    );
  });

  it('grants a ticket with a server-derived, filtered and sorted scope', async () => {
    await start();
    const before = Date.now() / 1000;
    const response = await register({
      ...validBody,
      principal_id: 'principal:default:spoofed',
      product: 'extension 1.0',
      capabilities: [
        'browser_snapshot',
        'browser_cdp',
        'browser_evaluate',
        'browser_artifact_upload',
        'nope',
        'controller.noop',
      ],
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Record<string, unknown> & {
      scope: Record<string, unknown>;
    };
    expect(body.protocol_version).toBe(1);
    expect(body.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.ticket_expires_at).toBeGreaterThan(before);
    expect(body.ticket_expires_in_seconds).toBeGreaterThan(0);
    expect(body.ticket_expires_in_seconds).toBeLessThanOrEqual(30);
    expect(body.ws_path).toBe(BROWSER_CONTROL_WS_PATH);
    expect(body.scope.principal_id).toMatch(/^principal:default:[0-9a-f]{32}$/);
    expect(body.scope.transport_family).toBe('local-api');
    expect(body.scope.capabilities).toEqual([
      'browser_artifact_upload',
      'browser_snapshot',
      'controller.noop',
    ]);
  });

  it('keeps developer capabilities only while developer mode is on', async () => {
    await start({ flags: { enabled: true, developerMode: true } });
    const body = await registerTicket(['browser_evaluate', 'browser_snapshot']);
    expect(body.scope.capabilities).toEqual(['browser_evaluate', 'browser_snapshot']);
  });

  it('uses remote-api for a non-loopback peer', async () => {
    await start({ peerAddress: '10.0.0.9' });
    expect((await registerTicket()).scope.transport_family).toBe('remote-api');
  });
});

describe('GET /v1/capabilities', () => {
  it('describes the feature truthfully and live, behind the bearer', async () => {
    const { flags } = await start({ flags: { enabled: false, developerMode: false } });
    const unauthorized = await fetch(`${gateway?.baseUrl}/v1/capabilities`);
    expect(unauthorized.status).toBe(401);
    const read = async () => {
      const response = await fetch(`${gateway?.baseUrl}/v1/capabilities`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      return (await response.json()) as {
        features: { browser_extension_control: Record<string, unknown> };
        endpoints: Record<string, { method: string; path: string }>;
      };
    };
    const off = await read();
    // Always present for feature detection, even while the feature is off (reference §3.1.7).
    expect(off.features.browser_extension_control).toEqual({
      enabled: false,
      protocol_version: 1,
      capabilities: [...BROWSER_CONTROL_CAPABILITIES].sort(),
      artifact_capabilities: ['browser_artifact_download', 'browser_artifact_upload'],
      developer_capabilities: ['browser_cdp', 'browser_evaluate'],
      developer_mode: false,
      artifact_transport: {
        upload: { method: 'POST', path: '/v1/artifacts/upload' },
        download: { method: 'GET', path: '/v1/artifacts/download/{artifact_id}' },
        max_bytes: 10_485_760,
        ttl_seconds: 300,
        allowed_mime_types: [
          'application/json',
          'application/pdf',
          'image/gif',
          'image/jpeg',
          'image/png',
          'image/webp',
          'text/plain',
        ],
      },
      real_browser_actions: true,
      transports: { local_vps: 'websocket-subprotocol-ticket', cloud: 'authenticated-gateway-rpc' },
    });
    expect(off.endpoints).toEqual({
      browser_control_register: { method: 'POST', path: BROWSER_CONTROL_REGISTER_PATH },
      browser_control_ws: { method: 'GET', path: BROWSER_CONTROL_WS_PATH },
      artifact_upload: { method: 'POST', path: '/v1/artifacts/upload' },
      artifact_download: { method: 'GET', path: '/v1/artifacts/download/{artifact_id}' },
    });
    flags.current = { enabled: true, developerMode: true };
    expect((await read()).features.browser_extension_control).toMatchObject({
      enabled: true,
      developer_mode: true,
    });
  });

  it('reports the developer mode registration applies when the broker pins it', async () => {
    // The file says on, the host pinned it off: the document must not advertise what register strips.
    await start({ flags: { enabled: true, developerMode: true }, developerModePin: false });
    const response = await fetch(`${gateway?.baseUrl}/v1/capabilities`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const document = (await response.json()) as {
      features: { browser_extension_control: { developer_mode: boolean } };
    };
    expect(document.features.browser_extension_control.developer_mode).toBe(false);
    const body = await registerTicket(['browser_evaluate', 'browser_snapshot']);
    expect(body.scope.capabilities).toEqual(['browser_snapshot']);
  });
});

describe('GET /v1/browser-control/ws', () => {
  it('answers 404 while disabled without consuming the ticket', async () => {
    const { flags } = await start();
    const { ticket } = await registerTicket();
    flags.current = { enabled: false, developerMode: false };
    await expect(openSocket(ticketProtocols(ticket))).rejects.toThrow('status 404');
    flags.current = { enabled: true, developerMode: false };
    const socket = await openSocket(ticketProtocols(ticket));
    expect(socket.protocol).toBe(BROWSER_CONTROL_SUBPROTOCOL);
  });

  it('refuses a query-string ticket without consuming it, and malformed subprotocol lists', async () => {
    await start();
    const { ticket } = await registerTicket();
    await expect(openSocket([BROWSER_CONTROL_SUBPROTOCOL], `?ticket=${ticket}`)).rejects.toThrow(
      'status 401',
    );
    await expect(openSocket(ticketProtocols(ticket), `?ticket=${ticket}`)).rejects.toThrow(
      'status 401',
    );
    await expect(
      openSocket([`${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}${ticket}`]),
    ).rejects.toThrow('status 401');
    await expect(
      openSocket([...ticketProtocols(ticket), `${BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX}other`]),
    ).rejects.toThrow('status 401');
    await expect(
      openSocket([BROWSER_CONTROL_SUBPROTOCOL, BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX]),
    ).rejects.toThrow('status 401');
    await expect(openSocket(ticketProtocols('unknown-ticket'))).rejects.toThrow('status 401');
    // None of the refusals above consumed it.
    await openSocket(ticketProtocols(ticket));
  });

  it('answers its handshake refusals in the OpenAI error shape of the register route', async () => {
    const { flags } = await start();
    const refusal = (protocols: string[]) =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const socket = new WebSocket(`${gateway?.wsUrl}${BROWSER_CONTROL_WS_PATH}`, protocols);
        openSockets.push(socket);
        socket.once('open', () => reject(new Error('upgraded')));
        socket.once('error', reject);
        socket.once('unexpected-response', (_request, response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString()),
            }),
          );
        });
      });
    expect(await refusal(ticketProtocols('unknown-ticket'))).toEqual({
      status: 401,
      body: {
        error: {
          message: expect.stringContaining(BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX),
          type: 'authentication_error',
          param: null,
          code: 'browser_control_unauthorized',
        },
      },
    });
    expect((await refusal([BROWSER_CONTROL_SUBPROTOCOL])).status).toBe(401);
    flags.current = { enabled: false, developerMode: false };
    expect(await refusal(ticketProtocols('unknown-ticket'))).toEqual({
      status: 404,
      body: {
        error: {
          message: expect.stringContaining('disabled'),
          type: 'not_found_error',
          param: null,
          code: 'browser_control_disabled',
        },
      },
    });
  });

  it('refuses an expired ticket before the upgrade', async () => {
    let now = 1_000;
    await start({ clock: () => now });
    const { ticket } = await registerTicket();
    now += 30.5;
    await expect(openSocket(ticketProtocols(ticket))).rejects.toThrow('status 401');
  });

  it('refuses a replayed ticket and echoes only the public subprotocol', async () => {
    await start();
    const { ticket } = await registerTicket();
    const socket = await openSocket(ticketProtocols(ticket));
    expect(socket.protocol).toBe(BROWSER_CONTROL_SUBPROTOCOL);
    await expect(openSocket(ticketProtocols(ticket))).rejects.toThrow('status 401');
  });

  it('echoes heartbeats, round-trips a no-op and rejects a non-boolean ok', async () => {
    const { broker } = await start();
    const registration = await registerTicket();
    const socket = await openSocket(ticketProtocols(registration.ticket));
    const frames = collect(socket);
    await gateway?.connections[0]?.ready;
    socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: '  n-1  ' } }));
    socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'x'.repeat(129) } }));
    socket.send('not json');
    await until(() => frames.length === 1, 'heartbeat echo');
    expect(frames[0]).toEqual({ method: FRAME_HEARTBEAT, params: { nonce: 'n-1', ok: true } });

    const scope = brokerScope(registration);
    const noop = broker.dispatch({ scope, action: 'controller.noop', arguments: { probe: 1 } });
    await until(() => frames.some((frame) => frame.method === FRAME_COMMAND), 'command frame');
    const command = frames.find((frame) => frame.method === FRAME_COMMAND);
    expect(command?.params).toMatchObject({ action: 'controller.noop', arguments: { probe: 1 } });
    socket.send(
      JSON.stringify({
        method: FRAME_RESULT,
        params: { command_id: command?.params.command_id, ok: true, result: 'pong' },
      }),
    );
    await expect(noop).resolves.toBe('pong');

    const rejected = broker.dispatch({ scope, action: 'controller.noop' });
    await until(
      () => frames.filter((frame) => frame.method === FRAME_COMMAND).length === 2,
      'second command',
    );
    const second = frames.filter((frame) => frame.method === FRAME_COMMAND)[1];
    socket.send(
      JSON.stringify({
        method: FRAME_RESULT,
        params: { command_id: second?.params.command_id, ok: 'false', error: 'page crashed' },
      }),
    );
    await expect(rejected).rejects.toThrow(ControllerRejected);
  });

  it("answers a burst far past one turn's frame budget in full and in order, then reads on", async () => {
    await start();
    const registration = await registerTicket();
    const socket = await openSocket(ticketProtocols(registration.ticket));
    const frames = collect(socket);
    await gateway?.connections[0]?.ready;
    // Written in one tick, so the server reads far more frames at once than one turn handles:
    // the rest wait (the socket unread meanwhile) and are handled in the following turns.
    const burst = MAX_CONTROLLER_FRAMES_PER_TURN * 6;
    const nonces = Array.from({ length: burst }, (_, index) => `burst-${index}`);
    for (const nonce of nonces) {
      socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce } }));
    }
    await until(() => frames.length === burst, 'every echo of the burst');
    expect(frames.map((frame) => frame.params.nonce)).toEqual(nonces);
    // Reading resumed once the waiting frames were handled.
    socket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'after' } }));
    await until(() => frames.length === burst + 1, 'the echo after the burst');
    expect(frames.at(-1)?.params.nonce).toBe('after');
  });

  it('sends distinct-nonce keepalive heartbeats until the socket closes', async () => {
    await start({ keepaliveMilliseconds: 25 });
    const { ticket } = await registerTicket();
    const socket = await openSocket(ticketProtocols(ticket));
    const frames = collect(socket);
    await until(() => frames.length >= 2, 'two keepalives');
    expect(frames[0]).toEqual({
      method: FRAME_HEARTBEAT,
      params: { nonce: 'server-keepalive-1', ok: true },
    });
    expect(frames[1]?.params.nonce).toBe('server-keepalive-2');
  });

  it('closes a socket that stops answering transport pings, as a recoverable disconnect', async () => {
    const { broker } = await start({ pingMilliseconds: 500 });
    const live = await registerTicket();
    const liveSocket = await openSocket(ticketProtocols(live.ticket));
    let livePings = 0;
    liveSocket.on('ping', () => {
      livePings += 1;
    });
    await gateway?.connections[0]?.ready;

    // A peer whose pongs never come (ws answers pings itself unless told not to). Its ticket is a
    // same-identity reconnect, so it takes over the controller the live socket held.
    const dead = await registerTicket();
    const deadSocket = new WebSocket(
      `${gateway?.wsUrl}${BROWSER_CONTROL_WS_PATH}`,
      ticketProtocols(dead.ticket),
      { autoPong: false },
    );
    openSockets.push(deadSocket);
    const deadClosed = new Promise<void>((resolve) => deadSocket.once('close', () => resolve()));
    await new Promise((resolve) => deadSocket.once('open', resolve));
    await until(() => gateway?.connections.length === 2, 'dead socket accepted');
    await deadClosed;
    await gateway?.connections[1]?.closed;
    expect(broker.disconnectCalls).toBe(1);
    expect(
      broker.laneRegistered({
        sessionId: SESSION,
        principalId: dead.scope.principal_id,
        transportFamily: 'local-api',
      }),
    ).toBe(true);
    // The answering socket outlived the same number of ping rounds.
    await until(() => livePings >= 3, 'three pings on the live socket');
    expect(liveSocket.readyState).toBe(WebSocket.OPEN);
  });

  it('is routable only once attach finished, not at the HTTP 101', async () => {
    const { broker } = await start({ sendWaitMilliseconds: 10_000 });
    const first = await registerTicket();
    const oldSocket = await openSocket(ticketProtocols(first.ticket));
    await gateway?.connections[0]?.ready;
    // A stalled write holds the controller's send lock, so the reconnect's attach must wait.
    oldSocket.pause();
    const blob = 'x'.repeat(16 * 1024 * 1024);
    const stalled = broker.dispatch({
      scope: brokerScope(first),
      action: 'controller.noop',
      arguments: { blob },
    });
    await until(() => broker.pendingCount === 1, 'stalled command');

    const second = await registerTicket();
    const freshSocket = await openSocket(ticketProtocols(second.ticket));
    const freshFrames = collect(freshSocket);
    let attached = false;
    void gateway?.connections[1]?.ready.then(() => {
      attached = true;
    });
    freshSocket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'early' } }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(attached).toBe(false);
    expect(freshFrames).toEqual([]);

    // The write drains, the lock is released, and only now does the new socket become the owner.
    oldSocket.resume();
    await until(() => attached, 'attach after the slow write');
    await until(
      () => freshFrames.some((frame) => frame.params.nonce === 'early'),
      'heartbeat echo',
    );
    await broker.detach(brokerScope(second));
    await expect(stalled).rejects.toThrow(ControllerCancelled);
  });

  it('still disconnects exactly once when the socket closes while its attach is held back', async () => {
    const { broker } = await start({ sendWaitMilliseconds: 10_000 });
    const first = await registerTicket();
    const oldSocket = await openSocket(ticketProtocols(first.ticket));
    await gateway?.connections[0]?.ready;
    oldSocket.pause();
    const stalled = broker.dispatch({
      scope: brokerScope(first),
      action: 'controller.noop',
      arguments: { blob: 'x'.repeat(16 * 1024 * 1024) },
    });
    await until(() => broker.pendingCount === 1, 'stalled command');
    const second = await registerTicket();
    const freshSocket = await openSocket(ticketProtocols(second.ticket));
    freshSocket.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(broker.disconnectCalls).toBe(0);

    oldSocket.resume();
    await gateway?.connections[1]?.closed;
    expect(broker.disconnectCalls).toBe(1);
    // Parked, not detached: the lane stays registered and the in-flight command stays pending.
    expect(broker.select(brokerScope(second), 'controller.noop')).toBeNull();
    expect(
      broker.laneRegistered({
        sessionId: SESSION,
        principalId: first.scope.principal_id,
        transportFamily: 'local-api',
      }),
    ).toBe(true);
    expect(broker.pendingCount).toBe(1);
    await broker.reset();
    await expect(stalled).rejects.toThrow(ControllerCancelled);
  });

  it('tears down with exactly one recoverable disconnect when the socket closes', async () => {
    const { broker } = await start();
    const registration = await registerTicket();
    const socket = await openSocket(ticketProtocols(registration.ticket));
    await gateway?.connections[0]?.ready;
    const scope = brokerScope(registration);
    expect(broker.select(scope, 'controller.noop')).not.toBeNull();
    socket.close();
    await gateway?.connections[0]?.closed;
    expect(broker.disconnectCalls).toBe(1);
    expect(broker.select(scope, 'controller.noop')).toBeNull();
    expect(
      broker.laneRegistered({
        sessionId: SESSION,
        principalId: scope.principalId,
        transportFamily: 'local-api',
      }),
    ).toBe(true);
  });
});

describe('controller lifecycle over real sockets', () => {
  function client(
    handlers: ConstructorParameters<typeof BrowserControllerClient>[0]['handlers'] = {},
  ) {
    return new BrowserControllerClient({
      baseUrl: gateway?.baseUrl ?? '',
      apiKey: API_KEY,
      sessionId: SESSION,
      controllerId: 'ext-1',
      browserProfileId: 'chrome-default',
      capabilities: ['controller.noop', 'browser_snapshot'],
      handlers,
    });
  }

  it('completes a command started on the old socket after a same-identity reconnect', async () => {
    const { broker } = await start();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const controller = client({
      'controller.noop': async () => {
        await gate;
        return { reconnected: true };
      },
    });
    await controller.connect();
    const scope = broker.scopeForSession({
      sessionId: SESSION,
      principalId: controller.registration?.scope.principal_id,
      transportFamily: 'local-api',
    });
    expect(scope).not.toBeNull();
    const running = broker.dispatch({ scope: scope!, action: 'controller.noop' });
    await until(() => broker.pendingCount === 1, 'pending command');
    await controller.reconnect();
    release();
    await expect(running).resolves.toEqual({ reconnected: true });
    await controller.close();
  });

  it('delivers a result that finished while the client was between sockets', async () => {
    const { broker } = await start();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finished = () => {};
    const handlerDone = new Promise<void>((resolve) => {
      finished = resolve;
    });
    let registrations = 0;
    const controller = new BrowserControllerClient({
      baseUrl: gateway?.baseUrl ?? '',
      apiKey: API_KEY,
      sessionId: SESSION,
      controllerId: 'ext-1',
      browserProfileId: 'chrome-default',
      capabilities: ['controller.noop'],
      handlers: {
        'controller.noop': async () => {
          await gate;
          setImmediate(finished);
          return 'answered while away';
        },
      },
      // The second registration happens with the old socket already closed: let the command
      // finish right then, before a new socket exists.
      fetch: async (...args) => {
        registrations += 1;
        if (registrations === 2) {
          release();
          await handlerDone;
        }
        return fetch(...args);
      },
    });
    await controller.connect();
    const scope = broker.scopeForSession({
      sessionId: SESSION,
      principalId: controller.registration?.scope.principal_id,
      transportFamily: 'local-api',
    });
    const running = broker.dispatch({ scope: scope!, action: 'controller.noop' });
    await until(() => broker.pendingCount === 1, 'pending command');
    await controller.reconnect();
    await expect(running).resolves.toBe('answered while away');
    await controller.close();
  });

  it('makes explicit detach hard and ignores a stale socket (result, heartbeat, detach)', async () => {
    const { broker } = await start();
    const first = await registerTicket();
    const staleSocket = await openSocket(ticketProtocols(first.ticket));
    const staleFrames = collect(staleSocket);
    await gateway?.connections[0]?.ready;
    const scope = brokerScope(first);
    const running = broker.dispatch({ scope, action: 'controller.noop' });
    await until(() => staleFrames.some((frame) => frame.method === FRAME_COMMAND), 'command');
    const command = staleFrames.find((frame) => frame.method === FRAME_COMMAND);

    const second = await registerTicket();
    const freshSocket = await openSocket(ticketProtocols(second.ticket));
    const freshFrames = collect(freshSocket);
    await gateway?.connections[1]?.ready;

    staleSocket.send(
      JSON.stringify({
        method: FRAME_RESULT,
        params: { command_id: command?.params.command_id, ok: true, result: 'stale' },
      }),
    );
    staleSocket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'stale' } }));
    staleSocket.send(JSON.stringify({ method: FRAME_DETACH, params: {} }));
    // A fresh-socket heartbeat proves the stale frames, sent earlier, were already handled.
    freshSocket.send(JSON.stringify({ method: FRAME_HEARTBEAT, params: { nonce: 'fresh' } }));
    await until(() => freshFrames.some((frame) => frame.params.nonce === 'fresh'), 'fresh echo');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(staleFrames.filter((frame) => frame.method !== FRAME_COMMAND)).toEqual([]);
    expect(broker.pendingCount).toBe(1);

    freshSocket.send(JSON.stringify({ method: FRAME_DETACH, params: {} }));
    await expect(running).rejects.toThrow(ControllerCancelled);
    await until(() => freshFrames.some((frame) => frame.method === FRAME_DETACH), 'detach reply');
    expect(freshFrames.find((frame) => frame.method === FRAME_DETACH)?.params).toEqual({
      ok: true,
    });
    expect(
      broker.laneRegistered({
        sessionId: SESSION,
        principalId: scope.principalId,
        transportFamily: 'local-api',
      }),
    ).toBe(false);
  });

  it('lets the controller cancel the command of a tool call', async () => {
    const { broker } = await start();
    const cancelled: Array<string | null> = [];
    const controller = new BrowserControllerClient({
      baseUrl: gateway?.baseUrl ?? '',
      apiKey: API_KEY,
      sessionId: SESSION,
      controllerId: 'ext-1',
      browserProfileId: 'chrome-default',
      capabilities: ['controller.noop'],
      handlers: {
        'controller.noop': (_args, { signal }) =>
          new Promise((resolve) => signal.addEventListener('abort', resolve)),
      },
      onCancel: (_commandId, toolCallId) => cancelled.push(toolCallId),
    });
    await controller.connect();
    const scope = broker.scopeForSession({
      sessionId: SESSION,
      principalId: controller.registration?.scope.principal_id,
      transportFamily: 'local-api',
    });
    const running = broker.dispatch({
      scope: scope!,
      action: 'controller.noop',
      toolCallId: 'call-42',
    });
    await until(() => broker.pendingCount === 1, 'pending command');
    controller.cancel('call-42');
    await expect(running).rejects.toThrow(ControllerCancelled);
    await until(() => cancelled.length === 1, 'cancel frame');
    expect(cancelled).toEqual(['call-42']);
    await controller.close();
  });

  it('tells the client when the server drops its socket, and reconnects with a fresh ticket', async () => {
    const { broker } = await start();
    const disconnects: number[] = [];
    const controller = new BrowserControllerClient({
      baseUrl: gateway?.baseUrl ?? '',
      apiKey: API_KEY,
      sessionId: SESSION,
      controllerId: 'ext-1',
      browserProfileId: 'chrome-default',
      capabilities: ['controller.noop'],
      handlers: { 'controller.noop': () => 'back' },
      onDisconnect: (code) => disconnects.push(code),
    });
    await controller.connect();
    const firstTicket = controller.registration?.ticket;
    gateway?.connections[0]?.socket.close(1001, 'going away');
    await until(() => disconnects.length === 1, 'disconnect callback');
    expect(disconnects).toEqual([1001]);
    expect(controller.connected).toBe(false);

    await controller.reconnect();
    expect(controller.registration?.ticket).not.toBe(firstTicket);
    const scope = broker.scopeForSession({
      sessionId: SESSION,
      principalId: controller.registration?.scope.principal_id,
      transportFamily: 'local-api',
    });
    await expect(broker.dispatch({ scope: scope!, action: 'controller.noop' })).resolves.toBe(
      'back',
    );
    await controller.close();
    expect(disconnects).toHaveLength(1);
  });

  it('reports a refused registration with its status and code', async () => {
    await start();
    const stranger = new BrowserControllerClient({
      baseUrl: gateway?.baseUrl ?? '',
      apiKey: API_KEY,
      sessionId: 'no-such-session',
      controllerId: 'ext-1',
      browserProfileId: 'chrome-default',
      capabilities: ['controller.noop'],
      handlers: {},
    });
    const error = await stranger.connect().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ControllerConnectFailed);
    expect(error).toMatchObject({ status: 403, errorCode: REGISTER_ERROR_CODES.sessionForbidden });
  });

  it('routes a browser_snapshot tool call to the extension end to end, never calling legacy', async () => {
    for (const peerAddress of [undefined, '192.0.2.10']) {
      const { broker } = await start(peerAddress ? { peerAddress } : {});
      const seenArguments: unknown[] = [];
      const controller = client({
        browser_snapshot: (args) => {
          seenArguments.push(args);
          return { title: 'Example Domain', url: 'https://example.test/', refs: [] };
        },
      });
      await controller.connect();
      const family = controller.registration?.scope.transport_family;
      expect(family).toBe(peerAddress ? 'remote-api' : 'local-api');
      let legacyCalls = 0;
      const result = await routeBrowserTool({
        action: 'browser_snapshot',
        arguments: { include: 'accessibility' },
        fallback: () => {
          legacyCalls += 1;
          return 'legacy';
        },
        broker,
        enabled: true,
        identity: {
          sessionId: SESSION,
          principalId: controller.registration?.scope.principal_id,
          transportFamily: family,
        },
        toolCallId: 'call-1',
      });
      expect(result).toBe(
        '{"title": "Example Domain", "url": "https://example.test/", "refs": []}',
      );
      expect(seenArguments).toEqual([{ include: 'accessibility' }]);
      expect(legacyCalls).toBe(0);
      await controller.close();
      await gateway?.close();
      gateway = undefined;
    }
  });
  it('routes an agent turn of an HTTP request to the lane its controller registered, server-side identity only', async () => {
    let legacyCalls = 0;
    const seen: Array<{ args: unknown; toolCallId: string | null }> = [];
    await start({
      extend: (app, broker) => {
        // What the gateway does: stamp the request's identity, then run the agent turn inside it.
        app.use(browserControlIdentityMiddleware({ apiKey: () => API_KEY }));
        app.post('/turn', async (context) => {
          const result = await withBrowserControlIdentity(
            { sessionId: SESSION, toolCallId: 'call-e2e' },
            () =>
              routedBrowserHandler({
                action: 'browser_snapshot',
                arguments: { include: 'accessibility' },
                fallback: () => {
                  legacyCalls += 1;
                  return 'legacy snapshot';
                },
                broker,
                flags: () => ({ enabled: true, developerMode: false }),
              }),
          );
          return context.json({ result });
        });
      },
    });
    const turn = async () => {
      const response = await fetch(`${gateway?.baseUrl}/turn`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      return ((await response.json()) as { result: unknown }).result;
    };
    // No extension registered for the lane yet: the legacy backend keeps working.
    expect(await turn()).toBe('legacy snapshot');
    expect(legacyCalls).toBe(1);

    const controller = client({
      browser_snapshot: (args, { toolCallId }) => {
        seen.push({ args, toolCallId });
        return { title: 'Example Domain', url: 'https://example.test/', refs: [] };
      },
    });
    await controller.connect();
    expect(await turn()).toBe(
      '{"title": "Example Domain", "url": "https://example.test/", "refs": []}',
    );
    expect(seen).toEqual([{ args: { include: 'accessibility' }, toolCallId: 'call-e2e' }]);
    expect(legacyCalls).toBe(1);
    await controller.close();
  });
});
