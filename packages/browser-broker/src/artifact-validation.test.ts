import path from 'node:path';
import { ArtifactStore } from '@hermes/artifact-store';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import { FRAME_COMMAND } from './constants.js';
import { ControllerRejected } from './errors.js';
import type { BrowserControlFrame } from './frames.js';
import { createScope } from './scope.js';

const PRINCIPAL = 'principal:default:0123456789abcdef0123456789abcdef';

function scopeFor(profileId: string) {
  return createScope({
    principalId: PRINCIPAL,
    profileId,
    sessionId: 'session-1',
    controllerId: 'controller-1',
    browserProfileId: 'chrome',
    transportFamily: 'local-api',
    capabilities: ['browser_artifact_upload', 'browser_artifact_download'],
  });
}

async function openStore(name: string) {
  const home = await tempHome();
  return ArtifactStore.open({ root: path.join(home.path, name) });
}

/** A broker with an attached controller that answers every command ok. */
async function setup(profileId = 'default') {
  const broker = new BrowserControlBroker({ developerMode: false, commandTimeoutSeconds: 5 });
  const frames: BrowserControlFrame[] = [];
  await broker.attach(
    scopeFor(profileId),
    (frame) => {
      frames.push(frame);
      if (frame.method === FRAME_COMMAND) {
        broker.complete(String(frame.params.command_id), { ok: true, result: 'uploaded' });
      }
    },
    {},
  );
  return { broker, frames, scope: scopeFor(profileId) };
}

async function upload(
  store: ArtifactStore,
  principalId = PRINCIPAL,
  transportFamily = 'local-api',
) {
  const receipt = await store.store({
    data: new TextEncoder().encode('{"a":1}'),
    filename: 'a.json',
    contentType: 'application/json',
    // An HTTP upload has no session: principal + family is the ownership boundary.
    scope: { principalId, transportFamily },
  });
  return receipt.artifactId;
}

async function rejection(promise: Promise<unknown>): Promise<ControllerRejected> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ControllerRejected);
  return error as ControllerRejected;
}

describe('artifact actions', () => {
  it('are rejected without an attached store, before any frame is written', async () => {
    const { broker, frames, scope } = await setup();
    const error = await rejection(
      broker.dispatch({
        scope,
        action: 'browser_artifact_upload',
        arguments: { artifact_id: 'a'.repeat(32) },
      }),
    );
    expect(error.message).toContain('artifact store');
    expect(frames).toHaveLength(0);
  });

  it('need a non-empty artifact_id', async () => {
    const { broker, frames, scope } = await setup();
    broker.attachArtifactStore(await openStore('default'));
    for (const args of [{}, { artifact_id: '   ' }, { artifact_id: 42 }]) {
      const error = await rejection(
        broker.dispatch({ scope, action: 'browser_artifact_upload', arguments: args }),
      );
      expect(error.message).toBe('browser_artifact_upload requires a non-empty artifact_id');
    }
    expect(frames).toHaveLength(0);
  });

  it('refuse an unknown id without writing a frame', async () => {
    const { broker, frames, scope } = await setup();
    broker.attachArtifactStore(await openStore('default'));
    const error = await rejection(
      broker.dispatch({
        scope,
        action: 'browser_artifact_download',
        arguments: { artifact_id: 'f'.repeat(32) },
      }),
    );
    expect(error.message).toContain('unknown artifact');
    expect(frames).toHaveLength(0);
  });

  it('refuse an artifact uploaded by another principal', async () => {
    const { broker, scope } = await setup();
    const store = await openStore('default');
    broker.attachArtifactStore(store);
    const foreign = await upload(store, 'principal:default:ffffffffffffffffffffffffffffffff');
    const error = await rejection(
      broker.dispatch({
        scope,
        action: 'browser_artifact_upload',
        arguments: { artifact_id: foreign },
      }),
    );
    expect(error.message).toContain('different scope');
  });

  it('dispatch an approved id, carrying only the id and leaving the artifact downloadable', async () => {
    const { broker, frames, scope } = await setup();
    const store = await openStore('default');
    broker.attachArtifactStore(store);
    const artifactId = await upload(store);
    const result = await broker.dispatch({
      scope,
      action: 'browser_artifact_upload',
      arguments: { artifact_id: ` ${artifactId} ` },
    });
    expect(result).toBe('uploaded');
    expect(frames[0]?.params.arguments).toEqual({ artifact_id: artifactId });
    const loaded = await store.load(artifactId, {
      principalId: PRINCIPAL,
      transportFamily: 'local-api',
    });
    expect(loaded.receipt.artifactId).toBe(artifactId);
  });

  it("resolve the scope's profile store before the default slot", async () => {
    const { broker, scope } = await setup('work');
    const defaultStore = await openStore('default');
    const workStore = await openStore('work');
    broker.attachArtifactStore(defaultStore);
    broker.attachArtifactStore(workStore, 'work');
    const inWork = await upload(workStore);
    const inDefault = await upload(defaultStore);
    await expect(
      broker.dispatch({
        scope,
        action: 'browser_artifact_upload',
        arguments: { artifact_id: inWork },
      }),
    ).resolves.toBe('uploaded');
    await rejection(
      broker.dispatch({
        scope,
        action: 'browser_artifact_upload',
        arguments: { artifact_id: inDefault },
      }),
    );
    broker.attachArtifactStore(null, 'work');
    await expect(
      broker.dispatch({
        scope,
        action: 'browser_artifact_upload',
        arguments: { artifact_id: inDefault },
      }),
    ).resolves.toBe('uploaded');
  });
});
