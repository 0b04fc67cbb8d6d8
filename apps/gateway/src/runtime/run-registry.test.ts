import { describe, expect, it } from 'vitest';
import { MAX_FINISHED_RUNS, RunRegistry } from './run-registry.js';

describe('RunRegistry idempotency keys', () => {
  it('makes a second request with a held key wait, then answers the run the first one started', async () => {
    const runs = new RunRegistry();
    const first = await runs.claimIdempotencyKey('default', 'k');
    if (!('release' in first)) throw new Error('the first request should hold the key');
    let settled = false;
    const second = runs.claimIdempotencyKey('default', 'k').then((claim) => {
      settled = true;
      return claim;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    const run = runs.create({ profile: 'default', sessionId: 's1', idempotencyKey: 'k' });
    first.release();
    expect(await second).toEqual({ existing: run });
  });

  it('lets the next waiter claim a key the first request released after a refusal', async () => {
    const runs = new RunRegistry();
    const first = await runs.claimIdempotencyKey('default', 'k');
    if (!('release' in first)) throw new Error('the first request should hold the key');
    const second = runs.claimIdempotencyKey('default', 'k');
    const third = runs.claimIdempotencyKey('default', 'k');
    const refused = runs.create({ profile: 'default', sessionId: 's1', idempotencyKey: 'k' });
    runs.releaseIdempotencyKey(refused);
    first.release();
    const next = await second;
    expect('release' in next).toBe(true);
    // The third still waits: the second holds the key now.
    let thirdSettled = false;
    void third.then(() => {
      thirdSettled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdSettled).toBe(false);
    const run = runs.create({ profile: 'default', sessionId: 's2', idempotencyKey: 'k' });
    if ('release' in next) next.release();
    expect(await third).toEqual({ existing: run });
  });

  it('keeps keys apart per profile', async () => {
    const runs = new RunRegistry();
    const held = await runs.claimIdempotencyKey('default', 'k');
    const other = await runs.claimIdempotencyKey('work', 'k');
    expect('release' in held && 'release' in other).toBe(true);
  });

  it('keeps a key on the newer run when an older, refused run with that key is pruned', () => {
    const runs = new RunRegistry();
    const refused = runs.create({ profile: 'default', sessionId: 's1', idempotencyKey: 'k' });
    runs.releaseIdempotencyKey(refused);
    runs.finish(refused, 'failed');
    const retried = runs.create({ profile: 'default', sessionId: 's1', idempotencyKey: 'k' });
    runs.finish(retried, 'completed');
    for (let index = 0; index < MAX_FINISHED_RUNS - 1; index += 1)
      runs.finish(runs.create({ profile: 'default', sessionId: `s${index}` }), 'completed');
    expect(runs.get('default', refused.id)).toBeUndefined();
    expect(runs.byIdempotencyKey('default', 'k')?.id).toBe(retried.id);
  });
});
