import { describe, expect, it, onTestFinished } from 'vitest';
import { type StartedGateway, startConfiguredGateway } from './gateway-process.js';
import { holdTurnInAnotherProcess, startTurnWhileLocked } from './turn-holder.js';

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

  it('refuses a DELETE (409, nothing deleted) when another process starts a turn after the route checked and before its delete commits', async () => {
    const { gateway } = await startConfiguredGateway([]);
    const made = await gateway.json<{ session: { id: string } }>('/api/sessions', {
      method: 'POST',
      json: { title: 'Raced' },
    });
    const id = made.body.session.id;
    // The other process holds the write lock: the route finds no turn running and its delete
    // waits for the lock, which is released with a turn lease committed on the session.
    const racer = await startTurnWhileLocked(gateway.home, id, 2000);
    onTestFinished(async () => {
      await racer.stop();
    });
    const deleted = await gateway.json<{ error?: { code: string; message: string } }>(
      `/api/sessions/${id}`,
      { method: 'DELETE' },
    );
    await racer.waitForLine(/^holding /m);
    expect(deleted.status).toBe(409);
    expect(deleted.body.error).toMatchObject({
      code: 'session_busy',
      message: `Session ${id} is running a turn; stop it before deleting the session`,
    });
    expect((await gateway.json(`/api/sessions/${id}`)).status).toBe(200);

    racer.kill('SIGKILL');
    await racer.exited;
    const gone = await gateway.json<{ deleted: boolean }>(`/api/sessions/${id}`, {
      method: 'DELETE',
    });
    expect(gone.status).toBe(200);
    expect(gone.body.deleted).toBe(true);
  });

  it('refuses a PATCH of title, archived or end_reason while the turn runs, here or in another process, and applies nothing of it; pin, hidden and unread still apply', async () => {
    const { model, gateway } = await startConfiguredGateway([
      { text: 'slow answer', delayMs: 1500 },
    ]);
    const session = async (title: string) =>
      (
        await gateway.json<{ session: { id: string } }>('/api/sessions', {
          method: 'POST',
          json: { title },
        })
      ).body.session.id;
    const patch = (id: string, json: unknown) =>
      gateway.json<{
        error?: { code: string; type: string; param: string | null; message: string };
        session?: Record<string, unknown>;
      }>(`/api/sessions/${id}`, { method: 'PATCH', json });
    const refusedChanges: [unknown, string][] = [
      [{ title: 'Renamed mid-turn' }, 'title'],
      [{ title: null }, 'title'],
      [{ archived: true }, 'archived'],
      [{ archived: false }, 'archived'],
      [{ end_reason: 'user_close' }, 'end_reason'],
      // Refused whole: the pin that came with it is not applied either.
      [{ pinned: true, title: 'Pinned and renamed' }, 'title'],
    ];
    const expectRefusals = async (id: string) => {
      for (const [json, param] of refusedChanges) {
        const refused = await patch(id, json);
        expect(refused.status, JSON.stringify(json)).toBe(409);
        expect(refused.body.error, JSON.stringify(json)).toMatchObject({
          code: 'session_busy',
          type: 'conflict_error',
          param,
        });
        expect(refused.body.error?.message).toContain(`Session ${id} is running a turn`);
      }
    };
    const unchanged = { title: 'Original', archived: false, ended_at: null, pinned: false };

    // A turn held by another process (a terminal chat).
    const elsewhere = await session('Original');
    const holder = await holdTurnInAnotherProcess(gateway.home, elsewhere);
    onTestFinished(async () => {
      await holder.process.stop();
    });
    await expectRefusals(elsewhere);
    expect((await gateway.json(`/api/sessions/${elsewhere}`)).body.session).toMatchObject(
      unchanged,
    );
    const flags = await patch(elsewhere, { pinned: true, hidden: false, unread: true });
    expect(flags.status).toBe(200);
    expect(flags.body.session).toMatchObject({ ...unchanged, pinned: true });
    holder.process.kill('SIGKILL');
    await holder.process.exited;
    const renamed = await patch(elsewhere, { title: 'Renamed after', archived: true });
    expect(renamed.status).toBe(200);
    expect(renamed.body.session).toMatchObject({ title: 'Renamed after', archived: true });

    // A turn of this gateway.
    const here = await session('Original');
    const chat = say(gateway, here, 'take your time');
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await expectRefusals(here);
    expect((await chat).status).toBe(200);
    expect((await gateway.json(`/api/sessions/${here}`)).body.session).toMatchObject(unchanged);
    const after = await patch(here, { title: 'After', end_reason: 'user_close' });
    expect(after.status).toBe(200);
    expect(after.body.session).toMatchObject({ title: 'After', end_reason: 'user_close' });
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
