import path from 'node:path';
import { resolveConfig } from '@hermes/config';
import { DELEGATION_OWNER_EXITED_MESSAGE, openSessionStore } from '@hermes/session-store';
import {
  type RecordedRequest,
  type ScriptedReply,
  seededRandom,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  COMPLETION_DISPLAY_KIND,
  completionHeader,
  createAgent,
  createCompletionDelivery,
  createDelegationRegistry,
  ownsCompletion,
} from '../src/index.js';
import { isChildRequest, messagesOf } from './delegation-fixtures.js';
import { spawnFixture, waitFor } from './fixtures.js';

function lastMessage(request: RecordedRequest): { role: string; content: unknown } | undefined {
  return messagesOf(request).at(-1);
}

interface KillPoint {
  /**
   * `mid_child_turn`: while the child waits for its model; `after_checkpoint`: after the terminal
   * result is checkpointed, anywhere up to the end of delivery; `before_delivery`: after the result
   * is recorded and published while no surface has delivered it yet; `before_ack`: after the injected
   * message is stored and before the ledger is told (the owner's ack is slowed to widen that window).
   */
  readonly phase: 'mid_child_turn' | 'after_checkpoint' | 'before_delivery' | 'before_ack';
  readonly delayMs: number;
}

describe('crash safety of the async rail (real processes, SIGKILL)', () => {
  it('loses no completion and delivers none twice over 24 random kill points in four crash windows', async () => {
    const seed = Number(process.env.HERMES_CRASH_SEED ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    let childDelayMs = 0;
    let childArrived: (() => void) | undefined;
    const reply = async (request: RecordedRequest): Promise<ScriptedReply> => {
      if (isChildRequest(request)) {
        childArrived?.();
        return { text: 'CHILD RESULT: 7 files.', delayMs: childDelayMs };
      }
      const last = lastMessage(request);
      if (last?.role === 'user' && last.content === 'start the job')
        return {
          toolCalls: [
            {
              name: 'delegate_task',
              arguments: { tasks: [{ goal: 'Count the files', context: 'in src' }] },
            },
          ],
        };
      if (last?.role === 'tool') return { text: 'Delegated; the result will come back.' };
      // The injected completion (or a continuation after one): answer it, slowly enough that
      // some kills land while this turn runs.
      return { text: 'Acknowledged the delegation result.', delayMs: 120 };
    };
    const model = await startModelServer({});
    onTestFinished(() => model.close());
    const refill = () => {
      while (model.remaining < 50) model.push(reply);
    };

    const points: KillPoint[] = [];
    for (let index = 0; index < 6; index += 1)
      points.push(
        { phase: 'mid_child_turn', delayMs: Math.floor(random() * 600) },
        { phase: 'after_checkpoint', delayMs: Math.floor(random() * 40) },
        { phase: 'before_delivery', delayMs: Math.floor(random() * 300) },
        { phase: 'before_ack', delayMs: Math.floor(random() * 200) },
      );

    const outcomes: {
      point: KillPoint;
      delegationId: string;
      copies: number;
      state: string;
      delivery: string;
      sawCheckpoint: boolean;
      storedBeforeKill: boolean;
      ackedBeforeKill: boolean;
    }[] = [];
    for (const point of points) {
      refill();
      childDelayMs = point.phase === 'mid_child_turn' ? 1500 : 0;
      const home = (await tempHome('hermes-crash-')).path;
      const setupStore = await openSessionStore({ path: path.join(home, 'state.db') });
      const session = await setupStore.createSession({ source: 'cli' });
      await setupStore.close();
      const arrived = new Promise<void>((resolve) => {
        childArrived = resolve;
      });
      const owner = await spawnFixture(
        'crash-delegation.ts',
        [
          home,
          model.baseUrl,
          session.id,
          home,
          ...(point.phase === 'before_ack' ? ['slow-ack'] : []),
          ...(point.phase === 'before_delivery' ? ['no-delivery'] : []),
        ],
        { readyLine: /DISPATCHED (\S+)/, readyTimeoutMs: 30_000 },
      );
      const delegationId = (await owner.waitForLine(/DISPATCHED (\S+)/))[1] as string;
      if (point.phase === 'mid_child_turn') await arrived;
      else if (point.phase === 'after_checkpoint') await owner.waitForLine(/CHECKPOINTED /, 15_000);
      else if (point.phase === 'before_delivery') await owner.waitForLine(/PUBLISHED /, 15_000);
      else await owner.waitForLine(/STORED/, 15_000);
      await new Promise((resolve) => setTimeout(resolve, point.delayMs));
      owner.kill('SIGKILL');
      await owner.exited;
      const sawCheckpoint = owner.stdout().includes('CHECKPOINTED');
      const storedBeforeKill = owner.stdout().includes('STORED');
      const ackedBeforeKill = owner.stdout().includes('ACKED');

      // A new process (this one) starts over the same home: recovers and delivers.
      const store = await openSessionStore({ path: path.join(home, 'state.db') });
      const config = resolveConfig({ model: { base_url: model.baseUrl, default: 'test-model' } });
      const registry = createDelegationRegistry({ store, home });
      const agent = createAgent({
        config,
        store,
        home,
        cwd: home,
        secret: () => undefined,
        delegations: registry,
      });
      const delivery = createCompletionDelivery({
        registry,
        owner: (event) =>
          ownsCompletion(event, { sessionId: session.id }, store) ? session.id : undefined,
        runTurn: (options) => agent.runTurn(options),
        pollMs: 0,
        retryMs: 50,
      });
      await delivery.start();
      await waitFor(
        () => store.getDelegation(delegationId)?.deliveryState === 'delivered',
        15_000,
      ).catch(() => {});
      await delivery.stop();
      await registry.close();
      const row = store.getDelegation(delegationId);
      const copies = store
        .getLineageIds(session.id)
        .flatMap((id) => store.getMessages(id))
        .filter(
          (message) =>
            message.displayKind === COMPLETION_DISPLAY_KIND &&
            message.content?.startsWith(completionHeader(delegationId)),
        );
      outcomes.push({
        point,
        delegationId,
        copies: copies.length,
        state: row?.state ?? 'missing',
        delivery: row?.deliveryState ?? 'missing',
        sawCheckpoint,
        storedBeforeKill,
        ackedBeforeKill,
      });
      // What was delivered matches where the kill landed.
      const content = copies[0]?.content ?? '';
      if (!sawCheckpoint)
        expect(content, `seed ${seed}`).toContain(DELEGATION_OWNER_EXITED_MESSAGE);
      else expect(content, `seed ${seed}`).toContain('CHILD RESULT: 7 files.');
      await store.close();
    }
    const summary = JSON.stringify({ seed, outcomes }, null, 1);
    // Where each kill landed, for the log (and for reproducing with HERMES_CRASH_SEED).
    console.log(
      `seed ${seed}\n` +
        outcomes
          .map(
            (o) =>
              `${o.point.phase} +${o.point.delayMs}ms ckpt=${o.sawCheckpoint} stored=${o.storedBeforeKill} acked=${o.ackedBeforeKill} state=${o.state} copies=${o.copies}`,
          )
          .join('\n'),
    );
    expect(outcomes.length).toBeGreaterThanOrEqual(20);
    expect(
      outcomes.filter((outcome) => outcome.copies === 0),
      summary,
    ).toEqual([]);
    expect(
      outcomes.filter((outcome) => outcome.copies > 1),
      summary,
    ).toEqual([]);
    expect(
      outcomes.every((outcome) => outcome.delivery === 'delivered'),
      summary,
    ).toBe(true);
    // Every crash window was hit: mid child turn (→ unknown), after the checkpoint with nothing
    // injected yet (→ the stored result is delivered), and after the injected message was stored
    // but before the ledger knew (→ found and acknowledged, never injected again).
    expect(
      outcomes.some((outcome) => outcome.state === 'unknown'),
      summary,
    ).toBe(true);
    expect(
      outcomes.some((outcome) => outcome.sawCheckpoint && !outcome.storedBeforeKill),
      summary,
    ).toBe(true);
    expect(
      outcomes.some((outcome) => outcome.storedBeforeKill && !outcome.ackedBeforeKill),
      summary,
    ).toBe(true);
  }, 300_000);
});
