import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { getHermesHome, getSecret } from '@hermes/config';
import { openSessionStore, readAllMessages } from '@hermes/session-store';
import { type ModelServer, startModelServer, tempHome } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { routeReplies } from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import { ownsCompletion } from '../delegation/completion-ownership.js';
import { delegateTask } from '../delegation/delegate-task.js';
import { COMPLETION_DISPLAY_KIND } from '../delegation/delegation-limits.js';
import {
  CONFIG_RECHECK_MS,
  createProfileRuntime,
  type ProfileRuntime,
  type ProfileRuntimeOptions,
} from './profile-runtime.js';

async function modelServer(): Promise<ModelServer> {
  const server = await startModelServer();
  onTestFinished(() => server.close());
  return server;
}

/** A profile home whose config.yaml points at `server` through the `openai` provider (key from its secrets). */
async function profileHome(server: ModelServer, model = 'test-model'): Promise<string> {
  const home = (await tempHome('hermes-profile-')).path;
  await writeConfig(home, server, model);
  return home;
}

async function writeConfig(home: string, server: ModelServer, model: string): Promise<void> {
  await writeFile(
    path.join(home, 'config.yaml'),
    `model:\n  provider: openai\n  base_url: ${server.baseUrl}\n  default: ${model}\n`,
  );
}

function runtime(options: ProfileRuntimeOptions): ProfileRuntime {
  const created = createProfileRuntime(options);
  onTestFinished(() => created.close());
  return created;
}

const bearer = (server: ModelServer) =>
  server.modelRequests.map((request) => request.headers.authorization);

describe('createProfileRuntime', () => {
  it('keeps two profiles apart: homes, secret scopes, model keys and stores never cross', async () => {
    const serverA = await modelServer();
    const serverB = await modelServer();
    serverA.push({ text: 'from a', delayMs: 50 });
    serverB.push({ text: 'from b' });
    const a = runtime({
      name: 'alpha',
      home: await profileHome(serverA, 'model-a'),
      secrets: { OPENAI_API_KEY: 'key-a', ONLY_ALPHA: 'yes' },
    });
    const b = runtime({
      name: 'beta',
      home: await profileHome(serverB, 'model-b'),
      secrets: { OPENAI_API_KEY: 'key-b' },
    });

    // Scopes follow each task across awaits, interleaved.
    const seen = await Promise.all(
      [a, b].map((profile) =>
        profile.run(async () => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return [getHermesHome(), getSecret('OPENAI_API_KEY'), getSecret('ONLY_ALPHA')];
        }),
      ),
    );
    expect(seen).toEqual([
      [a.home, 'key-a', 'yes'],
      [b.home, 'key-b', undefined],
    ]);
    // A profile with its own secrets never falls back to the process environment.
    expect(process.env.PATH).toBeDefined();
    expect(a.secret('PATH')).toBeUndefined();
    expect(b.secret('ONLY_ALPHA')).toBeUndefined();

    // Turns of both profiles at once: each reaches its own server with its own key and model.
    const [agentA, agentB] = await Promise.all([a.agent(), b.agent()]);
    const sessionA = await agentA.createSession();
    const sessionB = await agentB.createSession();
    const [turnA, turnB] = await Promise.all([
      agentA.runTurn({ sessionId: sessionA.id, message: 'hi a' }),
      agentB.runTurn({ sessionId: sessionB.id, message: 'hi b' }),
    ]);
    expect([turnA.finalResponse, turnB.finalResponse]).toEqual(['from a', 'from b']);
    expect(bearer(serverA)).toEqual(['Bearer key-a']);
    expect(bearer(serverB)).toEqual(['Bearer key-b']);
    const modelOf = (server: ModelServer) =>
      server.modelRequests.map((request) => (request.body as { model?: string }).model);
    expect(modelOf(serverA)).toEqual(['model-a']);
    expect(modelOf(serverB)).toEqual(['model-b']);

    const [storeA, storeB] = [await a.store(), await b.store()];
    expect(storeA).not.toBe(storeB);
    expect(storeA.getSession(sessionB.id)).toBeUndefined();
    expect(storeB.getSession(sessionA.id)).toBeUndefined();
    expect(existsSync(path.join(a.home, 'state.db'))).toBe(true);
    expect(existsSync(path.join(b.home, 'state.db'))).toBe(true);
  });

  it('rebuilds the agent when config.yaml changes and reuses it while it does not', async () => {
    const server = await modelServer();
    const home = await profileHome(server, 'first-model');
    const profile = runtime({
      name: 'default',
      home,
      secrets: { OPENAI_API_KEY: 'k' },
      platform: 'tui',
    });
    const first = await profile.agent();
    expect(await profile.agent()).toBe(first);
    expect(first.route().model).toBe('first-model');
    expect(first.platform).toBe('tui');

    await writeConfig(home, server, 'the-second-model');
    await new Promise((resolve) => setTimeout(resolve, CONFIG_RECHECK_MS + 50));
    const second = await profile.agent();
    expect(second).not.toBe(first);
    expect(second.route().model).toBe('the-second-model');
    expect(await profile.agent()).toBe(second);

    // One registry for the store, whatever agent is built over it.
    const registry = await profile.registry();
    expect(first.options.delegations).toBe(registry);
    expect(second.options.delegations).toBe(registry);

    // Another surface or model is another agent over the same store and registry.
    const api = await profile.agent({ platform: 'api_server' });
    const other = await profile.agent({ model: 'picked-model' });
    expect(api.platform).toBe('api_server');
    expect(other.route().model).toBe('picked-model');
    expect(other).not.toBe(second);
    expect(other.store).toBe(second.store);
    expect(await profile.agent({ model: 'picked-model' })).toBe(other);
  });

  it('opens the store once for racing first callers, with one registry made as it opens', async () => {
    const server = await modelServer();
    let registries = 0;
    const profile = runtime({
      name: 'default',
      home: await profileHome(server),
      secrets: { OPENAI_API_KEY: 'k' },
      onRegistry: () => {
        registries += 1;
      },
    });
    expect(profile.storeIfOpen).toBeUndefined();
    const [one, two, registry, agent, three] = await Promise.all([
      profile.store(),
      profile.store(),
      profile.registry(),
      profile.agent(),
      profile.store(),
    ]);
    expect(two).toBe(one);
    expect(three).toBe(one);
    expect(agent.store).toBe(one);
    expect(registry.store).toBe(one);
    expect(profile.storeIfOpen).toBe(one);
    expect(profile.registryIfOpen).toBe(registry);
    expect(registries).toBe(1);
  });

  it('a one-shot runtime has no registry: delegations run inline', async () => {
    const server = await modelServer();
    const profile = runtime({
      name: 'default',
      home: await profileHome(server),
      secrets: { OPENAI_API_KEY: 'k' },
      oneShot: true,
    });
    const agent = await profile.agent();
    expect(agent.options.oneShot).toBe(true);
    expect(agent.options.delegations).toBeUndefined();
    expect(profile.registryIfOpen).toBeUndefined();
    await expect(profile.registry()).rejects.toMatchObject({ code: 'no_delegation_registry' });
  });

  it('closes in order — delivery, then registry, then store: a delegation running at close is recorded and stays owed, and the next start delivers it once', async () => {
    const server = await modelServer();
    const home = await profileHome(server);
    routeReplies(server, {
      child: [{ text: 'never sent', delayMs: 10_000 }],
      parent: [{ text: 'noted the interrupted review' }],
    });
    const options = (sessionId: () => string): ProfileRuntimeOptions => ({
      name: 'default',
      home,
      secrets: { OPENAI_API_KEY: 'k' },
      onRegistry: (registry, profile) => ({
        owner: (event) =>
          ownsCompletion(event, { sessionId: sessionId() }, registry.store)
            ? sessionId()
            : undefined,
        runTurn: async (turn) => (await profile.agent()).runTurn(turn),
      }),
    });
    let sessionId = '';
    const first = createProfileRuntime(options(() => sessionId));
    const agent = await first.agent();
    sessionId = (await agent.createSession()).id;
    const dispatched = await first.run(() =>
      delegateTask(
        { tasks: [{ goal: 'Review the change' }] },
        { parent: agent, background: true, sessionId },
      ),
    );
    const id = String(dispatched.delegation_id);
    await waitFor(() => server.modelRequests.length === 1);
    expect(first.registryIfOpen?.running).toBe(1);

    await first.close();
    expect(first.closed).toBe(true);
    await expect(first.store()).rejects.toMatchObject({ code: 'profile_closed' });

    const check = await openSessionStore({ path: path.join(home, 'state.db') });
    try {
      // The registry closed while the store was open: the interrupted unit recorded its result.
      const row = check.getDelegation(id);
      expect(row?.state).toBe('error');
      expect(JSON.parse(row?.resultJson ?? '{}').results[0]).toMatchObject({
        status: 'interrupted',
        exit_reason: 'interrupted',
      });
      // Delivery had stopped first: nothing was injected during the shutdown; it is owed.
      expect(row?.deliveryState).toBe('pending');
      expect(
        readAllMessages(check, sessionId).filter(
          (row) => row.displayKind === COMPLETION_DISPLAY_KIND,
        ),
      ).toHaveLength(0);
    } finally {
      await check.close();
    }

    // The next start restores it and delivers it into its session, once.
    const second = runtime(options(() => sessionId));
    await second.store();
    const report = await second.deliveryReady();
    expect(report?.restored).toEqual([id]);
    const store = await second.store();
    await waitFor(() => store.getDelegation(id)?.deliveryState === 'delivered');
    const injected = readAllMessages(store, sessionId).filter(
      (row) => row.displayKind === COMPLETION_DISPLAY_KIND,
    );
    expect(injected).toHaveLength(1);
    expect(injected[0]?.content).toContain(`ASYNC DELEGATION BATCH COMPLETE — ${id}`);
  });

  it('starts delivery later on request, once', async () => {
    const server = await modelServer();
    const profile = runtime({
      name: 'default',
      home: await profileHome(server),
      secrets: { OPENAI_API_KEY: 'k' },
    });
    const delivery = {
      owner: () => undefined,
      runTurn: async () => {
        throw new Error('not expected');
      },
    };
    expect(await profile.deliveryReady()).toBeUndefined();
    const report = await profile.startDelivery(delivery);
    expect(report.restored).toEqual([]);
    expect(await profile.deliveryReady()).toBe(report);
    await expect(profile.startDelivery(delivery)).rejects.toThrow(/already started/);
    expect(await profile.drainDeliveries()).toBe(0);
  });

  it('reads secrets from the process environment when it has none of its own', async () => {
    const home = (await tempHome()).path;
    const profile = runtime({ name: 'custom', home });
    expect(profile.secrets).toBeUndefined();
    expect(profile.secret('PATH')).toBe(process.env.PATH);
    expect(profile.run(() => getHermesHome())).toBe(profile.home);
  });
});
