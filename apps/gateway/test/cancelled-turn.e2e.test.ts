import { describe, expect, it } from 'vitest';
import { readEvents, type StartedGateway, startConfiguredGateway } from './gateway-process.js';

interface CancelledEvent {
  status: string;
  message_id: number | null;
  partial_response?: string;
  final_response?: string;
  messages: { id: number; role: string; content: string; finish_reason?: string | null }[];
  usage: { api_calls: number };
}

/** A reply slow enough to stop mid-stream: 300 characters, 2 every 40 ms. */
const SLOW_REPLY = { text: 'z'.repeat(300), chunkSize: 2, chunkDelayMs: 40 };

function configuredGateway() {
  return startConfiguredGateway([SLOW_REPLY]);
}

async function untilStreaming(model: { modelRequests: readonly unknown[] }) {
  while (model.modelRequests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  // Some of the reply is out before the stop.
  await new Promise((resolve) => setTimeout(resolve, 300));
}

/** The stored interrupted reply, read back through the API. */
async function storedReply(gateway: StartedGateway, sessionId: string) {
  const listed = await gateway.json<{ data: CancelledEvent['messages'] }>(
    `/api/sessions/${sessionId}/messages`,
  );
  return listed.body.data.filter((message) => message.role === 'assistant');
}

function expectCarriesTheInterruptedRow(
  cancelled: CancelledEvent,
  stored: CancelledEvent['messages'],
) {
  expect(stored).toHaveLength(1);
  const row = stored[0];
  expect(row?.finish_reason).toBe('interrupted');
  expect(cancelled.status).toBe('cancelled');
  expect(cancelled.message_id).toBe(row?.id);
  expect(cancelled.messages.map((message) => [message.id, message.role])).toEqual([
    [row?.id, 'assistant'],
  ]);
  expect(cancelled.partial_response).toBe(row?.content);
  expect(cancelled.partial_response?.length).toBeGreaterThan(0);
  expect(cancelled.partial_response?.length).toBeLessThan(300);
  expect(cancelled).not.toHaveProperty('final_response');
  // The stopped model call was made: it counts.
  expect(cancelled.usage.api_calls).toBe(1);
}

describe('a cancelled turn', () => {
  it('names the interrupted reply it stored on the session chat stream’s run.cancelled', async () => {
    const { model, gateway } = await configuredGateway();
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = made.body.session.id;
    const streamed = gateway
      .request(`/api/sessions/${id}/chat/stream`, { method: 'POST', json: { message: 'go on' } })
      .then(readEvents);
    await untilStreaming(model);
    const stop = await gateway.json<{ message: { content: string } }>(`/api/sessions/${id}/chat`, {
      method: 'POST',
      json: { message: '/stop' },
    });
    expect(stop.body.message.content).toBe('Stopping the running turn.');
    const events = await streamed;
    const cancelled = events.find((event) => event.event === 'run.cancelled');
    expectCarriesTheInterruptedRow(
      JSON.parse(cancelled?.data ?? '{}') as CancelledEvent,
      await storedReply(gateway, id),
    );
  });

  it('names the interrupted reply and uses the chat stream’s partial_response on /v1/runs’ run.cancelled', async () => {
    const { model, gateway } = await configuredGateway();
    const run = await gateway.json<{ id: string; session_id: string }>('/v1/runs', {
      method: 'POST',
      json: { input: 'go on' },
    });
    await untilStreaming(model);
    const stop = await gateway.json<{ stopping: boolean }>(`/v1/runs/${run.body.id}/stop`, {
      method: 'POST',
    });
    expect(stop.body.stopping).toBe(true);
    const events = await readEvents(await gateway.request(`/v1/runs/${run.body.id}/events`));
    const cancelled = events.find((event) => event.event === 'run.cancelled');
    expectCarriesTheInterruptedRow(
      JSON.parse(cancelled?.data ?? '{}') as CancelledEvent,
      await storedReply(gateway, run.body.session_id),
    );
  });
});
