import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DELEGATION_OWNER_EXITED_MESSAGE, type SessionStore } from '@hermes/session-store';
import { describe, expect, it } from 'vitest';
import { deadProcess, delegationFixture, railAgent } from '../../test/delegation-fixtures.js';
import { waitFor } from '../../test/fixtures.js';
import { placeholderResult } from './child-result.js';
import { createCompletionDelivery } from './completion-delivery.js';
import type { DelegationTaskRecord } from './completion-event.js';
import { ownsCompletion } from './completion-ownership.js';
import { COMPLETION_DISPLAY_KIND, DELIVERY_CLAIM_DIR } from './delegation-limits.js';
import { completionHeader, formatAsyncDelegation } from './format-async-delegation.js';
import { writePartialResults, writeTerminalCheckpoint } from './ledger-files.js';

function taskRecord(goals: string[], originSessionId: string): DelegationTaskRecord {
  return {
    goal: goals.length === 1 ? (goals[0] as string) : `${goals.length} parallel subagents`,
    goals,
    context: 'ctx',
    toolsets: ['file'],
    role: 'leaf',
    model: 'test-model',
    origin_session_id: originSessionId,
    task_indexes: goals.map((_, index) => index),
    subagent_ids: goals.map((_, index) => `sa-${index}-deadbeef`),
  };
}

function injected(store: SessionStore, sessionId: string, delegationId: string) {
  return store
    .getMessages(sessionId)
    .filter(
      (row) =>
        row.displayKind === COMPLETION_DISPLAY_KIND &&
        row.content?.startsWith(completionHeader(delegationId)),
    );
}

async function deliverFor(
  fixture: Awaited<ReturnType<typeof delegationFixture>>,
  sessionId: string,
) {
  const agent = railAgent(fixture);
  const delivery = createCompletionDelivery({
    registry: fixture.registry,
    owner: (event) => (ownsCompletion(event, { sessionId }, fixture.store) ? sessionId : undefined),
    runTurn: (options) => agent.runTurn(options),
    pollMs: 0,
    retryMs: 50,
  });
  const report = await delivery.start();
  return { delivery, report };
}

describe('restart recovery', () => {
  it('turns a dead owner’s running delegation into an unknown outcome that is still delivered', async () => {
    const fixture = await delegationFixture();
    const session = await fixture.agent().createSession();
    const owner = await deadProcess();
    await fixture.store.recordDelegationStart({
      delegationId: 'deleg_dead0001',
      sessionKey: session.id,
      parentSessionId: session.id,
      task: taskRecord(['Audit the logging'], session.id),
      owner,
    });
    fixture.model.push({ text: 'Noted: the audit result is unknown; I will re-run it.' });
    const { delivery, report } = await deliverFor(fixture, session.id);
    expect(report).toMatchObject({ orphaned: ['deleg_dead0001'], restored: ['deleg_dead0001'] });
    await waitFor(
      () => fixture.store.getDelegation('deleg_dead0001')?.deliveryState === 'delivered',
    );
    await delivery.stop();
    const [row] = injected(fixture.store, session.id, 'deleg_dead0001');
    expect(row?.content).toContain('TASK 1/1: Audit the logging');
    expect(row?.content).toContain('outcome=unknown, status=unknown');
    expect(row?.content).toContain(DELEGATION_OWNER_EXITED_MESSAGE);
  });

  it('records the result a dead owner checkpointed before its ledger write, and replays partial results', async () => {
    const fixture = await delegationFixture();
    const session = await fixture.agent().createSession();
    const owner = await deadProcess();
    const finished = {
      ...placeholderResult({
        taskIndex: 0,
        subagentId: 'sa-0-deadbeef',
        goal: 'Count the tests',
        model: 'test-model',
        status: 'completed',
        error: '',
      }),
      status: 'completed' as const,
      summary: '42 tests',
      exit_reason: 'completed' as const,
    };
    for (const [id, goals] of [
      ['deleg_ckpt0001', ['Count the tests']],
      ['deleg_part0001', ['Count the tests', 'Count the docs']],
    ] as const)
      await fixture.store.recordDelegationStart({
        delegationId: id,
        sessionKey: session.id,
        parentSessionId: session.id,
        task: taskRecord([...goals], session.id),
        owner,
      });
    await writeTerminalCheckpoint(fixture.home, {
      delegation_id: 'deleg_ckpt0001',
      owner,
      status: 'completed',
      result: { status: 'completed', results: [finished], error: null, total_duration_seconds: 3 },
      error: null,
    });
    await writePartialResults(fixture.home, 'deleg_part0001', [finished]);
    fixture.model.push({ text: 'ack one' }, { text: 'ack two' });
    const { delivery, report } = await deliverFor(fixture, session.id);
    expect(report.checkpointed.sort()).toEqual(['deleg_ckpt0001', 'deleg_part0001']);
    expect(report.orphaned).toEqual([]);
    await waitFor(
      () =>
        fixture.store.getDelegation('deleg_ckpt0001')?.deliveryState === 'delivered' &&
        fixture.store.getDelegation('deleg_part0001')?.deliveryState === 'delivered',
    );
    await delivery.stop();
    expect(fixture.store.getDelegation('deleg_ckpt0001')?.state).toBe('completed');
    expect(injected(fixture.store, session.id, 'deleg_ckpt0001')[0]?.content).toContain('42 tests');
    const partial = injected(fixture.store, session.id, 'deleg_part0001')[0]?.content ?? '';
    expect(fixture.store.getDelegation('deleg_part0001')?.state).toBe('unknown');
    expect(partial).toContain('TASK 1/2: Count the tests  (outcome=unverified, status=completed');
    expect(partial).toContain('42 tests');
    expect(partial).toContain('TASK 2/2: Count the docs  (outcome=unknown, status=unknown');
  });

  it('releases a claim held by a dead process at once instead of waiting out the 300 s lease', async () => {
    const fixture = await delegationFixture();
    const session = await fixture.agent().createSession();
    await fixture.store.recordDelegationStart({
      delegationId: 'deleg_claim001',
      sessionKey: session.id,
      parentSessionId: session.id,
      task: taskRecord(['Check the links'], session.id),
    });
    await fixture.store.recordDelegationTerminal({
      delegationId: 'deleg_claim001',
      status: 'completed',
      result: { status: 'completed', results: [], error: null },
    });
    // A delivering process wrote its marker, claimed the row, and died.
    const claimer = await deadProcess();
    await mkdir(path.join(fixture.home, DELIVERY_CLAIM_DIR), { recursive: true });
    await writeFile(
      path.join(fixture.home, DELIVERY_CLAIM_DIR, `deleg_claim001~${claimer.pid}.json`),
      JSON.stringify({
        pid: claimer.pid,
        startTicks: claimer.startTicks,
        writtenAt: Date.now() / 1000,
      }),
    );
    expect(await fixture.store.claimCompletionDelivery('deleg_claim001')).not.toBeNull();
    fixture.model.push({ text: 'ack' });
    const { delivery, report } = await deliverFor(fixture, session.id);
    expect(report.releasedClaims).toEqual(['deleg_claim001']);
    await waitFor(
      () => fixture.store.getDelegation('deleg_claim001')?.deliveryState === 'delivered',
    );
    await delivery.stop();
    expect(injected(fixture.store, session.id, 'deleg_claim001')).toHaveLength(1);
  });

  it('acknowledges a completion whose message was stored before a crash instead of injecting it twice', async () => {
    const fixture = await delegationFixture();
    const session = await fixture.agent().createSession();
    await fixture.store.recordDelegationStart({
      delegationId: 'deleg_twice001',
      sessionKey: session.id,
      parentSessionId: session.id,
      task: taskRecord(['Tidy the imports'], session.id),
    });
    await fixture.store.recordDelegationTerminal({
      delegationId: 'deleg_twice001',
      status: 'completed',
      result: { status: 'completed', results: [], error: null },
    });
    // The previous process stored the injected message, then died before settling the ledger.
    const row = fixture.store.getDelegation('deleg_twice001');
    const { eventFromLedgerRow } = await import('./completion-event.js');
    const text = formatAsyncDelegation(eventFromLedgerRow(row as never));
    await fixture.store.appendMessage(session.id, {
      role: 'user',
      content: text,
      displayKind: COMPLETION_DISPLAY_KIND,
    });
    fixture.model.push({ text: 'Answering the delegation result now.' });
    const { delivery } = await deliverFor(fixture, session.id);
    await waitFor(
      () => fixture.store.getDelegation('deleg_twice001')?.deliveryState === 'delivered',
    );
    await waitFor(() => fixture.store.getMessages(session.id).length === 2);
    await delivery.stop();
    expect(injected(fixture.store, session.id, 'deleg_twice001')).toHaveLength(1);
    // The agent had never answered it: it does now, once.
    expect(fixture.store.getMessages(session.id).map((message) => message.role)).toEqual([
      'user',
      'assistant',
    ]);
  });
});
