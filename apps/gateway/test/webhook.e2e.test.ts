import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { queryGatewayStatus } from '@hermes/control-socket';
import { startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { signV1, signV2 } from '../src/platforms/webhook/signature.js';
import { type FakeTelegram, startFakeTelegram } from './fake-telegram.js';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import { sendRawBytes, splitResponses } from './http-fuzz/client.js';
import { echoScript } from './model-scripts.js';

const SECRET = 'whsec-0123456789abcdef';

async function webhookGateway(
  yaml: string,
  extra: { telegram?: FakeTelegram; dotenv?: string } = {},
) {
  const model = await startModelServer({ script: echoScript(20) });
  const home = (await tempHome()).path;
  await writeConfig(home, modelConfig(model.baseUrl, yaml));
  if (extra.dotenv !== undefined) await writeFile(path.join(home, '.env'), extra.dotenv);
  const gateway = await startGateway({
    home,
    env: extra.telegram ? { TELEGRAM_BOT_TOKEN: '1:tok-abcdefghijklmnopqrstu' } : {},
  });
  let url: string | undefined;
  for (let index = 0; index < 100 && !url; index += 1) {
    url = ((await queryGatewayStatus(home)) as { webhook_url?: string } | null)?.webhook_url;
    if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const post = (route: string, body: string, headers: Record<string, string> = {}, prefix = '') =>
    fetch(`${url}${prefix}/webhooks/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  return { gateway, home, model, url: url as string, post };
}

const ROUTES = `platforms:
  webhook:
    enabled: true
    port: 0
    max_body_bytes: 2048
    routes:
      github:
        secret: ${SECRET}
        events: [push]
        prompt: "Push to {payload.repository.name} by {payload.pusher}"
        rate_limit: 3
      off:
        secret: ${SECRET}
        enabled: false
      nosecret:
        deliver_only: true
      work_only:
        secret: ${SECRET}
        profile: work
      notify:
        secret: ${SECRET}
        deliver_only: true
`;

describe('webhook adapter', () => {
  it('checks in the reference order: profile, route, binding, enabled, size, secret, signature, rate, parse, event, idempotency', async () => {
    const { post } = await webhookGateway(ROUTES);
    const body = JSON.stringify({ repository: { name: 'hermes' }, pusher: 'ada' });
    const now = Math.floor(Date.now() / 1000);
    const signed = (text: string, id: string) => ({
      'x-webhook-signature-v2': signV2(SECRET, text, now),
      'x-github-event': 'push',
      'x-github-delivery': id,
    });

    const foreign = await post('github', body, signed(body, 'd0'), '/p/other');
    expect([foreign.status, await foreign.json()]).toEqual([
      404,
      { error: 'Unknown or unconfigured profile' },
    ]);
    const unknown = await post('nope', body, signed(body, 'd0'));
    expect([unknown.status, await unknown.json()]).toEqual([404, { error: 'Unknown route: nope' }]);
    // Bound to another profile: answered exactly like an unknown route.
    const bound = await post('work_only', body, signed(body, 'd0'));
    expect([bound.status, await bound.json()]).toEqual([
      404,
      { error: 'Unknown route: work_only' },
    ]);
    const disabled = await post('off', body, signed(body, 'd0'));
    expect([disabled.status, await disabled.json()]).toEqual([
      403,
      { error: 'Route disabled: off' },
    ]);
    const big = 'x'.repeat(4096);
    const tooLarge = await post('github', big, signed(big, 'd0'));
    expect([tooLarge.status, await tooLarge.json()]).toEqual([413, { error: 'Payload too large' }]);
    const noSecret = await post('nosecret', body);
    expect([noSecret.status, await noSecret.json()]).toEqual([
      403,
      { error: 'Webhook route is missing an HMAC secret' },
    ]);
    const badSignature = await post('github', body, {
      ...signed(body, 'd0'),
      'x-webhook-signature-v2': signV2('wrong-secret', body, now),
    });
    expect([badSignature.status, await badSignature.json()]).toEqual([
      401,
      { error: 'Invalid signature' },
    ]);
    const stale = await post('github', body, {
      ...signed(body, 'd0'),
      'x-webhook-signature-v2': signV2(SECRET, body, now - 301),
    });
    expect(stale.status).toBe(401);

    const ignored = await post('github', body, {
      ...signed(body, 'd1'),
      'x-github-event': 'issues',
    });
    expect(ignored.status).toBe(200);
    expect(await ignored.json()).toMatchObject({ status: 'ignored' });
    const unparseable = await post('github', '{not json', signed('{not json', 'd2'));
    expect([unparseable.status, await unparseable.json()]).toEqual([
      400,
      { error: 'Cannot parse body' },
    ]);
    // Rate limit: 3 per window; the two above that passed the signature count.
    expect((await post('github', body, signed(body, 'd3'))).status).toBe(202);
    const limited = await post('github', body, signed(body, 'd4'));
    expect([limited.status, await limited.json()]).toEqual([429, { error: 'Rate limit exceeded' }]);
  });

  it('runs the rendered prompt as a turn once per delivery id (a repeat is a duplicate), V1 accepted with a deprecation log', async () => {
    const { post, model, gateway } = await webhookGateway(ROUTES);
    const body = JSON.stringify({ repository: { name: 'hermes' }, pusher: 'ada' });
    const headers = {
      'x-webhook-signature': signV1(SECRET, body),
      'x-github-event': 'push',
      'x-github-delivery': 'delivery-1',
    };
    const first = await post('github', body, headers);
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({
      status: 'accepted',
      route: 'github',
      delivery_id: 'delivery-1',
    });
    const again = await post('github', body, headers);
    expect(await again.json()).toEqual({ status: 'duplicate', delivery_id: 'delivery-1' });
    for (let index = 0; index < 100 && model.modelRequests.length === 0; index += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.modelRequests).toHaveLength(1);
    expect(JSON.stringify(model.modelRequests[0]?.body)).toContain('Push to hermes by ada');
    const log = gateway.process.stderr();
    expect(log).toContain('deprecated x-webhook-signature header');
    expect(log).toContain('echo: Push to hermes by ada'); // the reply went to the route's log target
  });

  it("reads a route's secret from the profile's .env by secret_env; unset, the route refuses every delivery; secret and secret_env together are refused", async () => {
    const envSecret = 'whsec-from-dotenv-42';
    const { post, gateway } = await webhookGateway(
      `platforms:
  webhook:
    enabled: true
    port: 0
    routes:
      fromenv:
        secret_env: HOOK_SECRET
        deliver_only: true
      unset:
        secret_env: NOT_IN_DOTENV
        deliver_only: true
      both:
        secret: ${SECRET}
        secret_env: HOOK_SECRET
        deliver_only: true
`,
      { dotenv: `HOOK_SECRET=${envSecret}\n` },
    );
    const body = JSON.stringify({ note: 'hi' });
    const now = Math.floor(Date.now() / 1000);
    const signedWith = (secret: string, id: string) => ({
      'x-webhook-signature-v2': signV2(secret, body, now),
      'x-github-delivery': id,
    });
    const taken = await post('fromenv', body, signedWith(envSecret, 'e1'));
    expect([taken.status, await taken.json()]).toEqual([
      200,
      expect.objectContaining({ status: 'delivered' }),
    ]);
    // The variable's name is no secret: a delivery signed with it, or with another secret, is not.
    for (const wrong of ['HOOK_SECRET', SECRET]) {
      const refused = await post('fromenv', body, signedWith(wrong, `e-${wrong}`));
      expect([refused.status, await refused.json()]).toEqual([401, { error: 'Invalid signature' }]);
    }
    const unset = await post('unset', body, signedWith('', 'e2'));
    expect([unset.status, await unset.json()]).toEqual([
      403,
      { error: 'Webhook route is missing an HMAC secret' },
    ]);
    const both = await post('both', body, signedWith(SECRET, 'e3'));
    expect([both.status, await both.json()]).toEqual([404, { error: 'Unknown route: both' }]);
    const log = gateway.process.stderr();
    expect(log).toContain('secret_env NOT_IN_DOTENV is not set');
    expect(log).toContain('webhook route both: set secret or secret_env, not both');
    expect(log).not.toContain(envSecret);
  });

  it('deliver_only sends the rendered payload straight to Telegram; a failed delivery is 502', async () => {
    const telegram = await startFakeTelegram({ token: '1:tok-abcdefghijklmnopqrstu' });
    try {
      const yaml = `platforms:
  telegram:
    enabled: true
    api_base_url: ${telegram.baseUrl}
    poll_timeout: 1
  webhook:
    enabled: true
    port: 0
    routes:
      alert:
        secret: ${SECRET}
        deliver_only: true
        deliver: telegram
        deliver_extra: { chat_id: 4242 }
        prompt: "Alert: {payload.text}"
`;
      const { post } = await webhookGateway(yaml, { telegram });
      const body = '{"text":"disk full"}';
      const now = Math.floor(Date.now() / 1000);
      const sent = await post('alert', body, {
        'x-webhook-signature-v2': signV2(SECRET, body, now),
        'x-request-id': 'a1',
      });
      expect([sent.status, await sent.json()]).toEqual([
        200,
        { status: 'delivered', delivery_id: 'a1' },
      ]);
      expect(telegram.sent.at(-1)).toMatchObject({ chatId: '4242', text: 'Alert: disk full' });
      telegram.mode = 'server_error';
      // Another delivery (the same signed one again would be a duplicate).
      const again = '{"text":"disk still full"}';
      const failed = await post('alert', again, {
        'x-webhook-signature-v2': signV2(SECRET, again, now),
        'x-request-id': 'a2',
      });
      expect([failed.status, await failed.json()]).toEqual([502, { error: 'Delivery failed' }]);
      // Not delivered, so not taken: the sender's retry is delivered, not a duplicate.
      telegram.mode = 'ok';
      const retried = await post('alert', again, {
        'x-webhook-signature-v2': signV2(SECRET, again, now),
        'x-request-id': 'a2',
      });
      expect([retried.status, await retried.json()]).toEqual([
        200,
        { status: 'delivered', delivery_id: 'a2' },
      ]);
    } finally {
      await telegram.close();
    }
  });

  it('refuses paths and prefixes that do not decode, blank prefixes and broken targets with a 4xx', async () => {
    const { url, post } = await webhookGateway(ROUTES);
    const body = '{}';
    const headers = {
      'x-webhook-signature-v2': signV2(SECRET, body, Math.floor(Date.now() / 1000)),
    };
    for (const [route, prefix, answer] of [
      ['%E0%A4%A', '', { error: 'Unknown route: %E0%A4%A' }],
      ['notify%', '', { error: 'Unknown route: notify%' }],
      ['notify', '/p/%ZZ', { error: 'Unknown or unconfigured profile' }],
      ['notify', '/p/%20', { error: 'Unknown or unconfigured profile' }],
      ['notify', '/p/%09', { error: 'Unknown or unconfigured profile' }],
      // A long unknown name is quoted cut to 200 characters, not echoed back whole.
      ['x'.repeat(5000), '', { error: `Unknown route: ${'x'.repeat(200)}…` }],
    ] as const) {
      const response = await post(route, body, headers, prefix);
      expect([response.status, await response.json()], `${prefix}/webhooks/${route}`).toEqual([
        404,
        answer,
      ]);
    }
    for (const target of ['//[::1/webhooks/notify', 'http://[bad/webhooks/notify']) {
      const { text } = await sendRawBytes(
        url,
        Buffer.from(`POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}`),
        5_000,
      );
      expect(splitResponses(text)[0], target).toEqual({
        status: 400,
        body: JSON.stringify({ error: 'Bad request' }),
      });
    }
  });

  it('reads JSON whatever the Content-Type, refuses JSON nested past 64 levels, takes delivery ids of any length, reads X-Event-Type past a blank X-GitHub-Event', async () => {
    const { post, model } = await webhookGateway(ROUTES);
    const now = Math.floor(Date.now() / 1000);
    const send = (body: string, headers: Record<string, string>) =>
      post('notify', body, { 'x-webhook-signature-v2': signV2(SECRET, body, now), ...headers });
    const form = await send('{"a":1}', {
      'content-type': 'application/x-www-form-urlencoded',
      'x-request-id': 'f1',
    });
    expect([form.status, await form.json()]).toEqual([
      200,
      { status: 'delivered', delivery_id: 'f1' },
    ]);
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const atLimit = await send(nested(64), { 'x-request-id': 'n1' });
    expect(atLimit.status).toBe(200);
    for (const [text, id] of [
      [nested(65), 'n2'],
      [nested(1000), 'n3'],
      [`payload=${encodeURIComponent(nested(65))}`, 'n4'],
    ] as const) {
      const deep = await send(text, { 'x-request-id': id });
      expect([deep.status, await deep.json()], id).toEqual([400, { error: 'Cannot parse body' }]);
    }
    // A turn route: the id names the turn's journal entry, whatever its length.
    const long = `id-${'d'.repeat(300)}`;
    const body = JSON.stringify({ repository: { name: 'hermes' }, pusher: 'ada' });
    const turn = await post('github', body, {
      'x-webhook-signature-v2': signV2(SECRET, body, now),
      'x-github-event': 'push',
      'x-github-delivery': long,
    });
    expect([turn.status, await turn.json()]).toEqual([
      202,
      { status: 'accepted', route: 'github', delivery_id: long },
    ]);
    // A blank X-GitHub-Event names no event: X-Event-Type is read next.
    const typed = JSON.stringify({ repository: { name: 'typed' }, pusher: 'ada' });
    const byType = await post('github', typed, {
      'x-webhook-signature-v2': signV2(SECRET, typed, now),
      'x-github-event': '',
      'x-event-type': 'push',
      'x-github-delivery': 'e1',
    });
    expect([byType.status, ((await byType.json()) as { status: string }).status]).toEqual([
      202,
      'accepted',
    ]);
    for (let index = 0; index < 100 && model.modelRequests.length < 2; index += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(model.modelRequests).toHaveLength(2);
  });

  it('takes a signed delivery once: a replay under another id or none is a duplicate, deliveries without ids are each their own', async () => {
    const { post, gateway } = await webhookGateway(ROUTES);
    const now = Math.floor(Date.now() / 1000);
    const body = '{"alert":"disk full"}';
    const signature = { 'x-webhook-signature-v2': signV2(SECRET, body, now) };
    const first = await post('notify', body, { ...signature, 'x-request-id': 'r1' });
    expect(await first.json()).toEqual({ status: 'delivered', delivery_id: 'r1' });
    for (const id of ['r2', undefined]) {
      const replay = await post('notify', body, {
        ...signature,
        ...(id ? { 'x-request-id': id } : {}),
      });
      const answer = (await replay.json()) as { status: string };
      expect([replay.status, answer.status], String(id)).toEqual([200, 'duplicate']);
    }
    // A blank id is no id: two different deliveries with one are both delivered.
    for (const text of ['{"n":1}', '{"n":2}']) {
      const blank = await post('notify', text, {
        'x-webhook-signature-v2': signV2(SECRET, text, now),
        'x-github-delivery': '',
      });
      expect(((await blank.json()) as { status: string }).status, text).toBe('delivered');
    }
    // Distinct deliveries without ids at once (each on its own connection), signed V2 and V1.
    const burst = await Promise.all(
      Array.from({ length: 16 }, (_, index) => {
        const text = JSON.stringify({ burst: index });
        return post(
          'notify',
          text,
          index % 2 === 0
            ? { 'x-webhook-signature-v2': signV2(SECRET, text, now), connection: 'close' }
            : { 'x-webhook-signature': signV1(SECRET, text), connection: 'close' },
        ).then(
          async (response) => (await response.json()) as { status: string; delivery_id: string },
        );
      }),
    );
    expect(burst.map((answer) => answer.status)).toEqual(Array(16).fill('delivered'));
    expect(new Set(burst.map((answer) => answer.delivery_id)).size).toBe(16);
    expect(gateway.process.stderr()).not.toContain('webhook request failed');
  });

  it('a delivery the journal cannot take answers 500 and leaves its id and signature free for the retry', async () => {
    const { post, home, model } = await webhookGateway(ROUTES);
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ repository: { name: 'hermes' }, pusher: 'ada' });
    const headers = {
      'x-webhook-signature-v2': signV2(SECRET, body, now),
      'x-github-event': 'push',
      'x-github-delivery': 'j1',
    };
    // The journal's folder made a file: the entry cannot be written.
    const inbound = path.join(home, 'state', 'inbound');
    await rm(inbound, { recursive: true, force: true });
    await writeFile(inbound, '');
    const failed = await post('github', body, headers);
    expect([failed.status, await failed.json()]).toEqual([500, { error: 'Internal error' }]);
    await rm(inbound);
    await mkdir(inbound, { mode: 0o700 });
    const retried = await post('github', body, headers);
    expect([retried.status, await retried.json()]).toEqual([
      202,
      { status: 'accepted', route: 'github', delivery_id: 'j1' },
    ]);
    for (let index = 0; index < 100 && model.modelRequests.length === 0; index += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(model.modelRequests).toHaveLength(1);
  });

  it('reloads dynamic routes when webhook_subscriptions.json changes; INSECURE_NO_AUTH works from loopback', async () => {
    const { post, home } = await webhookGateway(
      'platforms:\n  webhook:\n    enabled: true\n    port: 0\n',
    );
    expect((await post('dyn', '{}')).status).toBe(404);
    const file = path.join(home, 'webhook_subscriptions.json');
    await writeFile(
      file,
      JSON.stringify({ routes: { dyn: { secret: 'INSECURE_NO_AUTH', deliver_only: true } } }),
    );
    const response = await post('dyn', '{"a":1}', { 'x-request-id': 'x1' });
    expect([response.status, await response.json()]).toEqual([
      200,
      { status: 'delivered', delivery_id: 'x1' },
    ]);
    expect(JSON.parse(await readFile(file, 'utf8')).routes.dyn).toBeDefined();
  });
});
