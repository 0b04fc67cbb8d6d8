import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type DelegationTaskRecord,
  eventFromLedgerRow,
  formatAsyncDelegation,
} from '../src/index.js';
import { isChildRequest } from './delegation-fixtures.js';
import { spawnFixture } from './fixtures.js';

const FINDINGS = 'FINDINGS: the retry loop has no jitter.';

describe('resumable delegation across real processes (SIGKILL)', () => {
  it('a review killed mid-run is run again by exactly one of two processes recovering the same home', async () => {
    let reviewRuns = 0;
    let firstRunArrived = () => {};
    const arrived = new Promise<void>((resolve) => {
      firstRunArrived = resolve;
    });
    const reply = (request: RecordedRequest): ScriptedReply => {
      if (!isChildRequest(request))
        return { error: { status: 500, message: 'no parent turn here' } };
      reviewRuns += 1;
      if (reviewRuns === 1) {
        firstRunArrived();
        return { text: 'never', delayMs: 30_000 };
      }
      return { text: FINDINGS };
    };
    const model = await startModelServer({ script: Array.from({ length: 20 }, () => reply) });
    onTestFinished(() => model.close());
    const home = (await tempHome('hermes-resume-')).path;
    const setup = await openSessionStore({ path: path.join(home, 'state.db') });
    const session = await setup.createSession({ source: 'cli' });
    await setup.close();

    const owner = await spawnFixture(
      'resume-review.ts',
      [home, model.baseUrl, session.id, 'dispatch'],
      {
        readyLine: /DISPATCHED (\S+)/,
        readyTimeoutMs: 30_000,
      },
    );
    const delegationId = (await owner.waitForLine(/DISPATCHED (\S+)/))[1] as string;
    await arrived;
    owner.kill('SIGKILL');
    await owner.exited;

    const recoverers = await Promise.all(
      [0, 1].map(() =>
        spawnFixture('resume-review.ts', [home, model.baseUrl, session.id, 'recover'], {
          readyLine: /RESUMED /,
          readyTimeoutMs: 30_000,
        }),
      ),
    );
    const exits = await Promise.all(recoverers.map((process) => process.exited));
    expect(exits.map((exit) => exit.code)).toEqual([0, 0]);
    const resumed = recoverers.flatMap(
      (process) => JSON.parse(/RESUMED (.*)/.exec(process.stdout())?.[1] ?? '[]') as string[],
    );
    expect(resumed).toEqual([delegationId]);
    const published = recoverers.flatMap((process) =>
      process.stdout().includes(`PUBLISHED ${delegationId}`) ? [process.pid] : [],
    );
    expect(published).toHaveLength(1);
    expect(reviewRuns).toBe(2);

    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    onTestFinished(() => store.close());
    const row = store.getDelegation(delegationId);
    expect(row).toMatchObject({ state: 'completed', deliveryState: 'pending' });
    // Taken over from a process that died: the run spends the crash budget.
    expect(JSON.parse(row?.taskJson ?? '{}') as DelegationTaskRecord).toMatchObject({
      resume_count: 1,
      crash_resumes: 1,
    });
    const text = formatAsyncDelegation(eventFromLedgerRow(row as NonNullable<typeof row>));
    expect(text).toContain(FINDINGS);
    expect(text).toContain('Resumed after a restart');
    expect(text).not.toContain('outcome=unknown');
  });
});
