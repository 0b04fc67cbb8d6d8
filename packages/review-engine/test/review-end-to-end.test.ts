import { randomBytes } from 'node:crypto';
import { parseSlashInput } from '@hermes/commands';
import { type ModelServer, startModelServer } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DelegationRail,
  type DelegationRequest,
  describeReviewError,
  formatDispatchNote,
  REVIEW_GOAL,
  startReview,
} from '../src/index.js';

/** The completion a background reviewer leaves for the owning conversation (reference §4.12). */
interface CompletionEvent {
  readonly type: 'async_delegation';
  readonly delegation_id: string;
  readonly session_key: string | undefined;
  readonly origin_ui_session_id: string | undefined;
  readonly goal: string;
  readonly status: string;
  readonly is_batch: true;
  readonly results: readonly { task_index: number; status: string; summary: string }[];
}

/**
 * A rail written for this test, standing in for @hermes/agent's: it records what it is given,
 * returns at once, runs the reviewer as a real model call (goal as the first user message, the
 * briefing in the system prompt) against the testkit server, and queues the completion.
 */
class RecordingRail implements DelegationRail {
  readonly requests: DelegationRequest[] = [];
  readonly completionQueue: CompletionEvent[] = [];
  readonly running: Promise<void>[] = [];

  constructor(
    private readonly defaultBaseUrl: string,
    private readonly canDelegate = true,
  ) {}

  async dispatch(request: DelegationRequest) {
    this.requests.push(request);
    if (!this.canDelegate)
      return { error: "delegate_task is not available in the parent agent's resolved toolset." };
    const delegationId = `deleg_${randomBytes(4).toString('hex')}`;
    this.running.push(this.runChild(delegationId, request));
    return { delegationId, mode: 'background' as const };
  }

  private async runChild(delegationId: string, request: DelegationRequest): Promise<void> {
    const baseUrl = request.credentialsCfg?.baseUrl || this.defaultBaseUrl;
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: request.credentialsCfg?.model || 'test-model',
        messages: [
          {
            role: 'system',
            content: `You are a focused subagent.\n\nCONTEXT:\n${request.context}`,
          },
          { role: 'user', content: request.goal },
        ],
      }),
    });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    this.completionQueue.push({
      type: 'async_delegation',
      delegation_id: delegationId,
      session_key: request.origin.sessionKey,
      origin_ui_session_id: request.origin.originUiSessionId,
      goal: request.goal,
      status: 'completed',
      is_batch: true,
      results: [
        { task_index: 0, status: 'completed', summary: body.choices[0]?.message.content ?? '' },
      ],
    });
  }
}

const servers: ModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
async function modelServer(options: Parameters<typeof startModelServer>[0]): Promise<ModelServer> {
  const server = await startModelServer(options);
  servers.push(server);
  return server;
}

const conversation = [
  { role: 'system', content: 'You are Hermes.' },
  { role: 'user', content: 'Store the session token in a cookie for the login route.' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'edit_file', arguments: '{"path":"src/login.ts"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'edited' },
  { role: 'assistant', content: 'Done: src/login.ts sets `session=<token>` with Path=/.' },
];

function reviewArgs(line: string): string {
  const input = parseSlashInput(line);
  if (input.kind !== 'command' || input.command.name !== 'review')
    throw new Error(`not /review: ${line}`);
  return input.args;
}

describe('/review end to end over a rail', () => {
  it('answers at once, and the reviewer’s completion lands on the queue for the originating session', async () => {
    const server = await modelServer({ script: [{ text: 'REVIEW: looks good', delayMs: 300 }] });
    const rail = new RecordingRail(server.baseUrl);
    const review = await startReview({
      messages: conversation,
      instructions: reviewArgs('/review focus on security'),
      rail,
      origin: { sessionKey: 'agent:main:test:dm:1' },
    });
    expect(formatDispatchNote(review)).toBe('Review started. Results will return here.');
    expect(rail.completionQueue).toHaveLength(0);

    await Promise.all(rail.running);
    expect(rail.completionQueue).toHaveLength(1);
    const [completion] = rail.completionQueue;
    expect(completion).toMatchObject({
      type: 'async_delegation',
      delegation_id: review.delegationId,
      session_key: 'agent:main:test:dm:1',
      results: [{ summary: 'REVIEW: looks good' }],
    });

    expect(server.modelRequests).toHaveLength(1);
    const body = server.modelRequests[0]?.body as { messages: { role: string; content: string }[] };
    const messages = body.messages;
    expect(messages[1]?.content.startsWith('Review: ')).toBe(true);
    expect(messages[1]?.content).toBe('Review: focus on security');
    for (const part of [
      REVIEW_GOAL,
      '[USER]',
      'Store the session token',
      '[PRIMARY AGENT]',
      'focus on security',
    ])
      expect(messages[0]?.content).toContain(part);
  });

  it('runs the reviewer on the auxiliary.review route while the primary agent keeps its own', async () => {
    const primary = await modelServer({ script: [] });
    const reviewer = await modelServer({ script: [{ text: 'REVIEW: pinned route' }] });
    const rail = new RecordingRail(primary.baseUrl);
    const config = {
      model: { default: 'primary-model', base_url: primary.baseUrl },
      auxiliary: {
        review: { provider: 'custom', model: 'reviewer-model', base_url: reviewer.baseUrl },
      },
    };
    await startReview({ messages: conversation, rail, config });
    await Promise.all(rail.running);
    expect(primary.modelRequests).toHaveLength(0);
    expect(reviewer.modelRequests).toHaveLength(1);
    expect((reviewer.modelRequests[0]?.body as { model?: string } | undefined)?.model).toBe(
      'reviewer-model',
    );
    expect(rail.completionQueue[0]?.results[0]?.summary).toBe('REVIEW: pinned route');
  });

  it('refuses when the primary agent cannot delegate, and no reviewer runs', async () => {
    const server = await modelServer({ script: [{ text: 'should never be asked' }] });
    const rail = new RecordingRail(server.baseUrl, false);
    const failure = await startReview({ messages: conversation, rail, instructions: 'x' }).catch(
      (error: unknown) => error,
    );
    expect(describeReviewError(failure)).toMatch(/not available/);
    expect(rail.running).toHaveLength(0);
    expect(server.modelRequests).toHaveLength(0);
  });
});
