import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import { runApiFuzz, startFuzzModel } from './http-fuzz/api-fuzz.js';
import { StoreWatch, snapshotDifference } from './http-fuzz/judge.js';
import type { FuzzSettings } from './http-fuzz/mutations.js';

/**
 * The HTTP fuzz of `http-fuzz.e2e.test.ts` on a gateway that multiplexes profiles
 * (docs/gateway.md §Profiles), every request addressed to the served profile `work` under its
 * prefix (and its spellings: case, escapes, spaces) with work's own key. Mutations put another
 * served profile's prefix (the default one), a parked, unknown or invalid one (odd characters,
 * encoded slashes, `..`, very long, unicode) or the default profile's key in its place. Besides
 * the judgement of every answer: the default profile's `state.db` never changes (but for a
 * request that names it with its own key), a refusal changes nothing in work's, an unserved
 * prefix answers the documented 404 and a served one never does, and another profile's key is
 * refused. `HERMES_FUZZ_SEED` replays another run, `HERMES_PROFILE_FUZZ_REQUESTS` sizes it.
 */
const SEED = Number(process.env.HERMES_FUZZ_SEED ?? 0x9e3779b9);
const REQUESTS = Number(process.env.HERMES_PROFILE_FUZZ_REQUESTS ?? 1000);
const DEFAULT_KEY = 'default-fuzz-key-0123456789';
const WORK_KEY = 'work-fuzz-key-9876543210';
const SETTINGS: FuzzSettings = {
  apiKey: WORK_KEY,
  maxRequestBytes: 64 * 1024,
  profile: {
    prefix: '/p/work',
    aliases: ['/p/WORK', '/p/%77ork', '/p/%20work%20'],
    otherKey: DEFAULT_KEY,
  },
};
const BROWSER = 'browser:\n  extension_control:\n    enabled: true\n';

describe('multiplexed profiles under generated bad input', () => {
  it("keeps each profile's store and key its own under every mutated prefix, never 5xx", async () => {
    const { model, control } = await startFuzzModel(REQUESTS);
    const root = (await tempHome()).path;
    await writeConfig(
      root,
      modelConfig(
        model.baseUrl,
        `gateway:\n  multiplex_profiles: true\napi_server:\n  key: ${DEFAULT_KEY}\n  max_request_bytes: ${SETTINGS.maxRequestBytes}\n${BROWSER}`,
      ),
    );
    const work = path.join(root, 'profiles', 'work');
    const parked = path.join(root, 'profiles', 'parked');
    for (const home of [work, parked]) await mkdir(home, { recursive: true, mode: 0o700 });
    await writeConfig(
      work,
      modelConfig(model.baseUrl, `api_server:\n  key: ${WORK_KEY}\n${BROWSER}`),
    );
    await writeConfig(parked, modelConfig(model.baseUrl, `api_server:\n  key: ${WORK_KEY}\n`));
    await writeFile(path.join(parked, 'gateway.parked'), '');
    const gateway = await startGateway({ home: root, env: { HERMES_LOG_LEVEL: 'info' } });
    onTestFinished(async () => {
      await gateway.process.stop();
    });

    const defaultStore = new Database(path.join(root, 'state.db'), { readonly: true });
    onTestFinished(() => {
      defaultStore.close();
    });
    const defaultWatch = new StoreWatch(defaultStore);
    let baseline = defaultWatch.current();
    let touched = 0;
    console.log(
      `profiles fuzz: seed ${SEED} (HERMES_FUZZ_SEED=${SEED} replays it), ${REQUESTS} requests under /p/work`,
    );
    const { failures, summary, call } = await runApiFuzz({
      gateway,
      model,
      control,
      home: work,
      seed: SEED,
      requests: REQUESTS,
      settings: SETTINGS,
      check: (fuzzCase) => {
        // A request the default profile may take: its store is what it is afterwards.
        if (fuzzCase.touchesOther) {
          touched += 1;
          baseline = defaultWatch.current();
          return [];
        }
        const change = snapshotDifference(baseline, defaultWatch.current());
        if (change === null) return [];
        baseline = defaultWatch.current();
        return [`the default profile's store changed: ${change}`];
      },
    });
    console.log(`profiles fuzz: ${summary}; ${touched} addressed the default profile with its key`);
    if (failures.length > 0)
      throw new Error(
        `profiles fuzz, seed ${SEED} (rerun with HERMES_FUZZ_SEED=${SEED}):\n\n${failures.join('\n\n')}`,
      );
    // Each key still opens its own profile only.
    expect(await call('GET', '/v1/models')).toMatchObject({ data: [{ id: 'work' }] });
    const listing = await gateway.json<{ data: unknown[] }>('/api/sessions', { key: DEFAULT_KEY });
    expect(listing.status).toBe(200);
    expect((await gateway.json('/api/sessions', { key: WORK_KEY })).status).toBe(401);
  }, 60_000);
});
