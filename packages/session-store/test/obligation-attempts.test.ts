import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { obligationIdFor } from '../src/index.js';
import { openTestStore } from './helpers.js';
import { runFixture } from './processes.js';

const OBLIGATIONS = 300;
const MAX_KILLS = 10;
const WANTED_MID_SEND_KILLS = 3;

function readSink(sinkPath: string): { id: string; marked: boolean }[] {
  let text = '';
  try {
    text = readFileSync(sinkPath, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [id = '', how] = line.split(' ');
      return { id, marked: how === 'marked' };
    });
}

describe('send attempts across processes', () => {
  it('a live process can neither begin nor claim another live process’s obligation; after a SIGKILL only the begun send is resent marked', async () => {
    const { store, databasePath } = await openTestStore();
    const recorded = await runFixture(
      'obligation-owner.ts',
      [databasePath, 'a', 'record'],
      'ready',
    );
    const begun = await runFixture('obligation-owner.ts', [databasePath, 'b', 'begin'], 'ready');
    const idOf = (child: typeof recorded) => /ready ([0-9a-f]{24})/.exec(child.stdout())?.[1] ?? '';
    const neverSent = idOf(recorded);
    const inFlight = idOf(begun);
    expect(store.getObligation(inFlight)).toMatchObject({ state: 'attempting', attempts: 1 });

    for (const id of [neverSent, inFlight]) {
      const before = store.getObligation(id);
      expect(await store.beginObligationAttempt(id), id).toBe(false);
      expect(store.getObligation(id)).toEqual(before);
    }
    expect(await store.claimPendingObligations()).toEqual([]); // both owners are alive

    for (const child of [recorded, begun]) {
      child.kill('SIGKILL');
      await child.exited;
    }
    const claimed = await store.claimPendingObligations();
    expect(claimed.map((row) => [row.obligationId, row.needsRecoveredMarker])).toEqual([
      [neverSent, false],
      [inFlight, true],
    ]);
    // Now ours: beginning the redelivery counts nothing beyond the claim's attempt.
    for (const row of claimed)
      expect(await store.beginObligationAttempt(row.obligationId)).toBe(true);
    expect(store.getObligation(neverSent)?.attempts).toBe(1);
    expect(store.getObligation(inFlight)?.attempts).toBe(2);
  }, 60_000);

  it('a reply sent before a SIGKILL but not completed is resent only with the recovered marker; none is lost', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const sinkPath = path.join(home.path, 'sent.log');
    const args = [databasePath, String(OBLIGATIONS), sinkPath];
    let midSendKills = 0;
    for (let round = 0; round < MAX_KILLS && midSendKills < WANTED_MID_SEND_KILLS; round += 1) {
      const sentBefore = readSink(sinkPath).length;
      const child = await runFixture('send-obligations.ts', args, 'ready');
      // Kill at a random point of the sending, whatever the machine's speed.
      const killAfter = sentBefore + 1 + Math.floor(Math.random() * 20);
      while (readSink(sinkPath).length < killAfter && child.child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      child.kill('SIGKILL');
      await child.exited;
      const last = readSink(sinkPath).at(-1);
      if (!last) continue;
      const database = new BetterSqlite3(databasePath, { readonly: true });
      try {
        const state = database
          .prepare('SELECT state FROM delivery_obligations WHERE obligation_id = ?')
          .pluck()
          .get(last.id);
        if (state !== 'delivered') midSendKills += 1; // sent, not yet on record as delivered
      } finally {
        database.close();
      }
    }
    // The case under test happened: some kill landed after a send and before its completion.
    expect(midSendKills).toBeGreaterThan(0);
    const last = await runFixture('send-obligations.ts', args, 'ready');
    const exit = await last.exited;
    expect(exit.code, last.stderr()).toBe(0);

    const sends = new Map<string, boolean[]>();
    for (const line of readSink(sinkPath)) {
      sends.set(line.id, [...(sends.get(line.id) ?? []), line.marked]);
    }
    const expected = Array.from({ length: OBLIGATIONS }, (_, index) =>
      obligationIdFor({
        sessionKey: `peer-${index % 5}`,
        messageRef: `message-${index}`,
        content: `reply ${index}`,
      }),
    );
    const lost = expected.filter((id) => !sends.has(id));
    const unmarkedResends = [...sends.values()].filter((marks) => marks.slice(1).includes(false));
    // Sends beyond each obligation's first. Counted per send, not per obligation: two kills can
    // land on the same reply (killed mid-send, then again mid-resend), each costing one resend.
    const resends = [...sends.values()].reduce((sum, marks) => sum + marks.length - 1, 0);
    expect({ lost: lost.length, unmarkedResends: unmarkedResends.length }).toEqual({
      lost: 0,
      unmarkedResends: 0,
    });
    expect(resends).toBeGreaterThanOrEqual(midSendKills); // each such kill cost one flagged resend
    const database = new BetterSqlite3(databasePath, { readonly: true });
    try {
      const states = database
        .prepare('SELECT state, count(*) AS n FROM delivery_obligations GROUP BY state')
        .all();
      expect(states).toEqual([{ state: 'delivered', n: OBLIGATIONS }]);
    } finally {
      database.close();
    }
  }, 180_000);
});
