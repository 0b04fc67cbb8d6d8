import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { makeProfile, startGateway } from './gateway-process.js';

const REJECTED = { error: 'Unknown or unconfigured profile' };

function providerConfig(baseUrl: string, extra = ''): string {
  return `model:\n  provider: mock\n  default: test-model\nproviders:\n  mock:\n    base_url: ${baseUrl}\n    key_env: MOCK_KEY\n${extra}`;
}

describe('profiles without multiplexing', () => {
  it('serves a self-referential prefix like the bare route and refuses every other profile', async () => {
    const gateway = await startGateway();
    const bare = await gateway.json<{ data: { id: string }[] }>('/v1/models');
    const self = await gateway.json<{ data: { id: string }[] }>('/p/default/v1/models');
    expect(self.status).toBe(200);
    expect(bare.body.data[0]?.id).toBe('hermes-agent');
    expect(self.body.data[0]?.id).toBe('default');
    const made = await gateway.json<{ session: { id: string } }>('/p/default/api/sessions', {
      method: 'POST',
      json: { title: 'through the prefix' },
    });
    expect(made.status).toBe(201);
    const listed = await gateway.json<{ data: { id: string }[] }>('/api/sessions');
    expect(listed.body.data.map((session) => session.id)).toEqual([made.body.session.id]);
    for (const pathname of [
      '/p/work/v1/models',
      '/p/work/api/sessions',
      '/p/..x/health',
      '/p/Work%20x/health',
      '/p/%20/health',
      '/p/%E0%A4%A/health',
    ]) {
      const refused = await gateway.json(pathname);
      expect(refused.status, pathname).toBe(404);
      expect(refused.body, pathname).toEqual(REJECTED);
    }
  });

  it('a gateway launched for a named profile answers to its own prefix only', async () => {
    const root = (await tempHome()).path;
    const home = await makeProfile(root, 'work', {});
    const gateway = await startGateway({ home });
    expect((await gateway.json('/p/work/health')).status).toBe(200);
    expect((await gateway.json('/p/default/health')).body).toEqual(REJECTED);
  });
});

describe('profiles with multiplexing', () => {
  it('gives each profile its own store, key, secrets and toolsets', async () => {
    const model = await startModelServer({
      script: [{ text: 'from work' }, { text: 'from default' }, { text: 'work response' }],
    });
    const root = (await tempHome()).path;
    await writeFile(
      path.join(root, 'config.yaml'),
      providerConfig(model.baseUrl, 'gateway:\n  multiplex_profiles: true\n'),
    );
    await writeFile(
      path.join(root, '.env'),
      'MOCK_KEY=default-model-secret\nAPI_SERVER_KEY=default-api-key-1\n',
    );
    await makeProfile(root, 'work', {
      'config.yaml': providerConfig(model.baseUrl, 'platform_toolsets:\n  api_server: [file]\n'),
      '.env': 'MOCK_KEY=work-model-secret\nAPI_SERVER_KEY=work-api-key-22\n',
    });
    await makeProfile(root, 'parked', { 'gateway.parked': '' });
    const gateway = await startGateway({ home: root });

    // Keys: each prefix wants its own profile's key.
    expect((await gateway.json('/p/work/api/sessions')).status).toBe(401);
    expect((await gateway.json('/p/work/api/sessions', { key: 'default-api-key-1' })).status).toBe(
      401,
    );
    expect((await gateway.json('/api/sessions', { key: 'work-api-key-22' })).status).toBe(401);
    const work = { key: 'work-api-key-22' };
    const main = { key: 'default-api-key-1' };

    // Stores: a session made under /p/work lives in profiles/work/state.db only.
    const made = await gateway.json<{ session: { id: string } }>('/p/work/api/sessions', {
      method: 'POST',
      json: { title: 'work chat' },
      ...work,
    });
    expect(made.status).toBe(201);
    expect(existsSync(path.join(root, 'profiles', 'work', 'state.db'))).toBe(true);
    const workList = await gateway.json<{ data: { title: string }[] }>(
      '/p/work/api/sessions',
      work,
    );
    const mainList = await gateway.json<{ data: { title: string }[] }>('/api/sessions', main);
    expect(workList.body.data.map((session) => session.title)).toEqual(['work chat']);
    expect(mainList.body.data).toEqual([]);
    expect((await gateway.json(`/api/sessions/${made.body.session.id}`, main)).status).toBe(404);

    // Secrets: each profile's turn carries its own model key, never the other's.
    const workChat = await gateway.json<{ message: { content: string } }>(
      `/p/work/api/sessions/${made.body.session.id}/chat`,
      { method: 'POST', json: { message: 'hi' }, ...work },
    );
    expect(workChat.body.message.content).toBe('from work');
    const mainSession = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
      ...main,
    });
    const mainChat = await gateway.json<{ message: { content: string } }>(
      `/api/sessions/${mainSession.body.session.id}/chat`,
      { method: 'POST', json: { message: 'hi' }, ...main },
    );
    expect(mainChat.body.message.content).toBe('from default');
    expect(model.modelRequests.map((request) => request.headers.authorization)).toEqual([
      'Bearer work-model-secret',
      'Bearer default-model-secret',
    ]);

    // Stored responses: in work's own store, unknown to the default profile.
    const response = await gateway.json<{ id: string }>('/p/work/v1/responses', {
      method: 'POST',
      json: { input: 'remember this' },
      ...work,
    });
    expect(response.status).toBe(200);
    expect((await gateway.json(`/p/work/v1/responses/${response.body.id}`, work)).status).toBe(200);
    expect((await gateway.json(`/v1/responses/${response.body.id}`, main)).status).toBe(404);

    // Toolsets: work's own platform_toolsets.
    type Toolsets = { data: { name: string; enabled: boolean }[] };
    const workToolsets = await gateway.json<Toolsets>('/p/work/v1/toolsets', work);
    const mainToolsets = await gateway.json<Toolsets>('/v1/toolsets', main);
    const enabled = (body: Toolsets) =>
      body.data.filter((toolset) => toolset.enabled).map((toolset) => toolset.name);
    expect(enabled(workToolsets.body)).toEqual(['file']);
    expect(enabled(mainToolsets.body)).toContain('terminal');

    // The served set: parked and unknown profiles are refused; the model name follows the prefix.
    expect((await gateway.json('/p/parked/health')).body).toEqual(REJECTED);
    expect((await gateway.json('/p/ghost/health')).body).toEqual(REJECTED);
    const models = await gateway.json<{ data: { id: string }[] }>('/p/work/v1/models', work);
    expect(models.body.data[0]?.id).toBe('work');

    // The log never holds either profile's secrets.
    gateway.process.kill('SIGTERM');
    await gateway.process.exited;
    const { readFile } = await import('node:fs/promises');
    const log = await readFile(path.join(root, 'logs', 'gateway.log'), 'utf8');
    for (const secret of [
      'work-model-secret',
      'default-model-secret',
      'work-api-key-22',
      'default-api-key-1',
    ])
      expect(log).not.toContain(secret);
  });

  it('serves only the allowlisted profiles (the default always)', async () => {
    const root = (await tempHome()).path;
    await writeFile(
      path.join(root, 'config.yaml'),
      'gateway:\n  multiplex_profiles: true\n  multiplex_profile_allowlist: [work]\n',
    );
    await makeProfile(root, 'work', {});
    await makeProfile(root, 'home', {});
    const gateway = await startGateway({ home: root });
    expect((await gateway.json('/p/work/health')).status).toBe(200);
    expect((await gateway.json('/p/default/health')).status).toBe(200);
    expect((await gateway.json('/p/home/health')).body).toEqual(REJECTED);
  });
});
