import { describe, expect, it, onTestFinished } from 'vitest';
import { type StartedGateway, startConfiguredGateway } from './gateway-process.js';
import { holdTurnInAnotherProcess } from './turn-holder.js';

interface ChatBody {
  message: { content: string };
  error?: { code: string };
}

async function say(gateway: StartedGateway, id: string, message: string) {
  return gateway.json<ChatBody>(`/api/sessions/${id}/chat`, { method: 'POST', json: { message } });
}

async function titleOf(gateway: StartedGateway, id: string) {
  const got = await gateway.json<{ session: { title: string | null } }>(`/api/sessions/${id}`);
  return got.body.session.title;
}

describe('a turn running in another process', () => {
  it('refuses delete, fork, /review and /title and shows in /status and /stop while another process holds the turn; a dead holder blocks nothing', async () => {
    const { model, gateway } = await startConfiguredGateway([]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: { title: 'Original' },
    });
    const id = made.body.session.id;
    const holder = await holdTurnInAnotherProcess(gateway.home, id);
    onTestFinished(async () => {
      await holder.process.stop();
    });

    const chat = await say(gateway, id, 'hello');
    expect(chat.status).toBe(409);
    expect(chat.body.error?.code).toBe('session_busy');

    const deleted = await gateway.json<{ error?: { code: string } }>(`/api/sessions/${id}`, {
      method: 'DELETE',
    });
    expect(deleted.status).toBe(409);
    expect(deleted.body.error?.code).toBe('session_busy');

    const fork = await gateway.json<{ error?: { code: string } }>(`/api/sessions/${id}/fork`, {
      method: 'POST',
      json: {},
    });
    expect(fork.status).toBe(409);
    expect(fork.body.error?.code).toBe('session_busy');

    expect((await say(gateway, id, '/review')).body.message.content).toBe(
      'Agent is running — wait for the turn to finish, then /review.',
    );
    expect((await say(gateway, id, '/title Renamed mid-turn')).body.message.content).toBe(
      'Agent is running — wait for the turn to finish, then /title.',
    );
    expect(await titleOf(gateway, id)).toBe('Original');
    expect((await say(gateway, id, '/status')).body.message.content).toContain(
      'A turn is running in another process.',
    );
    expect((await say(gateway, id, '/stop')).body.message.content).toContain(
      'The running turn belongs to another process',
    );

    // A crashed terminal leaves its lease behind; a dead holder does not keep the session busy.
    holder.process.kill('SIGKILL');
    await holder.process.exited;
    expect((await say(gateway, id, '/status')).body.message.content).toContain('Idle.');
    expect((await say(gateway, id, '/title Renamed after')).body.message.content).toBe(
      'Title set: Renamed after',
    );
    expect(await titleOf(gateway, id)).toBe('Renamed after');
    const forked = await gateway.json(`/api/sessions/${id}/fork`, { method: 'POST', json: {} });
    expect(forked.status).toBe(201);
    const gone = await gateway.json<{ deleted: boolean }>(`/api/sessions/${id}`, {
      method: 'DELETE',
    });
    expect(gone.status).toBe(200);
    expect(gone.body.deleted).toBe(true);
    expect(model.modelRequests).toHaveLength(0);
  });

  it('refuses /title while this gateway runs the session’s turn but still answers /status', async () => {
    const { model, gateway } = await startConfiguredGateway([
      { text: 'slow answer', delayMs: 1500 },
    ]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: { title: 'Before' },
    });
    const id = made.body.session.id;
    const first = say(gateway, id, 'take your time');
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await say(gateway, id, '/title During')).body.message.content).toBe(
      'Agent is running — wait for the turn to finish, then /title.',
    );
    expect((await say(gateway, id, '/status')).body.message.content).toContain(
      'A turn is running.',
    );
    expect((await first).status).toBe(200);
    expect(await titleOf(gateway, id)).toBe('Before');
    expect((await say(gateway, id, '/title After')).body.message.content).toBe('Title set: After');
  });
});
