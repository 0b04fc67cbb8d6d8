import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { queryGatewayStatus } from '@hermes/control-socket';
import { startModelServer, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { signV2 } from '../src/platforms/webhook/signature.js';
import { makeProfile, startGateway } from './gateway-process.js';
import { echoScript } from './model-scripts.js';

const DEFAULT_SECRET = 'whsec-default-0123456789';
const WORK_SECRET = 'whsec-work-9876543210';
const REJECTED = { error: 'Unknown or unconfigured profile' };

function providerConfig(baseUrl: string, extra: string): string {
  return `model:\n  provider: mock\n  default: test-model\nproviders:\n  mock:\n    base_url: ${baseUrl}\n    key_env: MOCK_KEY\n${extra}`;
}

/**
 * The default profile's listener: `deploy` (its own), `ops` (bound to work) and `build` (bound to
 * work, which declares a `build` of its own: work's wins).
 */
const DEFAULT_WEBHOOK = `platforms:
  webhook:
    enabled: true
    port: 0
    routes:
      deploy:
        secret: ${DEFAULT_SECRET}
        prompt: "default deploy {payload.marker}"
      ops:
        secret: ${DEFAULT_SECRET}
        profile: work
        deliver_only: true
        prompt: "ops {payload.marker}"
      build:
        secret: ${DEFAULT_SECRET}
        profile: work
        deliver_only: true
        prompt: "listener build {payload.marker}"
`;

/** Work's own routes: `deploy` again with its own secret, and `build`; a port of its own. */
const WORK_WEBHOOK = `platforms:
  webhook:
    enabled: true
    port: 18644
    routes:
      deploy:
        secret: ${WORK_SECRET}
        prompt: "work deploy {payload.marker}"
      build:
        secret: ${WORK_SECRET}
        deliver_only: true
        prompt: "build {payload.marker}"
`;

/** A root with the default profile, `work` and a parked profile; multiplexing when asked. */
async function profileRoot(multiplex: boolean) {
  const model = await startModelServer({ script: echoScript(20) });
  onTestFinished(() => model.close());
  const root = (await tempHome()).path;
  await writeFile(
    path.join(root, 'config.yaml'),
    providerConfig(
      model.baseUrl,
      `${multiplex ? 'gateway:\n  multiplex_profiles: true\n' : ''}${DEFAULT_WEBHOOK}`,
    ),
  );
  await writeFile(path.join(root, '.env'), 'MOCK_KEY=default-model-secret\n', { mode: 0o600 });
  const work = await makeProfile(root, 'work', {
    'config.yaml': providerConfig(model.baseUrl, WORK_WEBHOOK),
    '.env': 'MOCK_KEY=work-model-secret\n',
  });
  await makeProfile(root, 'parked', { 'gateway.parked': '' });
  return { model, root, work };
}

async function webhookUrlOf(home: string): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const url = ((await queryGatewayStatus(home)) as { webhook_url?: string } | null)?.webhook_url;
    if (url) return url;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the webhook listener did not start');
}

async function startWebhookGateway(root: string) {
  const gateway = await startGateway({ home: root, env: { HERMES_LOG_LEVEL: 'info' } });
  onTestFinished(async () => {
    await gateway.process.stop();
  });
  const url = await webhookUrlOf(root);
  /** A delivery of `{marker}` to `<prefix>/webhooks/<route>`, V2-signed with `secret`. */
  const deliver = async (options: {
    route: string;
    prefix?: string;
    secret: string;
    marker: string;
    id: string;
  }) => {
    const body = JSON.stringify({ marker: options.marker });
    const response = await fetch(`${url}${options.prefix ?? ''}/webhooks/${options.route}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature-v2': signV2(options.secret, body, Math.floor(Date.now() / 1000)),
        'x-github-delivery': options.id,
      },
      body,
    });
    return [response.status, await response.json()];
  };
  return { gateway, deliver };
}

/** The user messages stored in the `state.db` of `home` (none when it has no store). */
function storedUserMessages(home: string): string[] {
  const file = path.join(home, 'state.db');
  if (!existsSync(file)) return [];
  const database = new Database(file, { readonly: true });
  try {
    return (
      database
        .prepare(
          "SELECT m.content FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.role = 'user' AND s.source = 'webhook' ORDER BY m.id",
        )
        .all() as { content: string }[]
    ).map((row) => row.content);
  } finally {
    database.close();
  }
}

function journalEntries(home: string): string[] {
  try {
    return readdirSync(path.join(home, 'state', 'inbound')).filter((name) =>
      name.endsWith('.json'),
    );
  } catch {
    return [];
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('webhook routes of multiplexed profiles', () => {
  it("runs a delivery to /p/work in work's store and agent with work's secret; the same route name in each profile keeps its own secret and delivery ids", async () => {
    const { model, root, work } = await profileRoot(true);
    const { gateway, deliver } = await startWebhookGateway(root);

    // work's deploy takes work's secret only; the default profile's is refused.
    expect(
      await deliver({
        route: 'deploy',
        prefix: '/p/work',
        secret: DEFAULT_SECRET,
        marker: 'w0',
        id: 'w0',
      }),
    ).toEqual([401, { error: 'Invalid signature' }]);
    expect(
      await deliver({
        route: 'deploy',
        prefix: '/p/work',
        secret: WORK_SECRET,
        marker: 'work-marker',
        id: 'same-id',
      }),
    ).toEqual([202, { status: 'accepted', route: 'deploy', delivery_id: 'same-id' }]);
    await until(() => model.modelRequests.length === 1, "work's turn");
    expect(model.modelRequests[0]?.headers.authorization).toBe('Bearer work-model-secret');
    expect(JSON.stringify(model.modelRequests[0]?.body)).toContain('work deploy work-marker');

    // The default profile's deploy: its own secret, and work's delivery id is new to it.
    expect(await deliver({ route: 'deploy', secret: WORK_SECRET, marker: 'd0', id: 'd0' })).toEqual(
      [401, { error: 'Invalid signature' }],
    );
    expect(
      await deliver({
        route: 'deploy',
        secret: DEFAULT_SECRET,
        marker: 'default-marker',
        id: 'same-id',
      }),
    ).toEqual([202, { status: 'accepted', route: 'deploy', delivery_id: 'same-id' }]);
    await until(() => model.modelRequests.length === 2, "the default profile's turn");
    expect(model.modelRequests[1]?.headers.authorization).toBe('Bearer default-model-secret');
    expect(JSON.stringify(model.modelRequests[1]?.body)).toContain('default deploy default-marker');

    // A repeat is a duplicate within its own profile.
    for (const prefix of ['/p/work', '']) {
      const secret = prefix ? WORK_SECRET : DEFAULT_SECRET;
      const [status, body] = await deliver({
        route: 'deploy',
        prefix,
        secret,
        marker: `again${prefix}`,
        id: 'same-id',
      });
      expect([status, (body as { status: string }).status], prefix).toEqual([200, 'duplicate']);
    }

    // Each turn lives in its own profile's store; both journals are drained.
    await until(
      () => journalEntries(root).length === 0 && journalEntries(work).length === 0,
      'both journals to drain',
    );
    await until(
      () => gateway.process.stderr().split('"msg":"webhook reply"').length - 1 === 2,
      'both replies',
    );
    expect(storedUserMessages(work)).toEqual(['work deploy work-marker']);
    expect(storedUserMessages(root)).toEqual(['default deploy default-marker']);
    expect(model.modelRequests).toHaveLength(2);
    expect(gateway.process.stderr()).toMatch(
      /"profile":"work","route":"deploy","content":"echo: work deploy work-marker"/,
    );
  });

  it('reaches a route bound to work only under /p/work; unserved prefixes are refused; work gets no listener of its own', async () => {
    const { root } = await profileRoot(true);
    const { gateway, deliver } = await startWebhookGateway(root);
    // `build` is work's own route (the listener's `build` bound to work gives way to it), `ops`
    // the listener's route bound to work.
    for (const route of ['build', 'ops']) {
      const secret = route === 'build' ? WORK_SECRET : DEFAULT_SECRET;
      for (const prefix of ['', '/p/default'])
        expect(
          await deliver({ route, prefix, secret, marker: 'm', id: `${route}${prefix}` }),
          `${prefix}/webhooks/${route}`,
        ).toEqual([404, { error: `Unknown route: ${route}` }]);
      expect(await deliver({ route, prefix: '/p/work', secret, marker: route, id: route })).toEqual(
        [200, { status: 'delivered', delivery_id: route }],
      );
    }
    for (const prefix of ['/p/parked', '/p/ghost'])
      expect(
        await deliver({ route: 'deploy', prefix, secret: WORK_SECRET, marker: 'm', id: prefix }),
        prefix,
      ).toEqual([404, REJECTED]);
    const log = gateway.process.stderr();
    expect(log).toMatch(/"profile":"work","route":"build","content":"build build"/);
    expect(log).toMatch(/"profile":"work","route":"ops","content":"ops ops"/);
    // Its port is not bound: the one listener serves it.
    expect(log).toContain(
      'profile work: platforms.webhook.port ignored: under multiplexing its routes are served under /p/work/webhooks/<route>',
    );
    expect(log.split('"msg":"webhook listening"')).toHaveLength(2);
  });

  it("runs a work delivery its journal kept from the previous run at the next start, in work's store", async () => {
    const { model, root, work } = await profileRoot(true);
    const entry = {
      ref: 'webhook:deploy:left-1',
      seq: 1,
      state: 'received',
      platform: 'webhook',
      chatId: 'deploy',
      threadId: null,
      messageId: 'left-1',
      userId: null,
      userName: null,
      text: 'work deploy left-behind',
      receivedAt: Date.now() - 1000,
    };
    await mkdir(path.join(work, 'state', 'inbound'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(work, 'state', 'inbound', 'left-1.json'), JSON.stringify(entry));
    const { gateway } = await startWebhookGateway(root);
    await until(() => journalEntries(work).length === 0, "work's journal to drain");
    expect(storedUserMessages(work)).toEqual(['work deploy left-behind']);
    expect(storedUserMessages(root)).toEqual([]);
    expect(model.modelRequests[0]?.headers.authorization).toBe('Bearer work-model-secret');
    await until(
      () => gateway.process.stderr().includes('"content":"echo: work deploy left-behind"'),
      'the reply',
    );
  });
});

describe('webhook routes without multiplexing', () => {
  it('serves the launch profile at its bare path and own prefix only: another profile is refused', async () => {
    const { root } = await profileRoot(false);
    const { deliver } = await startWebhookGateway(root);
    for (const prefix of ['', '/p/default'])
      expect(
        (
          await deliver({
            route: 'deploy',
            prefix,
            secret: DEFAULT_SECRET,
            marker: `self${prefix}`,
            id: `self${prefix}`,
          })
        )[0],
        prefix,
      ).toBe(202);
    for (const route of ['build', 'deploy', 'ops'])
      expect(
        await deliver({ route, prefix: '/p/work', secret: WORK_SECRET, marker: 'm', id: route }),
        route,
      ).toEqual([404, REJECTED]);
    // The route bound to work is unreachable: work is not served.
    expect(
      await deliver({ route: 'ops', secret: DEFAULT_SECRET, marker: 'm', id: 'ops-bare' }),
    ).toEqual([404, { error: 'Unknown route: ops' }]);
  });
});
