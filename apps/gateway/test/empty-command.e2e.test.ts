import { describe, expect, it } from 'vitest';
import { readEvents, startConfiguredGateway } from './gateway-process.js';

describe('a bare slash', () => {
  it('answers a bare / as an empty command on the chat routes and never calls the model', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: {},
    });
    const id = made.body.session.id;
    const expected = 'Empty command. Send /help for the commands available here.';

    const chat = await gateway.json<{ message: { content: string }; messages: unknown[] }>(
      `/api/sessions/${id}/chat`,
      { method: 'POST', json: { message: '/' } },
    );
    expect(chat.status).toBe(200);
    expect(chat.body.message.content).toBe(expected);
    expect(chat.body.messages).toEqual([]);

    const stream = await readEvents(
      await gateway.request(`/api/sessions/${id}/chat/stream`, {
        method: 'POST',
        json: { message: '  /  ' },
      }),
    );
    const completed = stream.find((event) => event.event === 'run.completed');
    expect(JSON.parse(completed?.data ?? '{}')).toMatchObject({ final_response: expected });

    const completion = await gateway.json<{ choices: { message: { content: string } }[] }>(
      '/v1/chat/completions',
      { method: 'POST', json: { messages: [{ role: 'user', content: '/' }] } },
    );
    expect(completion.body.choices[0]?.message.content).toBe(expected);

    expect(model.modelRequests).toHaveLength(0);
    const messages = await gateway.json<{ data: unknown[] }>(`/api/sessions/${id}/messages`);
    expect(messages.body.data).toEqual([]);
  });
});
