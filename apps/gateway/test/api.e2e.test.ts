import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type StartedGateway, startGateway, upgradeRefusal } from './gateway-process.js';

const KEY = 'gw-test-api-key-0123456789';

async function homeWith(config: string) {
  const home = (await tempHome()).path;
  if (config) await writeFile(path.join(home, 'config.yaml'), config);
  return home;
}

async function keyedGateway(extraConfig = '') {
  const home = await homeWith(extraConfig);
  await writeFile(path.join(home, '.env'), `API_SERVER_KEY=${KEY}\n`);
  return startGateway({ home });
}

describe('auth, limits and errors', () => {
  it('requires the bearer key on every route but the liveness probes', async () => {
    const gateway = await keyedGateway();
    expect((await gateway.json('/health')).status).toBe(200);
    expect((await gateway.json('/v1/health')).status).toBe(200);
    for (const pathname of [
      '/health/detailed',
      '/v1/models',
      '/v1/skills',
      '/v1/toolsets',
      '/api/sessions',
      '/v1/capabilities',
    ]) {
      const missing = await gateway.json(pathname);
      expect(missing.status, pathname).toBe(401);
      expect(missing.body, pathname).toMatchObject({
        error: { code: 'invalid_api_key', type: 'authentication_error', param: null },
      });
      expect((await gateway.json(pathname, { key: `${KEY}x` })).status, pathname).toBe(401);
      expect(
        (await gateway.json(pathname, { headers: { authorization: KEY } })).status,
        pathname,
      ).toBe(401);
      expect((await gateway.json(pathname, { key: KEY })).status, pathname).toBe(200);
    }
    const post = await gateway.json('/api/sessions', { method: 'POST', json: {} });
    expect(post.status).toBe(401);
    const list = await gateway.json<{ data: unknown[] }>('/api/sessions', { key: KEY });
    expect(list.body.data).toEqual([]);
  });

  it('refuses a body over api_server.max_request_bytes with 413 and creates nothing', async () => {
    const home = (await tempHome()).path;
    await writeFile(path.join(home, 'config.yaml'), 'api_server:\n  max_request_bytes: 2048\n');
    const gateway = await startGateway({ home });
    const big = await gateway.json('/api/sessions', {
      method: 'POST',
      json: { title: 'x', pad: 'y'.repeat(4000) },
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: { code: 'request_too_large' } });
    // The same body without a declared length (chunked) is cut while streaming.
    const chunked = await gateway.json('/api/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"title":"x","pad":"${'z'.repeat(4000)}"}`));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await gateway.json<{ data: unknown[] }>('/api/sessions')).body.data).toEqual([]);
  });

  it('answers unknown routes with the OpenAI error shape', async () => {
    const gateway = await startGateway();
    const missing = await gateway.json('/v2/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: {
        message: 'No route for GET /v2/nothing',
        type: 'not_found_error',
        param: null,
        code: 'not_found',
      },
    });
  });
  it('answers a known route asked with another method 405 with Allow, under a profile prefix too, and changes nothing', async () => {
    const gateway = await startGateway();
    const wrong = await gateway.json('/v1/chat/completions');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(wrong.body).toEqual({
      error: {
        message: 'GET is not allowed on /v1/chat/completions (allowed: POST)',
        type: 'invalid_request_error',
        param: null,
        code: 'method_not_allowed',
      },
    });
    const sessions = await gateway.json('/api/sessions', { method: 'PUT', json: { title: 'x' } });
    expect(sessions.status).toBe(405);
    expect(sessions.headers.get('allow')).toBe('GET, POST, HEAD');
    const session = await gateway.json('/p/default/api/sessions/some-id', { method: 'POST' });
    expect(session.status).toBe(405);
    expect(session.headers.get('allow')).toBe('GET, PATCH, DELETE, HEAD');
    expect((await gateway.json('/v1/runs/abc/nothing', { method: 'POST' })).status).toBe(404);
    expect((await gateway.json<{ data: unknown[] }>('/api/sessions')).body.data).toEqual([]);
  });
});

describe('information routes', () => {
  it('lists the model, skills, toolsets and capabilities', async () => {
    const home = (await tempHome()).path;
    await mkdir(path.join(home, 'skills', 'writing', 'release-notes'), { recursive: true });
    await writeFile(
      path.join(home, 'skills', 'writing', 'release-notes', 'SKILL.md'),
      '---\nname: release-notes\ndescription: Write release notes from a changelog\n---\n# Release notes\n',
    );
    await writeFile(path.join(home, 'config.yaml'), 'agent:\n  disabled_toolsets: [terminal]\n');
    const gateway = await startGateway({ home });
    const models = await gateway.json<{ object: string; data: { id: string; object: string }[] }>(
      '/v1/models',
    );
    expect(models.body).toMatchObject({
      object: 'list',
      data: [{ id: 'hermes-agent', object: 'model' }],
    });
    const skills = await gateway.json<{ data: unknown[] }>('/v1/skills');
    expect(skills.body.data).toEqual([
      {
        name: 'release-notes',
        category: 'writing',
        description: 'Write release notes from a changelog',
      },
    ]);
    const toolsets = await gateway.json<{
      platform: string;
      data: { name: string; enabled: boolean; reason_code: string; tools: string[] }[];
    }>('/v1/toolsets');
    expect(toolsets.body.platform).toBe('api_server');
    const terminal = toolsets.body.data.find((toolset) => toolset.name === 'terminal');
    expect(terminal).toMatchObject({
      enabled: false,
      reason_code: 'disabled',
      tools: ['terminal'],
    });
    expect(toolsets.body.data.find((toolset) => toolset.name === 'file')).toMatchObject({
      enabled: true,
      reason_code: 'ready',
    });
    const capabilities = await gateway.json<{
      features: { browser_extension_control: { enabled: boolean; protocol_version: number } };
      endpoints: Record<string, { path: string }>;
    }>('/v1/capabilities');
    expect(capabilities.body.features.browser_extension_control).toMatchObject({
      enabled: false,
      protocol_version: 1,
    });
    expect(capabilities.body.endpoints.browser_control_register?.path).toBe(
      '/v1/browser-control/register',
    );
    const detailed = await gateway.json<Record<string, unknown>>('/health/detailed');
    expect(detailed.body).toMatchObject({
      status: 'ok',
      profile: 'default',
      model_configured: false,
      active_turns: 0,
    });
  });
});

describe('browser control and artifacts', () => {
  it('registers a controller for an existing session, upgrades the socket with the ticket, and moves an artifact once', async () => {
    const gateway = await keyedGateway('browser:\n  extension_control:\n    enabled: true\n');
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
      key: KEY,
    });
    const register = (json: unknown, key = KEY) =>
      gateway.json<{
        ticket: string;
        ws_path: string;
        scope: { session_id: string; transport_family: string };
        error?: { code: string };
      }>('/v1/browser-control/register', { method: 'POST', json, key });
    const body = {
      protocol_version: 1,
      session_id: session.body.session.id,
      controller_id: 'ext-1',
      browser_profile_id: 'chrome',
      capabilities: ['browser_snapshot'],
    };
    expect((await register(body, 'wrong-key')).status).toBe(401);
    expect((await register({ ...body, session_id: 'nope' })).body.error?.code).toBe(
      'browser_control_session_forbidden',
    );
    expect((await register({ ...body, protocol_version: 2 })).body.error?.code).toBe(
      'browser_control_protocol_unsupported',
    );
    const ok = await register(body);
    expect(ok.status).toBe(201);
    expect(ok.body.scope).toMatchObject({
      session_id: session.body.session.id,
      transport_family: 'local-api',
    });

    const wsUrl = `${gateway.url.replace('http', 'ws')}${ok.body.ws_path}`;
    const socket = new WebSocket(wsUrl, [
      'hermes-browser-control-v1',
      `hermes-browser-control-ticket.${ok.body.ticket}`,
    ]);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    expect(socket.protocol).toBe('hermes-browser-control-v1');
    const echo = new Promise<unknown>((resolve) =>
      socket.once('message', (data) => resolve(JSON.parse(String(data)))),
    );
    socket.send(
      JSON.stringify({ method: 'browser.controller.heartbeat', params: { nonce: 'n-1' } }),
    );
    expect(await echo).toEqual({
      method: 'browser.controller.heartbeat',
      params: { nonce: 'n-1', ok: true },
    });
    socket.close();
    // The ticket was single-use.
    const replay = new WebSocket(wsUrl, [
      'hermes-browser-control-v1',
      `hermes-browser-control-ticket.${ok.body.ticket}`,
    ]);
    const refused = await new Promise<number>((resolve) =>
      replay.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0)),
    );
    expect(refused).toBe(401);

    const upload = await gateway.json<{ artifact_id: string; download_path: string }>(
      '/v1/artifacts/upload',
      {
        method: 'POST',
        key: KEY,
        headers: { 'content-type': 'text/plain', 'x-artifact-filename': 'note.txt' },
        body: 'artifact bytes',
      },
    );
    expect(upload.status).toBe(201);
    const download = await gateway.request(upload.body.download_path, { key: KEY });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('artifact bytes');
    expect((await gateway.request(upload.body.download_path, { key: KEY })).status).toBe(404);
  });

  it('keeps browser control off by default (404) and needs a key for it (403)', async () => {
    const gateway = await startGateway();
    const off = await gateway.json('/v1/browser-control/register', { method: 'POST', json: {} });
    expect(off.status).toBe(404);
    const home = (await tempHome()).path;
    await writeFile(
      path.join(home, 'config.yaml'),
      'browser:\n  extension_control:\n    enabled: true\n',
    );
    const keyless = await startGateway({ home });
    const noKey = await keyless.json('/v1/browser-control/register', { method: 'POST', json: {} });
    expect(noKey.status).toBe(403);
    expect(noKey.body).toMatchObject({ error: { code: 'browser_control_auth_required' } });
  });

  it('answers every browser-control, artifact and controller-socket refusal in the OpenAI error shape the rest of the API uses', async () => {
    const enabled = 'browser:\n  extension_control:\n    enabled: true\n';
    const keyed = await keyedGateway(enabled);
    const keyless = await startGateway({ home: await homeWith(enabled) });
    const off = await keyedGateway();
    const session = await keyed.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
      key: KEY,
    });
    const registration = {
      protocol_version: 1,
      session_id: session.body.session.id,
      controller_id: 'ext-1',
      browser_profile_id: 'chrome',
      capabilities: ['browser_snapshot'],
    };
    const png = { 'content-type': 'image/png', 'x-artifact-filename': 'shot.png' };
    const unknownArtifact = '0123456789abcdef0123456789abcdef';
    type Probe = {
      gateway: StartedGateway;
      label: string;
      path: string;
      method?: string;
      key?: string;
      body?: string;
      headers?: Record<string, string>;
      status: number;
      code: string;
      param?: string | null;
      type?: string;
    };
    const register = (label: string, body: unknown, status: number, code: string) => ({
      gateway: keyed,
      label,
      path: '/v1/browser-control/register',
      method: 'POST',
      key: KEY,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      status,
      code,
    });
    const probes: Probe[] = [
      { ...register('wrong key', registration, 401, 'invalid_api_key'), key: 'wrong' },
      register('not JSON', '{', 400, 'invalid_json'),
      register('not an object', [], 400, 'invalid_request_body'),
      {
        ...register('protocol 2', { ...registration, protocol_version: 2 }, 400, ''),
        code: 'browser_control_protocol_unsupported',
        param: 'protocol_version',
      },
      {
        ...register('no controller id', { ...registration, controller_id: ' ' }, 400, ''),
        code: 'browser_control_invalid_registration',
        param: 'controller_id',
      },
      {
        ...register('unknown session', { ...registration, session_id: 'nope' }, 403, ''),
        code: 'browser_control_session_forbidden',
        param: 'session_id',
      },
      {
        ...register('no capability', { ...registration, capabilities: [] }, 400, ''),
        code: 'browser_control_no_capabilities',
        param: 'capabilities',
      },
      register('too large', 'x'.repeat(70_000), 413, 'request_too_large'),
      {
        gateway: keyless,
        label: 'register without a key configured',
        path: '/v1/browser-control/register',
        method: 'POST',
        body: JSON.stringify(registration),
        status: 403,
        code: 'browser_control_auth_required',
        type: 'gateway_auth_error',
      },
      {
        gateway: off,
        label: 'register while disabled',
        path: '/v1/browser-control/register',
        method: 'POST',
        key: KEY,
        body: JSON.stringify(registration),
        status: 404,
        code: 'browser_control_disabled',
      },
      {
        gateway: keyed,
        label: 'upload, wrong key',
        path: '/v1/artifacts/upload',
        method: 'POST',
        key: 'wrong',
        headers: png,
        body: 'x',
        status: 401,
        code: 'invalid_api_key',
      },
      {
        gateway: keyless,
        label: 'upload without a key configured',
        path: '/v1/artifacts/upload',
        method: 'POST',
        headers: png,
        body: 'x',
        status: 403,
        code: 'browser_control_auth_required',
        type: 'gateway_auth_error',
      },
      {
        gateway: off,
        label: 'upload while disabled',
        path: '/v1/artifacts/upload',
        method: 'POST',
        key: KEY,
        headers: png,
        body: 'x',
        status: 404,
        code: 'browser_control_disabled',
      },
      {
        gateway: keyed,
        label: 'upload without a filename',
        path: '/v1/artifacts/upload',
        method: 'POST',
        key: KEY,
        headers: { 'content-type': 'image/png' },
        body: 'x',
        status: 400,
        code: 'artifact_rejected',
      },
      {
        gateway: keyed,
        label: 'upload of a type off the allowlist',
        path: '/v1/artifacts/upload',
        method: 'POST',
        key: KEY,
        headers: { ...png, 'content-type': 'text/x-evil' },
        body: 'x',
        status: 415,
        code: 'artifact_mime_rejected',
      },
      {
        gateway: keyed,
        label: 'empty upload',
        path: '/v1/artifacts/upload',
        method: 'POST',
        key: KEY,
        headers: png,
        body: '',
        status: 400,
        code: 'artifact_rejected',
      },
      {
        gateway: keyed,
        label: 'download of an unknown artifact',
        path: `/v1/artifacts/download/${unknownArtifact}`,
        key: KEY,
        status: 404,
        code: 'artifact_not_found',
      },
      {
        gateway: keyed,
        label: 'download of a malformed id',
        path: '/v1/artifacts/download/not-hex',
        key: KEY,
        status: 400,
        code: 'artifact_not_found',
      },
      {
        gateway: keyless,
        label: 'download without a key configured',
        path: `/v1/artifacts/download/${unknownArtifact}`,
        status: 403,
        code: 'browser_control_auth_required',
        type: 'gateway_auth_error',
      },
    ];
    const typeOf: Record<number, string> = {
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'invalid_request_error',
      415: 'invalid_request_error',
    };
    const expectShape = (
      label: string,
      body: unknown,
      probe: Pick<Probe, 'status' | 'code' | 'param' | 'type'>,
    ) => {
      const error = (body as { error?: Record<string, unknown> }).error ?? {};
      expect(Object.keys(error).sort(), label).toEqual(['code', 'message', 'param', 'type']);
      expect(error, label).toMatchObject({
        type: probe.type ?? typeOf[probe.status],
        param: probe.param ?? null,
        code: probe.code,
      });
      expect(typeof error.message, label).toBe('string');
    };
    for (const probe of probes) {
      const response = await probe.gateway.json(probe.path, {
        method: probe.method ?? 'GET',
        ...(probe.key ? { key: probe.key } : {}),
        ...(probe.headers ? { headers: probe.headers } : {}),
        ...(probe.body !== undefined ? { body: probe.body } : {}),
      });
      expect(response.status, probe.label).toBe(probe.status);
      expectShape(probe.label, response.body, probe);
    }

    // The controller socket's refusals, answered before any upgrade.
    const sockets = [
      {
        label: 'a ticket never minted',
        gateway: keyed,
        protocols: ['hermes-browser-control-ticket.nope'],
        status: 401,
        code: 'browser_control_unauthorized',
      },
      {
        label: 'no ticket',
        gateway: keyed,
        protocols: [],
        status: 401,
        code: 'browser_control_unauthorized',
      },
      {
        label: 'socket while disabled',
        gateway: off,
        protocols: ['hermes-browser-control-ticket.nope'],
        status: 404,
        code: 'browser_control_disabled',
      },
    ];
    for (const socket of sockets) {
      const refused = await upgradeRefusal(
        `${socket.gateway.url}/v1/browser-control/ws`,
        socket.protocols,
      );
      expect(refused.status, socket.label).toBe(socket.status);
      expectShape(socket.label, JSON.parse(refused.body), socket);
    }
    // An upgrade on a path nobody serves is a 404 like any unknown route, not a dropped socket.
    const unknown = await upgradeRefusal(`${keyed.url}/v1/no-such-socket`);
    expect(unknown.status).toBe(404);
    expectShape('unknown upgrade path', JSON.parse(unknown.body), {
      status: 404,
      code: 'not_found',
    });
  });
});
