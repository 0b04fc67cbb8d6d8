import { resolveConfig } from '@hermes/config';
import { type ModelServer, type ScriptedReply, startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentFixture } from '../../test/fixtures.js';
import { compressSession } from '../compression/compress-session.js';
import { delegateTask } from '../delegation/delegate-task.js';
import { NO_KEY_REQUIRED } from './provider-catalog.js';

/*
 * Which `Authorization` header each endpoint receives, on real model servers on loopback: a key
 * goes only to the endpoint it was configured for, never to another `base_url` that an entry
 * names without a key of its own.
 */

/** A provider answer that sends the call down the fallback chain at once (no retry wait). */
const MOVE_ON: ScriptedReply = { error: { status: 429, message: 'slow down', retryAfterS: 3600 } };

async function server(script: ScriptedReply[]): Promise<ModelServer> {
  const started = await startModelServer({ script });
  onTestFinished(() => started.close());
  return started;
}

/** The `Authorization` header of every request `model` received, in order. */
function keysSent(model: ModelServer): string[] {
  return model.requests.map((request) => String(request.headers.authorization ?? ''));
}

describe('keys stay with their endpoints, on the wire', () => {
  it('a fallback with its own base_url and no key is sent no key, not the main model’s (was: Bearer <model.api_key>)', async () => {
    const backup = await server([{ text: 'backup speaking' }]);
    const fixture = await agentFixture({
      raw: {
        model: { api_key: 'sk-main' },
        fallback_providers: [{ base_url: backup.baseUrl, model: 'backup-model' }],
      },
      server: { apiKey: 'sk-main', script: [MOVE_ON] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({ sessionId: session.id, message: 'hi' });
    expect(result.finalResponse).toBe('backup speaking');
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-main']);
    expect(keysSent(backup)).toEqual([`Bearer ${NO_KEY_REQUIRED}`]);
  });

  it('a fallback naming a provider sends its key to that provider’s base_url only, never to another base_url (was: Bearer <provider key> there too)', async () => {
    const lab = await server([MOVE_ON]);
    const elsewhere = await server([{ text: 'elsewhere speaking' }]);
    const fixture = await agentFixture({
      raw: {
        model: { api_key: 'sk-main' },
        providers: { lab: { base_url: lab.baseUrl, api_key: 'sk-lab' } },
        fallback_providers: [
          { provider: 'lab', model: 'lab-model' },
          { provider: 'lab', base_url: elsewhere.baseUrl, model: 'lab-model' },
        ],
      },
      server: { script: [MOVE_ON] },
    });
    const agent = fixture.agent();
    const session = await agent.createSession();
    const result = await agent.runTurn({ sessionId: session.id, message: 'hi' });
    expect(result.finalResponse).toBe('elsewhere speaking');
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-main']);
    expect(keysSent(lab)).toEqual(['Bearer sk-lab']);
    expect(keysSent(elsewhere)).toEqual([`Bearer ${NO_KEY_REQUIRED}`]);
  });

  it('an auxiliary task on another base_url without a key is sent no key; on the main base_url it shares the main key', async () => {
    const aux = await server([{ text: 'summary from aux' }]);
    const fixture = await agentFixture({
      raw: { model: { api_key: 'sk-main' } },
      server: { script: [{ text: 'summary from main' }] },
    });
    const seeded = async () => {
      const session = await fixture.store.createSession({ source: 'cli' });
      for (const content of ['one', 'two', 'three', 'four'])
        await fixture.store.appendMessage(session.id, {
          role: content.length === 3 ? 'user' : 'assistant',
          content,
        });
      return session.id;
    };
    const compress = async (compression: Record<string, unknown>) =>
      compressSession({
        store: fixture.store,
        config: resolveConfig({
          model: { base_url: fixture.model.baseUrl, default: 'test-model', api_key: 'sk-main' },
          auxiliary: { compression },
        }),
        sessionId: await seeded(),
        protectLastN: 1,
        secret: () => undefined,
        home: fixture.home,
      });
    await compress({ base_url: aux.baseUrl, model: 'aux-model' });
    await compress({ base_url: fixture.model.baseUrl, model: 'aux-model' });
    expect(keysSent(aux)).toEqual([`Bearer ${NO_KEY_REQUIRED}`]);
    expect(keysSent(fixture.model)).toEqual(['Bearer sk-main']);
  });

  it('a pinned subagent route’s fallback on another base_url without a key is sent no key (a direct delegation endpoint without a key reuses the agent’s, as the reference says)', async () => {
    const deputy = await server([MOVE_ON]);
    const backup = await server([{ text: 'DONE: from the backup' }]);
    const fixture = await agentFixture({
      raw: {
        model: { api_key: 'sk-main' },
        delegation: {
          base_url: deputy.baseUrl,
          model: 'deputy-model',
          fallback_providers: [{ base_url: backup.baseUrl, model: 'backup-model' }],
        },
      },
    });
    const parent = fixture.agent();
    const session = await parent.createSession();
    const result = await delegateTask(
      { tasks: [{ goal: 'Check the build' }] },
      { parent, sessionId: session.id },
    );
    expect(result.results).toMatchObject([
      { status: 'completed', summary: 'DONE: from the backup' },
    ]);
    expect(keysSent(deputy)).toEqual(['Bearer sk-main']);
    expect(keysSent(backup)).toEqual([`Bearer ${NO_KEY_REQUIRED}`]);
  });
});
