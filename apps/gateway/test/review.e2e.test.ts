import path from 'node:path';
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { modelConfig, type StartedGateway, startGateway, writeConfig } from './gateway-process.js';

type Message = { role: string; content: string };
const COMPLETION_PREFIX = '[ASYNC DELEGATION BATCH COMPLETE';

function _allText(request: RecordedRequest): string {
  const messages = (request.body as { messages?: { content?: unknown }[] }).messages ?? [];
  return messages
    .map((message) => (typeof message.content === 'string' ? message.content : ''))
    .join('\n');
}

function systemText(request: RecordedRequest): string {
  const messages =
    (request.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  return messages
    .filter((message) => message.role === 'system')
    .map((message) => (typeof message.content === 'string' ? message.content : ''))
    .join('\n');
}

/** The reviewer: its system prompt carries the review briefing. */
function isReviewer(request: RecordedRequest): boolean {
  return systemText(request).includes('independent senior reviewer');
}

function lastUser(request: RecordedRequest): string {
  const messages =
    (request.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const user = messages.filter((message) => message.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : '';
}

/**
 * The model: a primary agent that did some work, a reviewer, and the primary reading the review.
 * `firstReviewerDelayMs` slows only the reviewer's first model call (a run a stop lands in).
 */
function reviewModel(options: { reviewerDelayMs?: number; firstReviewerDelayMs?: number } = {}) {
  let reviewerCalls = 0;
  const reply = (request: RecordedRequest): ScriptedReply => {
    if (isReviewer(request)) {
      reviewerCalls += 1;
      return {
        text: 'REVIEW: looks good, but the retry has no jitter.',
        delayMs:
          reviewerCalls === 1 && options.firstReviewerDelayMs !== undefined
            ? options.firstReviewerDelayMs
            : (options.reviewerDelayMs ?? 0),
      };
    }
    const prompt = lastUser(request);
    if (prompt.startsWith(COMPLETION_PREFIX))
      return { text: 'Noted the review: I will add jitter.' };
    if (prompt.includes('slow')) return { text: 'a slow answer', delayMs: 30_000 };
    return { text: 'Done: upload() retries 3 times with backoff.' };
  };
  return startModelServer({ script: Array.from({ length: 40 }, () => reply) });
}

async function messages(gateway: StartedGateway, id: string): Promise<Message[]> {
  const page = await gateway.json<{ data: Message[] }>(`/api/sessions/${id}/messages?limit=500`);
  return page.body.data;
}

async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function chat(gateway: StartedGateway, id: string, message: string) {
  return gateway.json<{ message: { content: string } }>(`/api/sessions/${id}/chat`, {
    method: 'POST',
    json: { message },
  });
}

describe('/review', () => {
  it('refuses with nothing to review, then dispatches and the review comes back as a new turn', async () => {
    const model = await reviewModel();
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const gateway = await startGateway({ home });
    const session = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = session.body.session.id;

    const empty = await chat(gateway, id, '/review');
    expect(empty.body.message.content).toBe('Nothing to review yet — send a message first.');

    await chat(gateway, id, 'Add retries to the uploader.');
    const note = await chat(gateway, id, '/review focus on error handling');
    expect(note.status).toBe(200);
    expect(note.body.message.content).toBe('Review started. Results will return here.');

    const after = await until(
      () => messages(gateway, id),
      (rows) =>
        rows.some(
          (row) =>
            row.role === 'assistant' && row.content === 'Noted the review: I will add jitter.',
        ),
    );
    const injected = after.filter((row) => row.content.startsWith(COMPLETION_PREFIX));
    expect(injected).toHaveLength(1);
    expect(injected[0]?.content).toContain('REVIEW: looks good, but the retry has no jitter.');
    expect(after.map((row) => row.role)).toEqual(['user', 'assistant', 'user', 'assistant']);

    // The reviewer got the goal and the conversation; the command itself never reached a model.
    const reviewer = model.modelRequests.find(isReviewer);
    expect(lastUser(reviewer as RecordedRequest)).toContain('Review: focus on error handling');
    expect(systemText(reviewer as RecordedRequest)).toContain('[PRIMARY AGENT]');
    expect(systemText(reviewer as RecordedRequest)).toContain('Add retries to the uploader.');
    expect(model.modelRequests.some((request) => lastUser(request).startsWith('/review'))).toBe(
      false,
    );

    const status = (
      await gateway.json<{ queue_depths: Record<string, number> }>('/health/detailed')
    ).body;
    expect(status.queue_depths.delegation_completions).toBe(0);
  });

  it('delivers a review that finished before a SIGKILL after the restart, exactly once', async () => {
    const model = await reviewModel({ reviewerDelayMs: 1500 });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl));
    const first = await startGateway({ home });
    const session = await first.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = session.body.session.id;
    await chat(first, id, 'Add retries to the uploader.');
    expect((await chat(first, id, '/review')).body.message.content).toBe(
      'Review started. Results will return here.',
    );
    // Keep the session busy so the finished review has to wait for its turn.
    void chat(first, id, 'a slow question').catch(() => {});
    const ledger = new Database(path.join(home, 'state.db'), { readonly: true });
    try {
      await until(
        async () =>
          ledger
            .prepare('SELECT state, delivery_state AS delivery FROM async_delegations')
            .all() as { state: string; delivery: string }[],
        (rows) => rows.length === 1 && rows[0]?.state !== 'running',
      );
    } finally {
      ledger.close();
    }
    expect(
      (await messages(first, id)).some((row) => row.content.startsWith(COMPLETION_PREFIX)),
    ).toBe(false);
    first.process.kill('SIGKILL');
    await first.process.exited;

    const second = await startGateway({ home });
    const after = await until(
      () => messages(second, id),
      (rows) => rows.some((row) => row.content === 'Noted the review: I will add jitter.'),
    );
    const injected = after.filter((row) => row.content.startsWith(COMPLETION_PREFIX));
    expect(injected).toHaveLength(1);
    expect(injected[0]?.content).toContain('REVIEW: looks good');
    // A third start finds nothing owed: no duplicate.
    second.process.kill('SIGTERM');
    expect((await second.process.exited).code).toBe(0);
    const third = await startGateway({ home });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(
      (await messages(third, id)).filter((row) => row.content.startsWith(COMPLETION_PREFIX)),
    ).toHaveLength(1);
  });

  it.each([
    ['killed (SIGKILL)', 'SIGKILL', null],
    ['stopped (SIGTERM)', 'SIGTERM', 0],
    ['restarted (SIGUSR1)', 'SIGUSR1', 75],
  ] as const)(
    'runs a review the gateway was %s under again after the restart: its findings come back once',
    async (_name, signal, exitCode) => {
      const model = await reviewModel({ firstReviewerDelayMs: 60_000 });
      const home = (await tempHome()).path;
      await writeConfig(home, modelConfig(model.baseUrl));
      const first = await startGateway({ home });
      const session = await first.json<{ session: { id: string } }>('/api/sessions', {
        method: 'POST',
        json: {},
      });
      const id = session.body.session.id;
      await chat(first, id, 'Add retries to the uploader.');
      expect((await chat(first, id, '/review focus on errors')).body.message.content).toBe(
        'Review started. Results will return here.',
      );
      // The reviewer is mid-way through its first model call when the gateway goes.
      await until(
        async () => model.modelRequests.filter(isReviewer).length,
        (count) => count === 1,
      );
      first.process.kill(signal);
      const exit = await first.process.exited;
      if (exitCode !== null) expect(exit.code).toBe(exitCode);
      // Nothing reached the chat meanwhile: no interrupted or unknown result.
      const ledger = new Database(path.join(home, 'state.db'), { readonly: true });
      try {
        expect(ledger.prepare('SELECT state FROM async_delegations').all()).toEqual([
          { state: 'running' },
        ]);
      } finally {
        ledger.close();
      }

      const second = await startGateway({ home });
      onTestFinished(() => second.process.stop().then(() => {}));
      const after = await until(
        () => messages(second, id),
        (rows) => rows.some((row) => row.content === 'Noted the review: I will add jitter.'),
      );
      const injected = after.filter((row) => row.content.startsWith(COMPLETION_PREFIX));
      expect(injected).toHaveLength(1);
      expect(injected[0]?.content).toContain('REVIEW: looks good, but the retry has no jitter.');
      expect(injected[0]?.content).toContain('Resumed after a restart');
      expect(injected[0]?.content).not.toContain('outcome=unknown');
      expect(model.modelRequests.filter(isReviewer)).toHaveLength(2);
      expect(after.map((row) => row.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    },
  );
});
