import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import {
  type Clock,
  currentProcessIdentity,
  DELEGATION_CLAIM_LEASE_SECONDS,
  DELEGATION_MAX_DELIVERY_ATTEMPTS,
  DELEGATION_OWNER_EXITED_MESSAGE,
  DELEGATION_RESTORE_MAX_AGE_SECONDS,
  DELEGATION_RETENTION_ROWS,
  RELEASED_DELEGATION_OWNER,
} from './index.js';

function settableClock(
  start = 1_800_000_000,
): Clock & { set(seconds: number): void; advance(seconds: number): void } {
  let now = start;
  return {
    now: () => now,
    monotonicMs: () => performance.now(),
    set: (seconds) => {
      now = seconds;
    },
    advance: (seconds) => {
      now += seconds;
    },
  };
}

const deadOwner = { pid: 2_147_483_000, startTicks: null };
const task = { goal: 'review the diff', toolsets: ['files'] };

describe('async delegation ledger', () => {
  it('records running before the child starts, then the terminal result by compare-and-swap on the owner', async () => {
    const { store } = await openTestStore();
    await store.recordDelegationStart({
      delegationId: 'd1',
      sessionKey: 'peer',
      parentSessionId: 'p',
      task,
    });
    expect(store.getDelegation('d1')).toMatchObject({
      state: 'running',
      deliveryState: 'pending',
      ownerPid: process.pid,
    });
    expect(
      await store.recordDelegationTerminal({
        delegationId: 'd1',
        status: 'completed',
        result: { summary: 'ok' },
        owner: deadOwner,
      }),
    ).toBe(false);
    expect(
      await store.recordDelegationTerminal({
        delegationId: 'd1',
        status: 'completed',
        result: { summary: 'ok' },
      }),
    ).toBe(true);
    expect(await store.recordDelegationTerminal({ delegationId: 'd1', status: 'failed' })).toBe(
      false,
    ); // once only
    expect(JSON.parse(store.getDelegation('d1')?.resultJson ?? 'null')).toEqual({ summary: 'ok' });
  });

  it('claims completions with a 300 s lease, re-claims an expired lease, and parks after 8 attempts', async () => {
    const clock = settableClock();
    const { store } = await openTestStore({ clock });
    await store.recordDelegationStart({ delegationId: 'd', task });
    expect(await store.claimCompletionDelivery()).toBeNull(); // still running
    await store.recordDelegationTerminal({ delegationId: 'd', status: 'completed' });
    const claim = await store.claimCompletionDelivery();
    expect(claim?.leaseExpiresAt).toBe(clock.now() + DELEGATION_CLAIM_LEASE_SECONDS);
    expect(await store.claimCompletionDelivery('d')).toBeNull(); // leased
    for (let attempt = 1; attempt < DELEGATION_MAX_DELIVERY_ATTEMPTS; attempt += 1) {
      clock.advance(DELEGATION_CLAIM_LEASE_SECONDS);
      expect(await store.claimCompletionDelivery('d')).not.toBeNull();
    }
    clock.advance(DELEGATION_CLAIM_LEASE_SECONDS);
    expect(await store.claimCompletionDelivery('d')).toBeNull();
    expect(store.getDelegation('d')?.deliveryState).toBe('pending_recovery');
  });

  it('complete, release, defer and drop move the delivery state', async () => {
    const clock = settableClock();
    const { store } = await openTestStore({ clock });
    for (const id of ['a', 'b', 'c', 'd']) {
      await store.recordDelegationStart({ delegationId: id, task });
      await store.recordDelegationTerminal({ delegationId: id, status: 'completed' });
    }
    await store.claimCompletionDelivery('a');
    expect(await store.completeDelegationDelivery('a')).toBe(true);
    await store.claimCompletionDelivery('b');
    expect(await store.releaseDelegationDelivery('b')).toBe(true);
    expect(await store.claimCompletionDelivery('b')).not.toBeNull();
    await store.claimCompletionDelivery('c');
    expect(await store.deferDelegationDelivery('c', 60)).toBe(true);
    expect(await store.claimCompletionDelivery('c')).toBeNull();
    clock.advance(61);
    expect(await store.claimCompletionDelivery('c')).not.toBeNull();
    expect(await store.dropDelegationDelivery('d')).toBe(true);
    expect([
      store.getDelegation('a')?.deliveryState,
      store.getDelegation('d')?.deliveryState,
    ]).toEqual(['delivered', 'dropped']);
  });

  it('on restart, dead owners running rows become unknown and owed completions are restored; old ones dropped', async () => {
    const clock = settableClock();
    const { store } = await openTestStore({ clock });
    await store.recordDelegationStart({ delegationId: 'orphan', task, owner: deadOwner });
    await store.recordDelegationStart({ delegationId: 'alive', task });
    await store.recordDelegationStart({ delegationId: 'old', task, owner: deadOwner });
    await store.recordDelegationTerminal({
      delegationId: 'old',
      status: 'completed',
      owner: deadOwner,
    });
    clock.advance(DELEGATION_RESTORE_MAX_AGE_SECONDS + 1);
    const recovery = await store.recoverDelegations();
    expect(recovery.orphaned).toEqual(['orphan']);
    expect(recovery.dropped).toEqual(['old']);
    expect(recovery.restored.map((row) => [row.delegationId, row.restored])).toEqual([
      ['orphan', true],
    ]);
    expect(store.getDelegation('orphan')).toMatchObject({
      state: 'unknown',
      error: DELEGATION_OWNER_EXITED_MESSAGE,
    });
    expect(store.getDelegation('alive')?.state).toBe('running');
    expect(
      await store.recordDelegationTerminal({
        delegationId: 'orphan',
        status: 'completed',
        owner: deadOwner,
      }),
    ).toBe(false);
    expect(currentProcessIdentity().pid).toBe(process.pid);
  });

  it('keeps at most 50 settled rows and none older than 7 days', async () => {
    const clock = settableClock();
    const { store } = await openTestStore({ clock });
    for (let index = 0; index < DELEGATION_RETENTION_ROWS + 5; index += 1) {
      const id = `d${index}`;
      await store.recordDelegationStart({ delegationId: id, task });
      await store.recordDelegationTerminal({ delegationId: id, status: 'completed' });
      await store.dropDelegationDelivery(id);
      clock.advance(1);
    }
    await store.recordDelegationStart({ delegationId: 'live', task });
    expect(await store.pruneDelegations()).toBe(5);
    expect(store.getDelegation('d0')).toBeUndefined();
    expect(store.getDelegation(`d${DELEGATION_RETENTION_ROWS + 4}`)).toBeDefined();
    clock.advance(8 * 24 * 3600);
    expect(await store.pruneDelegations()).toBe(DELEGATION_RETENTION_ROWS);
    expect(store.getDelegation('live')?.state).toBe('running');
  });

  it('hands a dead owner’s running row to exactly one of two handles on the same file, with the new task', async () => {
    const { store, databasePath } = await openTestStore();
    const other = await reopenStore(databasePath);
    await store.recordDelegationStart({ delegationId: 'd1', task, owner: deadOwner });
    expect(store.listLiveDelegations().map((row) => row.delegationId)).toEqual(['d1']);
    const resumedTask = { ...task, resume_count: 1 };
    const first = { pid: 4242, startTicks: 'first' };
    const second = { pid: 4343, startTicks: 'second' };
    const outcomes = await Promise.all([
      store.transferDelegationOwner({
        delegationId: 'd1',
        from: deadOwner,
        to: first,
        task: resumedTask,
      }),
      other.transferDelegationOwner({
        delegationId: 'd1',
        from: deadOwner,
        to: second,
        task: resumedTask,
      }),
    ]);
    expect(outcomes).toEqual([true, false]);
    const row = other.getDelegation('d1');
    expect(row).toMatchObject({ state: 'running', ownerPid: 4242, ownerStartedAt: 'first' });
    expect(JSON.parse(row?.taskJson ?? '{}')).toEqual(resumedTask);
    // A terminal row never changes hands.
    await store.recordDelegationTerminal({ delegationId: 'd1', status: 'completed', owner: first });
    expect(
      await store.transferDelegationOwner({ delegationId: 'd1', from: first, to: second }),
    ).toBe(false);
    expect(store.listLiveDelegations()).toEqual([]);
  });

  it('lets go of a row on purpose: released, it is no live process’s and recovery may take it', async () => {
    const { store } = await openTestStore();
    await store.recordDelegationStart({ delegationId: 'd1', task });
    expect(
      await store.transferDelegationOwner({
        delegationId: 'd1',
        from: currentProcessIdentity(),
        to: RELEASED_DELEGATION_OWNER,
      }),
    ).toBe(true);
    expect(store.getDelegation('d1')).toMatchObject({ state: 'running', ownerPid: 0 });
    expect(JSON.parse(store.getDelegation('d1')?.taskJson ?? '{}')).toEqual(task);
    // This process no longer owns it: its late terminal write is refused.
    expect(await store.recordDelegationTerminal({ delegationId: 'd1', status: 'completed' })).toBe(
      false,
    );
    expect((await store.recoverDelegations()).orphaned).toEqual(['d1']);
  });
});
