import { rm } from 'node:fs/promises';
import {
  type AsyncDelegationRecord,
  currentProcessIdentity,
  DELEGATION_CLAIM_LEASE_SECONDS,
  DELEGATION_OWNER_EXITED_MESSAGE,
  isProcessAlive,
  LIVE_DELEGATION_STATES,
  type SessionStore,
} from '@hermes/session-store';
import type { DelegationResultRecord } from './completion-event.js';
import {
  listCheckpointIds,
  listClaimMarkers,
  readPartialResults,
  readTerminalCheckpoint,
  removeCheckpoints,
} from './ledger-files.js';

/*
 * Recovery of what processes that died left in the ledger files: delivery claims to give back and
 * terminal results they had checkpointed but not recorded.
 */

const LIVE: readonly string[] = LIVE_DELEGATION_STATES;

/**
 * Gives back the delivery claims that processes which died had taken (each announced by a claim
 * marker), at once instead of after the lease, and removes their markers: the ids released.
 */
export async function releaseDeadClaims(store: SessionStore, home: string): Promise<string[]> {
  const released: string[] = [];
  const self = currentProcessIdentity();
  for (const marker of await listClaimMarkers(home)) {
    if (marker.pid === self.pid) continue;
    if (isProcessAlive({ pid: marker.pid, startTicks: marker.startTicks })) continue;
    const row = store.getDelegation(marker.delegationId);
    if (row?.deliveryState === 'claimed' && row.claimExpiresAt !== null) {
      const claimedAt = row.claimExpiresAt - DELEGATION_CLAIM_LEASE_SECONDS;
      // Only the claim this marker announced: made just after it was written. A later claim
      // (after that lease expired) belongs to someone else.
      if (claimedAt >= marker.writtenAt - 1 && claimedAt <= marker.writtenAt + 60) {
        if (await store.releaseDelegationDelivery(marker.delegationId))
          released.push(marker.delegationId);
      }
    }
    await rm(marker.file, { force: true }).catch(() => {});
  }
  return released;
}

/**
 * Records the terminal results that owners which died had checkpointed but not stored; a unit
 * with only partial results (some children finished) ends `unknown` with them — unless it will run
 * again (`willResume`), whose run replaces them. The ids recorded; checkpoints of settled rows go.
 */
export async function applyDeadCheckpoints(input: {
  readonly store: SessionStore;
  readonly home: string;
  /** The unit is this process's own (running here). */
  readonly holds: (delegationId: string) => boolean;
  /** The row is about to be taken over and run again. */
  readonly willResume: (row: AsyncDelegationRecord) => boolean;
}): Promise<string[]> {
  const { store, home } = input;
  const applied: string[] = [];
  for (const id of await listCheckpointIds(home)) {
    if (input.holds(id)) continue;
    const row = store.getDelegation(id);
    if (!row || !LIVE.includes(row.state)) {
      await removeCheckpoints(home, id);
      continue;
    }
    const owner = { pid: row.ownerPid, startTicks: row.ownerStartedAt };
    if (isProcessAlive(owner)) continue;
    const terminal = await readTerminalCheckpoint(home, id);
    // Only partial results of a unit that will run again: that run replaces them.
    if (!terminal && input.willResume(row)) continue;
    let recorded = false;
    if (terminal) {
      recorded = await store.recordDelegationTerminal({
        delegationId: id,
        status: terminal.status,
        result: terminal.result,
        error: terminal.error,
        owner,
      });
    } else {
      const partial = await readPartialResults(home, id);
      if (partial.length > 0)
        recorded = await store.recordDelegationTerminal({
          delegationId: id,
          status: 'unknown',
          result: {
            status: 'unknown',
            results: partial,
            error: DELEGATION_OWNER_EXITED_MESSAGE,
          } satisfies DelegationResultRecord,
          error: DELEGATION_OWNER_EXITED_MESSAGE,
          owner,
        });
    }
    if (recorded) applied.push(id);
    await removeCheckpoints(home, id);
  }
  return applied;
}
