import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CODE_IDENTITY_FAILED_LOG,
  createIdentifyHandler,
  createStatusHandler,
} from './default-verbs.js';
import { runtimeStatusPath, writeRuntimeStatus } from './runtime-status.js';

const request = { verb: 'identify' };

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('identify payload', () => {
  it('labels a profile home by its name and the root as default', async () => {
    const root = await tempHome();
    const work = path.join(root.path, 'profiles', 'work');
    await mkdir(work, { recursive: true });
    vi.stubEnv('HERMES_HOME', work);
    expect(await createIdentifyHandler({ home: work })(request)).toMatchObject({ profile: 'work' });
    expect(await createIdentifyHandler({ home: root.path })(request)).toMatchObject({
      profile: 'default',
    });
  });

  it('labels a custom home null', async () => {
    const root = await tempHome();
    vi.stubEnv('HERMES_HOME', root.path);
    const other = await tempHome();
    expect(await createIdentifyHandler({ home: other.path })(request)).toMatchObject({
      profile: null,
    });
  });

  it('declares its supervisor from its own environment and argv', async () => {
    const home = await tempHome();
    const handler = createIdentifyHandler({
      home: home.path,
      env: { INVOCATION_ID: 'abc' },
      argv: ['node'],
    });
    expect(await handler(request)).toMatchObject({ supervisor: 'systemd' });
    const external = createIdentifyHandler({
      home: home.path,
      env: {},
      argv: ['node', '--external-supervisor'],
    });
    expect(await external(request)).toMatchObject({ supervisor: 'external' });
    const container = { home: home.path, env: {}, argv: ['node'] };
    expect(await createIdentifyHandler({ ...container, inContainer: true })(request)).toMatchObject(
      { supervisor: 'docker' },
    );
    expect(
      await createIdentifyHandler({ ...container, inContainer: false })(request),
    ).toMatchObject({ supervisor: 'manual' });
  });

  it('lists served_profiles only when runtime status holds a non-empty list', async () => {
    const home = await tempHome();
    const handler = createIdentifyHandler({ home: home.path, servedProfilesMaxAgeMs: 0 });
    expect(await handler(request)).not.toHaveProperty('served_profiles');
    await writeFile(runtimeStatusPath(home.path), JSON.stringify({ served_profiles: [] }));
    expect(await handler(request)).not.toHaveProperty('served_profiles');
    await writeFile(
      runtimeStatusPath(home.path),
      JSON.stringify({ served_profiles: ['default', 'work'] }),
    );
    expect(await handler(request)).toMatchObject({ served_profiles: ['default', 'work'] });
  });

  it('sees another writer’s served_profiles only after the cache age, and its own writes at once', async () => {
    const home = await tempHome();
    const handler = createIdentifyHandler({ home: home.path, servedProfilesMaxAgeMs: 60_000 });
    expect(await handler(request)).not.toHaveProperty('served_profiles');
    await writeFile(runtimeStatusPath(home.path), JSON.stringify({ served_profiles: ['a'] }));
    expect(await handler(request)).not.toHaveProperty('served_profiles');
    const writer = { pid: process.pid, argv: [], startTime: null, home: home.path };
    await writeRuntimeStatus(home.path, { servedProfiles: ['default', 'work'] }, writer);
    expect(await handler(request)).toMatchObject({ served_profiles: ['default', 'work'] });
  });

  it('omits both code fields when the identity lookup fails, and says why once', async () => {
    const home = await tempHome();
    const warnings: string[] = [];
    const handler = createIdentifyHandler({
      home: home.path,
      codeIdentity: () => {
        throw new ReferenceError('BUILD_SHA is not defined');
      },
      logger: { info() {}, debug() {}, warn: (message) => warnings.push(message) },
    });
    const payload = await handler(request);
    expect(payload).not.toHaveProperty('code_sha');
    expect(payload).not.toHaveProperty('code_version');
    expect(payload).toMatchObject({ pid: process.pid, protocol: 1 });
    await handler(request);
    expect(warnings).toEqual([
      `${CODE_IDENTITY_FAILED_LOG}ReferenceError: BUILD_SHA is not defined`,
    ]);
  });
});

describe('identify code identity', () => {
  it('awaits an asynchronous provider, and says once why a rejected one left the fields out', async () => {
    const home = await tempHome();
    const identified = createIdentifyHandler({
      home: home.path,
      codeIdentity: async () => ({ sha: 'abc123', version: '1.2.3' }),
    });
    expect(await identified(request)).toMatchObject({ code_sha: 'abc123', code_version: '1.2.3' });
    const thenable = createIdentifyHandler({
      home: home.path,
      // A promise of another library: awaited like a native one.
      codeIdentity: () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is the point.
          then: (resolve: (identity: { sha: string; version: null }) => void) =>
            resolve({ sha: 'def456', version: null }),
        }) as unknown as Promise<{ sha: string; version: null }>,
    });
    expect(await thenable(request)).toMatchObject({ code_sha: 'def456', code_version: null });

    const warnings: string[] = [];
    const failing = createIdentifyHandler({
      home: home.path,
      codeIdentity: async () => {
        throw new Error('git not found');
      },
      logger: { info() {}, debug() {}, warn: (message) => warnings.push(message) },
    });
    const payload = await failing(request);
    await failing(request);
    expect(payload).not.toHaveProperty('code_sha');
    expect(payload).not.toHaveProperty('code_version');
    expect(warnings).toEqual([`${CODE_IDENTITY_FAILED_LOG}Error: git not found`]);
  });

  it('answers the fields in the same order every time', async () => {
    const home = await tempHome();
    const handler = createIdentifyHandler({
      home: home.path,
      codeIdentity: () => ({ sha: 'abc', version: '1' }),
    });
    const keys = Object.keys((await handler(request)) as object);
    expect(keys).toEqual([
      'protocol',
      'kind',
      'pid',
      'start_time',
      'hermes_home',
      'profile',
      'supervisor',
      'code_sha',
      'code_version',
    ]);
    expect(Object.keys((await handler(request)) as object)).toEqual(keys);
  });
});

describe('status payload', () => {
  it('answers an empty record plus protocol, answered_at and answering_pid when no file exists', async () => {
    const home = await tempHome();
    const handler = createStatusHandler({ home: home.path, now: () => 1_700_000_000_500 });
    expect(await handler({ verb: 'status' })).toEqual({
      protocol: 1,
      answered_at: 1_700_000_000.5,
      answering_pid: process.pid,
    });
  });
});
