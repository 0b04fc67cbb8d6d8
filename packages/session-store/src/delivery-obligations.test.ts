import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { OBLIGATION_MAX_ATTEMPTS, type SessionStore } from './index.js';

const deadOwner = { pid: 2_147_483_000, startTicks: null };
const input = {
  sessionKey: 'peer-1',
  messageRef: 'm1',
  platform: 'telegram',
  chatId: 'c1',
  content: 'final reply',
};

async function recordAsDeadOwner(
  store: SessionStore,
  overrides: Partial<typeof input> = {},
): Promise<string> {
  const { obligationId } = await store.recordObligation({ ...input, ...overrides });
  // Re-home the row to a pid that cannot exist, as if the previous gateway had died.
  await store.withWriteTransaction((database) =>
    database
      .prepare(
        'UPDATE delivery_obligations SET owner_pid = ?, owner_started_at = NULL WHERE obligation_id = ?',
      )
      .run(deadOwner.pid, obligationId),
  );
  return obligationId;
}

/** A clock stopped at `now` (epoch seconds), so retry times can be compared exactly. */
function fixedClock(now: number) {
  return { now: () => now, monotonicMs: () => performance.now() };
}

describe('delivery obligations', () => {
  it('records idempotently with a stable id before the send', async () => {
    const { store } = await openTestStore();
    const first = await store.recordObligation(input);
    const again = await store.recordObligation(input);
    expect(first.created).toBe(true);
    expect(again).toEqual({ obligationId: first.obligationId, created: false });
    expect(first.obligationId).toMatch(/^[0-9a-f]{24}$/);
    expect(store.getObligation(first.obligationId)).toMatchObject({
      state: 'pending',
      ownerPid: process.pid,
    });
  });

  it('claims dead owners rows, clears resume_pending for their sessions in the same step, and marks recovered sends', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'telegram', sessionKey: 'peer-1' });
    await store.setResumePending('s', 'restart_timeout');
    const neverTried = await recordAsDeadOwner(store);
    const inFlight = await recordAsDeadOwner(store, { messageRef: 'm2' });
    await store.withWriteTransaction((database) =>
      database
        .prepare(
          "UPDATE delivery_obligations SET state = 'attempting', attempts = 1 WHERE obligation_id = ?",
        )
        .run(inFlight),
    );
    const claimed = await store.claimPendingObligations();
    expect(claimed.map((row) => [row.obligationId, row.needsRecoveredMarker])).toEqual([
      [neverTried, false],
      [inFlight, true],
    ]);
    expect(store.requireSession('s').resumePending).toBe(0);
    expect(await store.claimPendingObligations()).toEqual([]); // now owned by a live process: us
    expect(await store.completeObligation(neverTried)).toBe(true);
    expect(store.getObligation(neverTried)?.state).toBe('delivered');
  });

  it('leaves rows of live owners and of offline platforms alone', async () => {
    const { store } = await openTestStore();
    await store.recordObligation(input); // owned by this live process
    await recordAsDeadOwner(store, { messageRef: 'x', platform: 'discord' });
    expect(await store.claimPendingObligations({ platforms: ['telegram'] })).toEqual([]);
    expect(await store.claimPendingObligations({ platforms: ['discord'] })).toHaveLength(1);
  });

  it('adopts rows still inside a flood-control wait instead of sending them now', async () => {
    const { store } = await openTestStore();
    const { obligationId } = await store.recordObligation(input);
    expect(await store.failObligation(obligationId, 'flood_control:120')).toBe('pending');
    const row = store.getObligation(obligationId);
    expect((row?.notBefore ?? 0) - Date.now() / 1000).toBeGreaterThan(100);
    await store.withWriteTransaction((database) =>
      database
        .prepare('UPDATE delivery_obligations SET owner_pid = ? WHERE obligation_id = ?')
        .run(deadOwner.pid, obligationId),
    );
    const [claimed] = await store.claimPendingObligations();
    expect(claimed?.adopted).toBe(true);
  });

  it('backs off after a failed send and gives up after the maximum attempts', async () => {
    const { store } = await openTestStore();
    const { obligationId } = await store.recordObligation(input);
    const states: (string | null)[] = [];
    for (let attempt = 0; attempt < OBLIGATION_MAX_ATTEMPTS; attempt += 1) {
      states.push(await store.failObligation(obligationId, 'network down'));
    }
    expect(states).toEqual(['pending', 'pending', 'failed']);
    expect(store.getObligation(obligationId)).toMatchObject({
      attempts: 3,
      lastError: 'network down',
    });
  });

  it('waits 30 s after the first failed send and 120 s after the second; a row that gave up waits for nothing', async () => {
    const now = 1_800_000_000;
    const { store } = await openTestStore({ clock: fixedClock(now) });
    const { obligationId } = await store.recordObligation(input);
    const retries: [string | null, number | null][] = [];
    for (let attempt = 0; attempt < OBLIGATION_MAX_ATTEMPTS; attempt += 1) {
      const state = await store.failObligation(obligationId, 'network down');
      retries.push([state, store.getObligation(obligationId)?.notBefore ?? null]);
    }
    expect(retries).toEqual([
      ['pending', now + 30],
      ['pending', now + 120],
      ['failed', null],
    ]);
  });

  it("honours a platform's flood-control wait (its seconds plus 2 s, at most 15 min, 60 s when it names none) without giving up", async () => {
    const now = 1_800_000_000;
    const { store } = await openTestStore({ clock: fixedClock(now) });
    const waits: Record<string, number | null> = {};
    for (const error of [
      'flood_control:2.5',
      'flood_control:7200',
      'flood_control:0',
      'flood_control:12 retry later',
      'send failed: flood_control:5', // not a flood-control error: an ordinary failure
    ]) {
      const { obligationId } = await store.recordObligation({ ...input, messageRef: error });
      expect(await store.failObligation(obligationId, error)).toBe('pending');
      waits[error] = (store.getObligation(obligationId)?.notBefore ?? now) - now;
    }
    expect(waits).toEqual({
      'flood_control:2.5': 4.5,
      'flood_control:7200': 15 * 60 + 2,
      'flood_control:0': 62,
      'flood_control:12 retry later': 14,
      'send failed: flood_control:5': 30,
    });
    // Rate limiting is the platform's pace: a row held back by it never runs out of attempts.
    const { obligationId } = await store.recordObligation({ ...input, messageRef: 'flooded' });
    for (let attempt = 0; attempt < OBLIGATION_MAX_ATTEMPTS + 1; attempt += 1)
      expect(await store.failObligation(obligationId, 'flood_control:1')).toBe('pending');
  });

  it('another process cannot count a failed send against an obligation it does not own', async () => {
    const { store } = await openTestStore();
    const id = await recordAsDeadOwner(store);
    const before = store.getObligation(id);
    expect(await store.failObligation(id, 'network down')).toBeNull();
    expect(store.getObligation(id)).toEqual(before);
  });

  it('sends a claimed row whose flood-control wait is over instead of adopting it', async () => {
    let now = 1_800_000_000;
    const { store } = await openTestStore({
      clock: { now: () => now, monotonicMs: () => performance.now() },
    });
    const { obligationId } = await store.recordObligation(input);
    await store.failObligation(obligationId, 'flood_control:10');
    await store.withWriteTransaction((database) =>
      database
        .prepare('UPDATE delivery_obligations SET owner_pid = ? WHERE obligation_id = ?')
        .run(deadOwner.pid, obligationId),
    );
    now += 13;
    const [claimed] = await store.claimPendingObligations();
    expect(claimed).toMatchObject({ obligationId, adopted: false });
  });

  it('puts a send attempt on record before the send: pending becomes attempting, counted once', async () => {
    const { store } = await openTestStore();
    const { obligationId } = await store.recordObligation(input);
    expect(await store.beginObligationAttempt(obligationId)).toBe(true);
    expect(store.getObligation(obligationId)).toMatchObject({ state: 'attempting', attempts: 1 });
    // A second begin for the same send (the caller retrying its bookkeeping) counts nothing.
    expect(await store.beginObligationAttempt(obligationId)).toBe(true);
    expect(store.getObligation(obligationId)?.attempts).toBe(1);
    expect(await store.completeObligation(obligationId)).toBe(true);
    expect(store.getObligation(obligationId)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('counts each begun send once when it fails, so the third failed send gives up', async () => {
    const { store } = await openTestStore();
    const { obligationId } = await store.recordObligation(input);
    const states: (string | null)[] = [];
    for (let attempt = 0; attempt < OBLIGATION_MAX_ATTEMPTS; attempt += 1) {
      expect(await store.beginObligationAttempt(obligationId)).toBe(true);
      states.push(await store.failObligation(obligationId, 'network down'));
      expect(store.getObligation(obligationId)?.attempts).toBe(attempt + 1);
    }
    expect(states).toEqual(['pending', 'pending', 'failed']);
    expect(await store.beginObligationAttempt(obligationId)).toBe(false);
  });

  it('a row claimed at startup is already attempting: beginning its send counts nothing more', async () => {
    const { store } = await openTestStore();
    const id = await recordAsDeadOwner(store);
    const [claimed] = await store.claimPendingObligations();
    expect(claimed).toMatchObject({ obligationId: id, attempts: 1 });
    expect(await store.beginObligationAttempt(id)).toBe(true);
    expect(store.getObligation(id)).toMatchObject({ state: 'attempting', attempts: 1 });
  });

  it('refuses to begin a send of an unknown, settled or foreign obligation and changes nothing', async () => {
    const { store } = await openTestStore();
    expect(await store.beginObligationAttempt('0'.repeat(24))).toBe(false);
    const delivered = (await store.recordObligation({ ...input, messageRef: 'd' })).obligationId;
    await store.completeObligation(delivered);
    const abandoned = (await store.recordObligation({ ...input, messageRef: 'a' })).obligationId;
    await store.withWriteTransaction((database) =>
      database
        .prepare("UPDATE delivery_obligations SET state = 'abandoned' WHERE obligation_id = ?")
        .run(abandoned),
    );
    const foreign = await recordAsDeadOwner(store, { messageRef: 'f' });
    for (const id of [delivered, abandoned, foreign]) {
      const before = store.getObligation(id);
      expect(await store.beginObligationAttempt(id), id).toBe(false);
      expect(store.getObligation(id)).toEqual(before);
    }
  });

  it('another process cannot complete an obligation it does not own', async () => {
    const { store } = await openTestStore();
    const id = await recordAsDeadOwner(store);
    expect(await store.completeObligation(id)).toBe(false);
    expect(await store.releaseObligation(id)).toBe(false);
  });
});
